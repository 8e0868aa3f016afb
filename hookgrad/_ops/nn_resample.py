"""Resampling behind ``hookgrad.nn.functional.interpolate`` (and its ``upsample``
aliases): nearest, nearest-exact, (bi/tri)linear, bicubic, area, with or without
antialiasing.

Every mode is separable: along each spatial axis, output position ``i`` is a weighted sum
of a few input positions (taps). The tap indices and weights are computed on the host with
PyTorch's index arithmetic (the same float precision, the same floors and clamps), so the
forward is a gather and a weighted sum per axis, and JAX differentiates it (a scatter-add).
"""
from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from .dispatch import apply
from .nn_conv import _Const, adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d
from .registry import defop
from .. import _errors

_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_LINEAR_DIMS = {"linear": 1, "bilinear": 2, "trilinear": 3}
_AXIS_NAMES = {1: "W", 2: "HW", 3: "DHW"}


def _resample(x, axes):
    """``axes``: per trailing spatial axis ``(idx, w)``, both ``(out, taps)``; ``w`` None
    for a plain gather (nearest)."""
    nd = len(axes)
    for i, (idx, w) in enumerate(axes):
        ax = x.ndim - nd + i
        idx = np.asarray(idx)
        if w is None:
            x = jnp.take(x, idx[:, 0], axis=ax, mode="clip")
            continue
        w = np.asarray(w)
        shape = (-1,) + (1,) * (nd - 1 - i)
        acc = None
        for k in range(idx.shape[1]):
            term = jnp.take(x, idx[:, k], axis=ax, mode="clip") * \
                jnp.asarray(w[:, k].reshape(shape), x.dtype)
            acc = term if acc is None else acc + term
        x = acc
    return x


def _node(kind, nd):
    return f"Upsample{kind}{nd}DBackward0"


_OPS = {}
for _nd in (1, 2, 3):
    for _mode, _kind in (("nearest", "Nearest"), ("nearest-exact", "NearestExact")):
        _OPS[_mode, _nd] = defop(f"upsample_{_mode.replace('-', '_')}{_nd}d", _resample,
                                 _node(_kind, _nd), ())
_OPS["linear", 1] = defop("upsample_linear1d", _resample, _node("Linear", 1), ())
_OPS["bilinear", 2] = defop("upsample_bilinear2d", _resample, _node("Bilinear", 2), ())
_OPS["trilinear", 3] = defop("upsample_trilinear3d", _resample, _node("Trilinear", 3), ())
_OPS["bicubic", 2] = defop("upsample_bicubic2d", _resample, _node("Bicubic", 2), ())
_OPS["bilinear_aa", 2] = defop("upsample_bilinear2d_aa", _resample,
                               "UpsampleBilinear2DAaBackward0", ())
_OPS["bicubic_aa", 2] = defop("upsample_bicubic2d_aa", _resample,
                              "UpsampleBicubic2DAaBackward0", ())


# --------------------------------------------------------------------------- index math


def _ftype(dtype):
    # PyTorch computes source positions in the input's "opmath" type: float for
    # float/half/bfloat16 inputs, double for double
    return np.float64 if np.dtype(dtype) == np.float64 else np.float32


def _source_scale(n_in, n_out, align_corners, scale, ft):
    """Input positions per output position."""
    if align_corners:
        return ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
    if scale is not None and scale > 0:
        return ft(1.0 / scale)
    return ft(n_in) / ft(n_out)


def _nearest_taps(n_in, n_out, scale, exact, nd):
    dst = np.arange(n_out)
    # NOTE: nearest uses float32 whatever the input dtype; PyTorch's 2-D nearest kernel
    # (only that one) has shortcuts for equal and doubled sizes that ignore the scale
    # factor; nearest-exact computes (i + 0.5) * s in double and floors it as float
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else \
        np.float32(n_in) / np.float32(n_out)
    if exact:
        src = np.floor(((dst + 0.5) * np.float64(s)).astype(np.float32))
    elif nd == 2 and n_out == n_in:
        src = dst
    elif nd == 2 and n_out == 2 * n_in:
        src = dst >> 1
    else:
        src = np.floor(dst.astype(np.float32) * s)
    return np.minimum(src.astype(np.int64), n_in - 1)[:, None].astype(np.int32), None


def _floor_and_frac(src, n_in):
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    t = np.clip(src - i0.astype(src.dtype), 0, 1)
    return i0, t


def _linear_taps(n_in, n_out, align_corners, scale, ft):
    if n_in == n_out:  # PyTorch copies, whatever the scale factor
        i = np.arange(n_in, dtype=np.int32)[:, None]
        return np.concatenate([i, i], 1), np.tile(np.array([[1, 0]], ft), (n_in, 1))
    s = _source_scale(n_in, n_out, align_corners, scale, ft)
    dst = np.arange(n_out).astype(ft)
    src = s * dst if align_corners else np.maximum(s * (dst + ft(0.5)) - ft(0.5), ft(0))
    i0, t = _floor_and_frac(src, n_in)
    i1 = np.minimum(i0 + 1, n_in - 1)
    return np.stack([i0, i1], 1).astype(np.int32), np.stack([1 - t, t], 1)


def _cubic_weights(t, a=-0.75):
    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], 1)


def _cubic_taps(n_in, n_out, align_corners, scale, ft):
    s = _source_scale(n_in, n_out, align_corners, scale, ft)
    dst = np.arange(n_out).astype(ft)
    src = s * dst if align_corners else s * (dst + ft(0.5)) - ft(0.5)  # no clamp at 0
    i0, t = _floor_and_frac(src, n_in)
    idx = np.clip(i0[:, None] + np.arange(-1, 3), 0, n_in - 1)
    return idx.astype(np.int32), _cubic_weights(t).astype(ft)


def _aa_taps(n_in, n_out, align_corners, scale, cubic, ft):
    """Antialiased taps: the filter (triangle, or cubic with a=-0.5) stretched by the
    downsampling factor, truncated to the input and normalised to sum 1."""
    s = float(_source_scale(n_in, n_out, align_corners, scale, np.float64))
    support = (2.0 if cubic else 1.0) * (s if s >= 1.0 else 1.0)
    inv = 1.0 / s if s >= 1.0 else 1.0

    def filt(x):
        x = np.abs(x)
        if not cubic:
            return np.maximum(1.0 - x, 0.0)
        a = -0.5
        return np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                        np.where(x < 2, ((x - 5) * x + 8) * x * a - 4 * a, 0.0))
    rows_i, rows_w = [], []
    for i in range(n_out):
        # NOTE: align_corners changes only the scale here, not the centers
        center = s * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), n_in)
        j = np.arange(lo, hi)
        w = filt((j - center + 0.5) * inv)
        tot = w.sum()
        rows_i.append(j)
        rows_w.append(w / tot if tot != 0 else w)
    taps = max(len(j) for j in rows_i)
    idx = np.zeros((n_out, taps), np.int32)
    wts = np.zeros((n_out, taps), ft)
    for i, (j, w) in enumerate(zip(rows_i, rows_w)):
        idx[i, :len(j)], wts[i, :len(j)] = j, w
        idx[i, len(j):] = j[-1] if len(j) else 0
    return idx, wts


def _axis_taps(mode, n_in, n_out, align_corners, scale, antialias, dtype, nd):
    ft = _ftype(dtype)
    if mode in ("nearest", "nearest-exact"):
        return _nearest_taps(n_in, n_out, scale, mode == "nearest-exact", nd)
    if antialias:
        return _aa_taps(n_in, n_out, align_corners, scale, mode == "bicubic", ft)
    if mode == "bicubic":
        return _cubic_taps(n_in, n_out, align_corners, scale, ft)
    return _linear_taps(n_in, n_out, align_corners, scale, ft)


# --------------------------------------------------------------------------- interpolate


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


# how PyTorch's message names a sequence argument: (the other side, its value, its format)
_SEQUENCE_WORDS = {"size": ("output", "output size of", "output size in (o1, o2, ...,oK)"),
                   "scale_factor": ("scale_factor", "scale_factor of shape",
                                    "scale_factor in (s1, s2, ...,sK)")}


def _check_len(input, values, dim, arg):
    """PyTorch's ValueError where the sequence ``size`` or ``scale_factor`` does not give one
    value per spatial dimension of ``input``."""
    if len(values) != dim:
        side, given, fmt = _SEQUENCE_WORDS[arg]
        raise ValueError(
            f"Input and {side} must have the same number of spatial dimensions, but got input "
            f"with spatial dimensions of {list(input.shape[2:])} and {given} {values}. Please "
            f"provide input tensor in (N, C, d1, d2, ...,dK) format and {fmt} format.")


def _output_geometry(input, size, scale_factor, dim):
    """``(output_size, scale_factors)``: exactly one of them is set on return."""
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            _check_len(input, size, dim, "size")
            if not all(_is_int(s) for s in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    f"Tuple[int, int, int], but got size with types {[type(s) for s in size]}")
            return [int(s) for s in size], None
        return [int(size)] * dim, None
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        _check_len(input, scale_factor, dim, "scale_factor")
        return None, [float(s) for s in scale_factor]
    return None, [float(scale_factor)] * dim


def _check_sizes(spatial, outs):
    if all(o > 0 for o in outs) and all(n > 0 for n in spatial):
        return
    names = _AXIS_NAMES[len(spatial)]
    fmt = lambda v: ", ".join(f"{a}: {n}" for a, n in zip(names, v))  # noqa: E731
    sep = " and" if len(spatial) == 1 else ""
    raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                       f"({fmt(spatial)}){sep} output ({fmt(outs)})")


def _dim_error(input, mode):
    if mode in _LINEAR_DIMS and input.ndim in (3, 4, 5):
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{_LINEAR_DIMS[mode] + 2}D input")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                              f"{input.ndim}D) for the modes: {_MODES} (got {mode})")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False) -> Tensor:
    """Down/up samples ``input`` (``(N, C, L)``, ``(N, C, H, W)`` or ``(N, C, D, H, W)``)
    to ``size`` or by ``scale_factor``.

    ::

        interpolate(input, size=None, scale_factor=None, mode='nearest', align_corners=None,
                    recompute_scale_factor=None, antialias=False) -> Tensor

    Modes: ``'nearest'``, ``'nearest-exact'``, ``'linear'`` (3-D), ``'bilinear'`` (4-D),
    ``'bicubic'`` (4-D), ``'trilinear'`` (5-D), ``'area'``. The source positions are
    PyTorch's (``align_corners``; a given ``scale_factor`` is used as is unless
    ``recompute_scale_factor``), so values and gradients match PyTorch's.

    Example::

        >>> cam = hookgrad.rand(1, 1, 7, 7)
        >>> F.interpolate(cam, size=(224, 224), mode='bilinear', align_corners=False).shape
        hookgrad.Size([1, 1, 224, 224])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    output_size, scales = _output_geometry(input, size, scale_factor, dim)
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor and output_size is None:
        output_size = [math.floor(n * s) for n, s in zip(input.shape[2:], scales)]
        scales = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    supported = mode in ("nearest", "nearest-exact", "area") or \
        _LINEAR_DIMS.get(mode) == dim or (mode == "bicubic" and dim == 2)
    if not 1 <= dim <= 3 or not supported:
        if mode == "lanczos" and dim == 2:
            raise NotImplementedError("interpolate: mode='lanczos' is not supported by "
                                      "hookgrad")
        _dim_error(input, mode)
    spatial = list(input.shape[2:])
    if output_size is None:
        # PyTorch truncates size * scale (a double) toward zero
        output_size = [int(n * s) for n, s in zip(spatial, scales)]
    _check_sizes(spatial, output_size)
    if mode == "area":
        pool = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dim - 1]
        return pool(input, output_size)
    scales = scales or [None] * dim
    axes = []
    for n, o, s in zip(spatial, output_size, scales):
        idx, w = _axis_taps(mode, n, o, align_corners, s, antialias, input._data.dtype,
                            dim)
        axes.append((_Const(idx), None if w is None else _Const(w)))
    key = (mode + "_aa" if antialias else mode, dim)
    return apply(_OPS[key], (input,), {"axes": tuple(axes)})


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None) -> Tensor:
    """Deprecated alias of :func:`interpolate` (warns)."""
    _errors.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                 "instead.")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(input, size, scale_factor, mode='nearest')`` (warns)."""
    _errors.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                 "`nn.functional.interpolate` instead.")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(input, size, scale_factor, mode='bilinear',
    align_corners=True)`` (warns)."""
    _errors.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                 "`nn.functional.interpolate` instead.")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
