"""index_reduce beyond its op rows: integer means, ties, slices no index names, errors."""
import pytest

from tests._pytorch_error import pytorch_error
from tests.differential import py, same_as_torch

pytestmark = pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")


def test_values_and_gradients_as_pytorchs():
    def fn(L):
        out = []
        for reduce in ("prod", "mean", "amax", "amin"):
            x = L.tensor([4.0, 5.0, 0.0, 2.0], requires_grad=True)
            s = L.tensor([4.0, 0.0, 7.0, 4.0], requires_grad=True)
            y = x.index_reduce(0, L.tensor([0, 2, 2, 0]), s, reduce)
            (y * L.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
            out.append([py(y), py(x.grad), py(s.grad), y.grad_fn.name()])
        return out
    got = same_as_torch(fn)
    assert got[2][1][0] == pytest.approx(1 / 3)  # amax: a three-way tie shares the gradient


def test_integer_mean_and_untouched_slices():
    got = same_as_torch(lambda L: [
        py(L.ones(3, dtype=L.int64).index_reduce(0, L.tensor([0, 0, 2]), L.tensor([4, 2, 7]),
                                                 "mean")),
        py(L.arange(6.0).reshape(2, 3).index_reduce(1, L.tensor([1]), L.ones(2, 1), "prod",
                                                    include_self=False))])
    assert got[0] == [2, 1, 4]


@pytest.mark.parametrize("call", [
    lambda L, x: x.index_reduce(0, L.tensor([0]), L.ones(1), "sum"),
    lambda L, x: x.index_reduce_(0, L.tensor([0.0]), L.ones(1), "prod"),
    lambda L, x: x.index_reduce_(0, L.tensor([0, 1]), L.ones(3), "prod"),
    lambda L, x: x.index_reduce(0, L.tensor([[0]]), L.ones(1), "prod"),
    lambda L, x: x.index_reduce(0, L.tensor([0]), L.ones(1, dtype=L.int32), "prod"),
])
def test_bad_input_gets_pytorchs_error(call):
    pytorch_error(lambda L: call(L, L.ones(3)))
