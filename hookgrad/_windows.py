"""Window functions for spectral analysis: ``hann_window``, ``hamming_window``,
``blackman_window``, ``bartlett_window``, ``kaiser_window`` (computed on the host, in
float64, then cast, as PyTorch computes them in the requested dtype)."""
import numpy as np

from . import _dtype
from ._factory import _finish

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]


def _window(name, n, periodic, dtype, device, requires_grad, make):
    d = _dtype.get_default_dtype() if dtype is None else _dtype.as_dtype(dtype)
    if not d.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: "
                           f"{_dtype.TORCH_KINDS.get(d.name, d.name)}")
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={n}")
    if n <= 1:
        values = np.ones(n)
    else:
        m = n + 1 if periodic else n  # a periodic window is the symmetric one of n + 1, cut
        values = make(m)[:n]
    arr = _dtype.from_host(np.asarray(values, _dtype.to_jax(d)))
    return _finish(arr, requires_grad, device)


def _cosines(*coefs):
    def make(m):
        k = np.arange(m) * (2 * np.pi / (m - 1))
        return sum(c * np.cos(i * k) for i, c in enumerate(coefs))
    return make


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    """``hann_window(window_length, periodic=True)``: ``0.5 - 0.5 cos(2 pi k / (N - 1))``."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _cosines(0.5, -0.5))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    """``hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46)``:
    ``alpha - beta cos(2 pi k / (N - 1))``."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosines(alpha, -beta))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """``blackman_window(window_length, periodic=True)``: ``0.42 - 0.5 cos(2 pi k / (N - 1))
    + 0.08 cos(4 pi k / (N - 1))``."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _cosines(0.42, -0.5, 0.08))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """``bartlett_window(window_length, periodic=True)``: the triangular window
    ``1 - |2k / (N - 1) - 1|``."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda m: 1 - np.abs(2 * np.arange(m) / (m - 1) - 1))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    """``kaiser_window(window_length, periodic=True, beta=12.0)``:
    ``I0(beta sqrt(1 - (2k / (N - 1) - 1) ** 2)) / I0(beta)``."""
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   lambda m: np.i0(beta * np.sqrt(1 - (2 * np.arange(m) / (m - 1) - 1) ** 2))
                   / np.i0(beta))
