"""``Tensor.index(positions, dims)`` with integer indices: PyTorch's selects (functorch.dim's
first-class ``Dim`` objects are not hookgrad's)."""
import pytest

import hookgrad
from tests.differential import py, raises, same_as_torch


@pytest.mark.parametrize("positions, dims", [(0, 1), ((0, 2), (1, 3)), (1, 2), ((2,), (1,)),
                                             (-1, 0)])
def test_index_selects_like_pytorch(positions, dims):
    def f(L):
        x = L.arange(24.).reshape(2, 3, 4).requires_grad_()
        y = x.index(positions, dims)
        (y * y).sum().backward()
        return [py(y), y.grad_fn.name(), py(x.grad)]
    assert same_as_torch(f)[1] == "SelectBackward0"


def test_index_errors():
    def f(L):
        x = L.arange(24.).reshape(2, 3, 4)
        return [raises(x.index, 0, 5), raises(x.index, (0, 1), (1,))]
    got = same_as_torch(f)
    assert got[1]["message"] == "dims (2) and indices (1) must have the same length"


def test_first_class_dims_are_not_implemented():
    with pytest.raises(NotImplementedError, match="hookgrad does not implement functorch.dim"):
        hookgrad.ones(2, 3).index(0, object())
