"""``torch.signal.windows``: window functions computed as PyTorch's are, from a ``linspace``
of the requested dtype through ordinary ops (so ``requires_grad=True`` gives a result with
a ``grad_fn``, as in PyTorch)."""
import math
from collections.abc import Iterable

import hookgrad as _t

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _start(name, M, dtype, layout):
    """The window's dtype (the default one unless given), checked."""
    dtype = _t.get_default_dtype() if dtype is None else dtype
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not _t.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_t.float32, _t.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _trivial(M, dtype, device, requires_grad):
    """The window of length 0 or 1."""
    if M == 0:
        return _t.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    return _t.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)


def _linspace(start, end, M, dtype, device, requires_grad):
    return _t.linspace(start, end, M, dtype=dtype, device=device, requires_grad=requires_grad)


def _span(M, sym):
    return M if not sym and M > 1 else M - 1


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=_t.strided,
                device=None, requires_grad=False):
    """Computes a window with an exponential waveform (the Poisson window):
    ``w_n = exp(-|n - c| / tau)`` with ``c`` the ``center`` (``(M - 1) / 2`` when
    symmetric, ``M / 2`` otherwise)."""
    dtype = _start("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    center = _span(M, sym) / 2.0 if center is None else center
    k = _linspace(-center / tau, (-center + (M - 1)) / tau, M, dtype, device, requires_grad)
    return _t.exp(-_t.abs(k))


def cosine(M, *, sym=True, dtype=None, layout=_t.strided, device=None, requires_grad=False):
    """Computes a window with a simple cosine waveform (the sine window):
    ``w_n = sin(pi (n + 0.5) / M)``."""
    dtype = _start("cosine", M, dtype, layout)
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    k = _linspace(0.5 * constant, (0.5 + (M - 1)) * constant, M, dtype, device, requires_grad)
    return _t.sin(k)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=_t.strided, device=None,
             requires_grad=False):
    """Computes a window with a gaussian waveform: ``w_n = exp(-(n / (2 std))^2)``."""
    dtype = _start("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    start, constant = -_span(M, sym) / 2.0, 1 / (std * math.sqrt(2))
    k = _linspace(start * constant, (start + (M - 1)) * constant, M, dtype, device,
                  requires_grad)
    return _t.exp(-k ** 2)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=_t.strided, device=None,
           requires_grad=False):
    """Computes the Kaiser window: ``w_n = I_0(beta sqrt(1 - ((n - N/2) / (N/2))^2)) /
    I_0(beta)`` with ``N = M - 1`` when symmetric, else ``M``."""
    dtype = _start("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    beta = _t.tensor(beta, dtype=dtype, device=device)
    constant = 2.0 * beta / (M if not sym else M - 1)
    end = _t.minimum(beta, -beta + (M - 1) * constant)
    k = _linspace(-beta, end, M, dtype, device, requires_grad)
    return _t.i0(_t.sqrt(beta * beta - _t.pow(k, 2))) / _t.i0(beta)


def general_cosine(M, *, a, sym=True, dtype=None, layout=_t.strided, device=None,
                   requires_grad=False):
    """Computes the general cosine window:
    ``w_n = sum_i (-1)^i a_i cos(2 pi i n / (M - 1))``."""
    dtype = _start("general_cosine", M, dtype, layout)
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    constant = 2 * math.pi / (M if not sym else M - 1)
    k = _linspace(0, (M - 1) * constant, M, dtype, device, requires_grad)
    a_i = _t.tensor([(-1) ** i * w for i, w in enumerate(a)], device=device, dtype=dtype,
                    requires_grad=requires_grad)
    i = _t.arange(a_i.shape[0], dtype=a_i.dtype, device=a_i.device,
                  requires_grad=a_i.requires_grad)
    return (a_i.unsqueeze(-1) * _t.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=_t.strided, device=None,
                    requires_grad=False):
    """Computes the general Hamming window:
    ``w_n = alpha - (1 - alpha) cos(2 pi n / (M - 1))``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=_t.strided, device=None, requires_grad=False):
    """Computes the Hamming window: ``w_n = 0.54 - 0.46 cos(2 pi n / (M - 1))``."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=_t.strided, device=None, requires_grad=False):
    """Computes the Hann window: ``w_n = sin^2(pi n / (M - 1))``."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=_t.strided, device=None, requires_grad=False):
    """Computes the Blackman window:
    ``w_n = 0.42 - 0.5 cos(2 pi n / (M - 1)) + 0.08 cos(4 pi n / (M - 1))``."""
    dtype = _start("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=_t.strided, device=None, requires_grad=False):
    """Computes the Bartlett window: ``w_n = 1 - |2n / (M - 1) - 1|``."""
    dtype = _start("bartlett", M, dtype, layout)
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    constant = 2 / (M if not sym else M - 1)
    k = _linspace(-1, -1 + (M - 1) * constant, M, dtype, device, requires_grad)
    return 1 - _t.abs(k)


def nuttall(M, *, sym=True, dtype=None, layout=_t.strided, device=None, requires_grad=False):
    """Computes the minimum 4-term Blackman-Harris window according to Nuttall:
    ``w_n = 1 - 0.36358 cos(z_n) + 0.48917 cos(2 z_n) - 0.13659 cos(3 z_n) +
    0.01064 cos(4 z_n)`` with ``z_n = 2 pi n / M``."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


from ... import _missing  # noqa: E402

__getattr__ = _missing.module_getattr(__name__)
