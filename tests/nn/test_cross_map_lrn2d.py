"""``nn.CrossMapLRN2d`` against PyTorch's: outputs and the gradients of its Function (which
are not the derivative of its forward), its node, check and repr."""
import numpy as np
import pytest

from ..differential import py, raises_as_torch, same_as_torch

_rng = np.random.default_rng(9)
X = _rng.standard_normal((2, 7, 3, 4)).astype(np.float32)


def _run(L, size, x=X):
    m = L.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.6, k=1.5)
    t = L.tensor(x, requires_grad=True)
    y = m(t)
    y.backward(L.tensor(np.cos(np.arange(x.size, dtype=np.float32)).reshape(x.shape)))
    return py([y, t.grad, y.grad_fn.name(), repr(m)])


@pytest.mark.parametrize("size", [2, 3, 5, 6])
def test_matches_torch(size):
    same_as_torch(lambda L: _run(L, size), tol=1e-4)


def test_more_window_than_channels():
    same_as_torch(lambda L: _run(L, 5, X[:, :2]), tol=1e-4)


def test_needs_4d_input():
    raises_as_torch(lambda L: L.nn.CrossMapLRN2d(3)(L.ones(2, 3, 4)), ValueError,
                    "CrossMapLRN2d: Expected input to be 4D, got 3D instead.")
