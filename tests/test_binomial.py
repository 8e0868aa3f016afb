"""torch.binomial: PyTorch's shapes, dtypes, node, errors and certain outcomes; the draws
themselves come from hookgrad's key (docs/differences.md), checked by their moments."""
import numpy as np
import pytest

import hookgrad as hg

from tests._pytorch_error import pytorch_error
from tests.differential import py, same_as_torch


def test_certain_outcomes_node_and_missing_derivative():
    def fn(L):
        c = L.tensor([[10.0, 5.0, 0.0]], requires_grad=True)
        b = L.binomial(c, L.tensor([1.0, 0.0, 0.5]))
        try:
            b.sum().backward()
            err = None
        except RuntimeError as e:
            err = str(e)
        return [py(b), list(b.shape), str(b.dtype)[-7:], b.requires_grad, err]
    got = same_as_torch(fn)
    assert got[0] == [[10.0, 0.0, 0.0]] and got[-1] == "derivative for aten::binomial is not " \
                                                      "implemented"


@pytest.mark.parametrize("call", [
    lambda L: L.binomial(L.tensor([10, 5]), L.tensor([0.5, 0.2])),
    lambda L: L.binomial(L.tensor([10.0, 5.0]), L.tensor([0.5, 0.2], dtype=L.float16)),
])
def test_bad_input_gets_pytorchs_error(call):
    pytorch_error(call)


def test_draws_have_the_binomial_moments_and_follow_the_generator():
    g = hg.Generator().manual_seed(5)
    n, p = hg.full((20000,), 12.0), hg.full((20000,), 0.25)
    draws = np.asarray(hg.binomial(n, p, generator=g)._data)
    assert abs(draws.mean() - 3.0) < 0.05 and abs(draws.var() - 2.25) < 0.1
    assert set(np.unique(draws)) <= set(range(13))
    again = hg.binomial(n, p, generator=hg.Generator().manual_seed(5))
    assert np.array_equal(np.asarray(again._data), draws)
