"""Fractional max pooling against PyTorch: with the same ``_random_samples`` the outputs,
indices and gradients are PyTorch's; drawn samples give windows of the right law."""
import numpy as np
import pytest

import hookgrad

from ..differential import py, raises_as_torch, same_as_torch

_rng = np.random.default_rng(5)
X2 = _rng.standard_normal((2, 3, 9, 11)).astype(np.float32)
X3 = _rng.standard_normal((2, 2, 7, 9, 8)).astype(np.float32)
U2 = _rng.random((2, 3, 2)).astype(np.float32)
U3 = _rng.random((2, 2, 3)).astype(np.float32)


def _pool(L, x, u, call):
    x = L.tensor(x, requires_grad=True)
    out, idx = call(L, x, L.tensor(u))
    out.backward(L.tensor(np.arange(out.numel(), dtype=np.float32).reshape(tuple(out.shape))))
    return py([out, idx, out.grad_fn.name(), x.grad])


CASES = [
    ("2d_size", X2, U2, lambda L, x, u: L.nn.functional.fractional_max_pool2d(
        x, (2, 3), output_size=(4, 5), return_indices=True, _random_samples=u)),
    ("2d_ratio_square", X2, U2, lambda L, x, u: L.nn.functional.fractional_max_pool2d_with_indices(
        x, 3, output_ratio=(0.5, 0.5), _random_samples=u)),
    ("2d_one_output", X2, U2, lambda L, x, u: L.nn.functional.fractional_max_pool2d(
        x, 2, 1, None, True, u)),
    ("2d_unbatched_module", X2[0], U2[:1], lambda L, x, u: L.nn.FractionalMaxPool2d(
        2, (5, 6), return_indices=True, _random_samples=u)(x)),
    ("3d_size", X3, U3, lambda L, x, u: L.nn.functional.fractional_max_pool3d(
        x, (2, 3, 2), output_size=(4, 5, 3), return_indices=True, _random_samples=u)),
    ("3d_module_ratio", X3, U3, lambda L, x, u: L.nn.FractionalMaxPool3d(
        2, output_ratio=(0.5, 0.6, 0.7), return_indices=True, _random_samples=u)(x)),
    ("3d_unbatched", X3[1], U3, lambda L, x, u: L.nn.functional.fractional_max_pool3d_with_indices(
        x, 2, 3, _random_samples=u)),
]


@pytest.mark.parametrize("name,x,u,call", CASES, ids=[c[0] for c in CASES])
def test_matches_torch_with_the_same_samples(name, x, u, call):
    same_as_torch(lambda L: _pool(L, x, u, call))


def test_without_indices_returns_the_output():
    def call(L):
        return py(L.nn.functional.fractional_max_pool2d(L.tensor(X2), 2, (4, 4),
                                                        _random_samples=L.tensor(U2)))
    same_as_torch(call)


def test_drawn_samples_pool_windows_of_the_kernel():
    hookgrad.manual_seed(0)
    x = hookgrad.tensor(X2)
    out, idx = hookgrad.nn.functional.fractional_max_pool2d(x, 2, output_size=(4, 5),
                                                            return_indices=True)
    assert tuple(out.shape) == (2, 3, 4, 5)
    flat = X2.reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.numpy().reshape(2, 3, -1), 2),
                                  out.numpy().reshape(2, 3, -1))
    rows, cols = np.divmod(idx.numpy(), 11)
    assert (np.diff(rows, axis=2) >= 0).all() and (np.diff(cols, axis=3) >= 0).all()
    pool = hookgrad.nn.FractionalMaxPool2d(3, output_ratio=0.5)
    assert tuple(pool(x).shape) == (2, 3, 4, 5) and pool._random_samples is None


@pytest.mark.parametrize("call,exc,match", [
    (lambda L: L.nn.functional.fractional_max_pool2d(L.tensor(X2), 2), ValueError,
     "fractional_max_pool2d requires specifying either an output_size or an output_ratio"),
    (lambda L: L.nn.functional.fractional_max_pool2d(L.tensor(X2), 3, (8, 8),
                                                     _random_samples=L.tensor(U2)),
     RuntimeError, "fractional_max_pool2d\\(\\): pool height 3 too large relative to input "
                   "height 9"),
    (lambda L: L.nn.functional.fractional_max_pool3d(L.tensor(X3), 3, (6, 4, 4),
                                                     _random_samples=L.tensor(U3)),
     RuntimeError, "fractional_max_pool3d_out\\(\\): pool time 3 too large relative to input "
                   "time 7"),
    (lambda L: L.nn.functional.fractional_max_pool2d(L.tensor(X2), 2, 3,
                                                     _random_samples=L.tensor(U3)),
     RuntimeError, "Expect _random_samples.size\\(1\\) equals to input channel size."),
    (lambda L: L.nn.functional.fractional_max_pool2d(L.tensor(X2), 2, 3,
                                                     _random_samples=L.tensor(U2).double()),
     RuntimeError, "Expect _random_samples to have the same dtype as input"),
    (lambda L: L.nn.functional.fractional_max_pool2d(L.tensor(X2), 2, output_ratio=0.5),
     TypeError, "object of type 'float' has no len()"),
    (lambda L: L.nn.FractionalMaxPool2d(2), ValueError,
     "FractionalMaxPool2d requires specifying either an output size, or a pooling ratio"),
    (lambda L: L.nn.FractionalMaxPool2d(2, 3, 0.5), ValueError,
     "only one of output_size and output_ratio may be specified"),
    (lambda L: L.nn.FractionalMaxPool3d(2, output_ratio=1.5), ValueError,
     "output_ratio must be between 0 and 1"),
    (lambda L: L.nn.FractionalMaxPool3d(0, 2), ValueError,
     "kernel_size must be greater than 0, but got 0"),
])
def test_errors_as_torch(call, exc, match):
    raises_as_torch(call, exc, match)
