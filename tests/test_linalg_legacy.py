"""The deprecated LU and triangular solvers beyond their op rows: PyTorch's warnings (at the
caller's line), errors, flags and result types."""
import warnings

import pytest

import hookgrad as hg

from tests._pytorch_error import pytorch_error
from tests.differential import py, same_as_torch


def test_each_warns_that_it_is_deprecated_at_the_callers_line():
    a = hg.eye(3) * 2
    for call, name in [(lambda: hg.lu(a), "torch.lu"),
                       (lambda: hg.lu_solve(a, *hg.linalg.lu_factor(a)), "torch.lu_solve"),
                       (lambda: hg.triangular_solve(a, a), "torch.triangular_solve"),
                       (lambda: hg.chain_matmul(a, a), "torch.chain_matmul")]:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            call()
        assert [str(x.message).split(" is deprecated")[0] for x in w] == [name]
        assert w[0].category is UserWarning and w[0].filename == __file__


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("call", [
    lambda L: L.chain_matmul(), lambda L: L.chain_matmul(L.ones(3)),
    lambda L: L.lu_unpack(L.ones(3, 3), L.ones(3)),
    lambda L: L.triangular_solve(L.ones(2, 2), L.ones(3, 3)),
    lambda L: L.triangular_solve(L.ones(3, 2), L.ones(2, 3)),
    lambda L: L.triangular_solve(L.ones(3), L.ones(3, 3)),
], ids=["chain_none", "chain_vector", "unpack_pivots_dtype", "tri_sizes", "tri_square",
        "tri_vector"])
def test_bad_input_gets_pytorchs_error(call):
    pytorch_error(call)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_results_and_flags():
    def fn(L):
        a = L.tensor([[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [2.0, 0.0, 3.0]])
        lu, piv, info = L.lu(a, get_infos=True)
        unpacked = L.lu_unpack(lu, piv, unpack_pivots=False)
        only_p = L.lu_unpack(lu, piv, unpack_data=False)
        sol = L.triangular_solve(L.ones(3, 1), a)
        return [type(sol).__name__, py(sol.solution), py(sol.cloned_coefficient), py(info),
                list(unpacked.P.shape), py(unpacked.L), list(only_p.L.shape), py(only_p.P),
                type(L.lu(a)).__name__, py(piv), py(L.lu(L.zeros(2, 2), get_infos=True).info)]
    got = same_as_torch(fn)
    assert got[0] == "triangular_solve" and got[-3] == "tuple" and got[-1] == 1
