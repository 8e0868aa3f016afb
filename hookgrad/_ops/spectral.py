"""Discrete Fourier transforms (``torch.fft``), built as PyTorch builds them: three recorded
transforms (``FftC2CBackward0``, ``FftR2CBackward0``, ``FftC2RBackward0``, each over
several dimensions at once) behind a resize of the signal (a slice or a zero padding) and,
for the Hermitian transforms, a conjugation. JAX's ``jnp.fft`` computes them and
differentiates them.
"""
from __future__ import annotations

import functools

import jax.numpy as jnp

from .. import _dtype
from .._tensor import Tensor
from .dispatch import apply
from .parser_errors import not_a, number
from .registry import FUNCTIONS, defop, with_out
from .shape import wrap_dim
from .views import laid_out
from . import complex_numbers

_NORMS = ("backward", "ortho", "forward")


# PyTorch's ``normalization`` codes (what its nodes save): the scaling this transform
# applies, none, 1/sqrt(n) or 1/n; JAX's names say it by direction
_FORWARD_NORMS, _INVERSE_NORMS = ("backward", "ortho", "forward"), ("forward", "ortho", "backward")


def _c2c(x, dim, normalization, forward):
    fn, names = (jnp.fft.fftn, _FORWARD_NORMS) if forward else (jnp.fft.ifftn, _INVERSE_NORMS)
    return fn(x, axes=dim, norm=names[normalization])


def _r2c(x, dim, normalization, onesided):
    norm = _FORWARD_NORMS[normalization]
    if onesided:
        return jnp.fft.rfftn(x, axes=dim, norm=norm)
    return jnp.fft.fftn(x.astype(jnp.result_type(x, jnp.complex64)), axes=dim, norm=norm)


def _c2r(x, dim, normalization, last_dim_size):
    s = [x.shape[d] for d in dim[:-1]] + [last_dim_size]
    return jnp.fft.irfftn(x, s=s, axes=dim, norm=_INVERSE_NORMS[normalization])


FFT_C2C = defop("fft_c2c", _c2c, "FftC2CBackward0", (),
                names="self -> dim normalization forward")
FFT_R2C = defop("fft_r2c", _r2c, "FftR2CBackward0",
                names="self -> dim normalization onesided self")
FFT_C2R = defop("fft_c2r", _c2r, "FftC2RBackward0", (), names="self -> dim normalization")


def c2c(x, dims, norm, forward):
    """The recorded complex transform over ``dims``, ``norm`` as JAX's for its direction."""
    names = _FORWARD_NORMS if forward else _INVERSE_NORMS
    return apply(FFT_C2C, (x,), {"dim": tuple(dims), "normalization": names.index(norm),
                                 "forward": forward})


def r2c(x, dims, norm, onesided):
    return apply(FFT_R2C, (x,), {"dim": tuple(dims),
                                 "normalization": _FORWARD_NORMS.index(norm),
                                 "onesided": bool(onesided)})


def c2r(x, dims, norm, last):
    return apply(FFT_C2R, (x,), {"dim": tuple(dims),
                                 "normalization": _INVERSE_NORMS.index(norm),
                                 "last_dim_size": last})


def _norm(norm):
    """PyTorch's ``norm`` (None: ``"backward"``), checked; JAX reads the same names."""
    if norm is None:
        norm = "backward"
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _swap(norm):
    """The Hermitian transforms are the real ones run the other way: swap the scaling."""
    return {"backward": "forward", "forward": "backward"}.get(norm, norm)


def _complex_dtype(t):
    d = t.dtype
    if d.is_complex:
        return d
    if not d.is_floating_point:
        d = _dtype.get_default_dtype()
    if d.name in ("float16", "bfloat16"):
        _dtype.to_jax(_dtype.complex32)  # raises: JAX has no complex32
    return _dtype.complex128 if d is _dtype.float64 else _dtype.complex64


def _as_real(t, fname):
    if t.dtype.is_complex:
        raise RuntimeError(f"{fname} expects a real input tensor, but got "
                           f"{_dtype.torch_kind(t.dtype.np)}")
    if not t.dtype.is_floating_point:
        return t.to(_dtype.get_default_dtype())
    if t.dtype.name in ("float16", "bfloat16"):
        _dtype.to_jax(_dtype.complex32)
    return t


def _as_complex(t):
    d = _complex_dtype(t)
    return t if t.dtype is d else t.to(d)


def _dims_and_sizes(x, s, dim, fname=None):
    """The transformed dims (wrapped) and their sizes (None: keep), from PyTorch's
    ``s``/``dim`` arguments (``n``/``dim`` for the 1-D transforms); the real and Hermitian
    transforms (``fname``) need at least one dim."""
    if dim is not None and not isinstance(dim, (list, tuple)):
        dim = (dim,)
    if s is not None and not isinstance(s, (list, tuple)):
        s = (s,)
    if dim is not None:
        dims = [wrap_dim(d, x.ndim) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same "
                               "length")
    elif s is not None:
        if len(s) > x.ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{x.ndim} dimensions.")
        dims = list(range(x.ndim - len(s), x.ndim))
    else:
        dims = list(range(x.ndim))
    if fname is not None and not dims:
        raise RuntimeError(f"{fname} must transform at least one axis")
    sizes = list(s) if s is not None else [None] * len(dims)
    for n in sizes:
        if n is not None and n != -1 and n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return dims, [None if n == -1 else n for n in sizes]


def _resize(x, dims, sizes):
    """``x`` sliced or zero-padded to ``sizes`` along ``dims`` (PyTorch's
    ``SliceBackward0`` / ``ConstantPadNdBackward0``)."""
    pad = [0] * (2 * x.ndim)
    for d, n in zip(dims, sizes):
        if n is None or n == x.shape[d]:
            continue
        if n < x.shape[d]:
            x = x.narrow(d, 0, n)
        else:
            pad[2 * (x.ndim - 1 - d) + 1] = n - x.shape[d]
    if any(pad):
        while pad and pad[-1] == 0 and pad[-2] == 0:
            pad = pad[:-2]
        x = FUNCTIONS["constant_pad_nd"](x, pad)
    return x


def _fftn(input, s, dim, norm, forward, one_dim=False):
    dims, sizes = _dims_and_sizes(input, s, dim)
    norm = _norm(norm)
    if not one_dim or input.dtype.is_complex:  # the N-D transforms promote a real signal
        x = _resize(_as_complex(input), dims, sizes)
        return c2c(x, dims, norm, forward) if dims else x
    x = _resize(input, dims, sizes)
    if forward:  # 1-D of a real signal: PyTorch's two-sided r2c
        return r2c(_as_real(x, "fft"), dims, norm, False)
    # ifft of a real signal: the conjugate of its fft
    y = r2c(_as_real(x, "ifft"), dims, _swap(norm), False)
    return complex_numbers.conj(y)


def _rfftn(input, s, dim, norm, fname):
    x = _as_real(input, fname)
    dims, sizes = _dims_and_sizes(x, s, dim, fname)
    x = _resize(x, dims, sizes)
    return r2c(x, dims, _norm(norm), True)


def _irfftn(input, s, dim, norm, fname, hermitian=False):
    x = _as_complex(input)
    dims, sizes = _dims_and_sizes(x, s, dim, fname)
    last = sizes[-1] if sizes[-1] is not None else 2 * (x.shape[dims[-1]] - 1)
    if last < 1:
        raise RuntimeError(f"Invalid number of data points ({last}) specified")
    sizes[-1] = last // 2 + 1
    x = _resize(x, dims, sizes)
    norm = _norm(norm)
    if hermitian:  # hfftn: the leading dims forward as c2c, then c2r of the conjugate
        if len(dims) > 1:
            x = c2c(x, dims[:-1], norm, True)
        x = complex_numbers.conj(x)
        return c2r(x, dims[-1:], _swap(norm), last)
    return c2r(x, dims, norm, last)


def _ihfftn(input, s, dim, norm, fname):
    x = _as_real(input, fname)
    dims, sizes = _dims_and_sizes(x, s, dim, fname)
    x = _resize(x, dims, sizes)
    norm = _norm(norm)
    y = r2c(x, dims[-1:], _swap(norm), True)
    if len(dims) == 1:
        return complex_numbers.conj(y)
    y = complex_numbers.conj_physical(y)
    # PyTorch's kernels lay each transform's result out by its input's strides (below);
    # the conjugation keeps the r2c's layout
    order = _fft_layout(_fft_layout(x.stride(), dims[-1:], True), dims[:-1], False)
    return laid_out(c2c(y, dims[:-1], norm, False), order)


def _fft_layout(strides, dims, exclude_last):
    """The strides of PyTorch's CPU transform over ``dims`` of an input of ``strides``:
    its result is dense, the untransformed dimensions outermost by the input's strides,
    then the transformed ones by the input's strides (the last kept last with
    ``exclude_last``: an r2c's halved dimension)."""
    ndim = len(strides)
    def by_stride(ds):
        return sorted(ds, key=lambda d: -strides[d])
    fft = list(dims)
    fft = by_stride(fft[:-1]) + fft[-1:] if exclude_last else by_stride(fft)
    order = by_stride([d for d in range(ndim) if d not in dims]) + fft
    out = [0] * ndim
    for rank, d in enumerate(order):
        out[d] = -rank  # only the order matters to the next transform and to the layout
    return tuple(out)


def _one(n, dim):
    if n is not None and n < 1:  # (an ``s`` entry of -1 keeps its size: not here)
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return None if n is None else (n,), (dim,)


def _takes_tensor(fn):
    """``fn``, a transform, refusing an ``input`` that is no Tensor with PyTorch's parser
    error (it would fail reading its shape)."""
    name = "fft_" + fn.__name__

    @functools.wraps(fn)
    def checked(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise not_a(name, "input", input, "Tensor")
        return fn(input, *args, **kwargs)
    return checked


@with_out
@_takes_tensor
def fft(input, n=None, dim=-1, norm=None) -> Tensor:
    """``fft(input, n=None, dim=-1, norm=None)``: the one-dimensional discrete Fourier
    transform of ``input`` (zero-padded or trimmed to ``n`` along ``dim``)."""
    return _fftn(input, *_one(n, dim), norm, True, True)


@with_out
@_takes_tensor
def ifft(input, n=None, dim=-1, norm=None) -> Tensor:
    """``ifft(input, n=None, dim=-1, norm=None)``: the inverse of :func:`fft`."""
    return _fftn(input, *_one(n, dim), norm, False, True)


@with_out
@_takes_tensor
def fft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """``fft2(input, s=None, dim=(-2, -1), norm=None)``: the 2-D discrete Fourier
    transform."""
    return _fftn(input, s, dim, norm, True)


@with_out
@_takes_tensor
def ifft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """``ifft2(input, s=None, dim=(-2, -1), norm=None)``: the inverse of :func:`fft2`."""
    return _fftn(input, s, dim, norm, False)


@with_out
@_takes_tensor
def fftn(input, s=None, dim=None, norm=None) -> Tensor:
    """``fftn(input, s=None, dim=None, norm=None)``: the N-D discrete Fourier transform
    (over every dimension, or the last ``len(s)``, when ``dim`` is None)."""
    return _fftn(input, s, dim, norm, True)


@with_out
@_takes_tensor
def ifftn(input, s=None, dim=None, norm=None) -> Tensor:
    """``ifftn(input, s=None, dim=None, norm=None)``: the inverse of :func:`fftn`."""
    return _fftn(input, s, dim, norm, False)


@with_out
@_takes_tensor
def rfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """``rfft(input, n=None, dim=-1, norm=None)``: the Fourier transform of a real signal,
    its ``n // 2 + 1`` non-negative frequencies."""
    return _rfftn(input, *_one(n, dim), norm, "rfft")


@with_out
@_takes_tensor
def irfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """``irfft(input, n=None, dim=-1, norm=None)``: the inverse of :func:`rfft`, a real
    signal of length ``n`` (default ``2 * (input.size(dim) - 1)``)."""
    return _irfftn(input, *_one(n, dim), norm, "irfft")


@with_out
@_takes_tensor
def rfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """``rfft2(input, s=None, dim=(-2, -1), norm=None)``: the 2-D :func:`rfftn`."""
    return _rfftn(input, s, dim, norm, "rfftn")


@with_out
@_takes_tensor
def irfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """``irfft2(input, s=None, dim=(-2, -1), norm=None)``: the inverse of :func:`rfft2`."""
    return _irfftn(input, s, dim, norm, "irfftn")


@with_out
@_takes_tensor
def rfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """``rfftn(input, s=None, dim=None, norm=None)``: the N-D Fourier transform of a real
    signal, one-sided in the last transformed dimension."""
    return _rfftn(input, s, dim, norm, "rfftn")


@with_out
@_takes_tensor
def irfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """``irfftn(input, s=None, dim=None, norm=None)``: the inverse of :func:`rfftn`."""
    return _irfftn(input, s, dim, norm, "irfftn")


@with_out
@_takes_tensor
def hfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """``hfft(input, n=None, dim=-1, norm=None)``: the Fourier transform of a Hermitian
    signal given by its first half, a real result of length ``n``."""
    return _irfftn(input, *_one(n, dim), norm, "hfft", hermitian=True)


@with_out
@_takes_tensor
def ihfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """``ihfft(input, n=None, dim=-1, norm=None)``: the inverse of :func:`hfft`."""
    return _ihfftn(input, *_one(n, dim), norm, "ihfft")


@with_out
@_takes_tensor
def hfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """``hfft2(input, s=None, dim=(-2, -1), norm=None)``: the 2-D :func:`hfftn`."""
    return _irfftn(input, s, dim, norm, "hfftn", hermitian=True)


@with_out
@_takes_tensor
def ihfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """``ihfft2(input, s=None, dim=(-2, -1), norm=None)``: the inverse of
    :func:`hfft2`."""
    return _ihfftn(input, s, dim, norm, "ihfftn")


@with_out
@_takes_tensor
def hfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """``hfftn(input, s=None, dim=None, norm=None)``: the N-D Fourier transform of a signal
    Hermitian in its last transformed dimension, given by its first half."""
    return _irfftn(input, s, dim, norm, "hfftn", hermitian=True)


@with_out
@_takes_tensor
def ihfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """``ihfftn(input, s=None, dim=None, norm=None)``: the inverse of :func:`hfftn`."""
    return _ihfftn(input, s, dim, norm, "ihfftn")


def _freq(n, d, dtype, requires_grad, onesided):
    name = "fft_rfftfreq" if onesided else "fft_fftfreq"
    if n.__class__ is not int:
        if isinstance(n, (bool, float, str)) or n is None:
            raise not_a(name, "n", n, "int")
    elif n < 0 and not onesided:  # (PyTorch's rfftfreq gives an empty result)
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    d = number(name, "d", d, None, "float")
    dtype = _dtype.as_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    fn = jnp.fft.rfftfreq if onesided else jnp.fft.fftfreq
    t = Tensor._wrap(fn(int(n), d=float(d)).astype(_dtype.to_jax(dtype)))
    return t.requires_grad_(requires_grad) if requires_grad else t


@with_out
def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None,
            requires_grad=False) -> Tensor:
    """``fftfreq(n, d=1.0)``: the sample frequencies of an ``n``-point :func:`fft` with
    sample spacing ``d``."""
    return _freq(n, d, dtype, requires_grad, False)


@with_out
def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None,
             requires_grad=False) -> Tensor:
    """``rfftfreq(n, d=1.0)``: the sample frequencies of an ``n``-point :func:`rfft`."""
    return _freq(n, d, dtype, requires_grad, True)


def _shift(input, dim, sign):
    if dim is None:
        dims = list(range(input.ndim))
    else:
        dims = [wrap_dim(d, input.ndim) for d in (dim if isinstance(dim, (list, tuple))
                                                  else (dim,))]
    # PyTorch rolls forward by n // 2 (fftshift) and (n + 1) // 2 (ifftshift)
    shifts = [(input.shape[d] + (sign < 0)) // 2 for d in dims]
    return FUNCTIONS["roll"](input, shifts, dims)


def fftshift(input, dim=None) -> Tensor:
    """``fftshift(input, dim=None)``: the zero frequency moved to the centre of ``dim``
    (every dimension when None)."""
    return _shift(input, dim, 1)


def ifftshift(input, dim=None) -> Tensor:
    """``ifftshift(input, dim=None)``: the inverse of :func:`fftshift`."""
    return _shift(input, dim, -1)
