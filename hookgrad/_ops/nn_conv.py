"""Spatial layer ops behind ``hookgrad.nn.functional``: convolution (and transposed),
max/average/adaptive pooling (padding and unfold/fold: ``nn_pad_fold.py``).

Each op is one row of the table (a pure JAX forward and PyTorch's node name); backward
is JAX's vjp of the forward. Argument checking happens in the Python wrappers, before
anything runs, with PyTorch's error types and wording. Layouts are PyTorch's (NC...).
"""
from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from .dispatch import apply, pack_before_error
from .nn_conv_checks import (dilation_error, kernel_error, output_padding_error, param_error,
                              shape_error)
from .registry import defop, export

_DN = {1: ("NCH", "OIH", "NCH"), 2: ("NCHW", "OIHW", "NCHW"), 3: ("NCDHW", "OIDHW", "NCDHW")}


def _ntuple(v, n):
    if isinstance(v, (list, tuple)):
        if len(v) == 1 and n > 1:
            return tuple(int(v[0]) for _ in range(n))
        return tuple(int(i) for i in v)
    return (int(v),) * n


def _bias_shape(nd, c):
    return (1, c) + (1,) * nd


# --------------------------------------------------------------------------- convolution


def _conv(x, w, b, stride, padding, dilation, groups):
    nd = w.ndim - 2
    y = jax.lax.conv_general_dilated(x, w, stride, padding, rhs_dilation=dilation,
                                     feature_group_count=groups, dimension_numbers=_DN[nd])
    return y if b is None else y + b.reshape(_bias_shape(nd, -1))


def _conv_transpose(x, w, b, stride, padding, dilation, groups):
    # A transposed convolution is the convolution of the stride-dilated input with the
    # spatially flipped kernel whose in/out channel axes are swapped within each group.
    nd = w.ndim - 2
    cin, cout_g, k = w.shape[0], w.shape[1], w.shape[2:]
    w = w.reshape((groups, cin // groups, cout_g) + k)
    w = jnp.swapaxes(w, 1, 2).reshape((groups * cout_g, cin // groups) + k)
    w = jnp.flip(w, axis=tuple(range(2, 2 + nd)))
    y = jax.lax.conv_general_dilated(x, w, (1,) * nd, padding, lhs_dilation=stride,
                                     rhs_dilation=dilation, feature_group_count=groups,
                                     dimension_numbers=_DN[nd])
    return y if b is None else y + b.reshape(_bias_shape(nd, -1))


# PyTorch saves the input and the weight (never the bias); no bias: a None edge
_CONV_SAVE = {0: (0, 1), 1: (0, 1), 2: (0, 1)}
_CONV_NAMES = "input weight bias -> input weight"
CONV = defop("convolution", _conv, "ConvolutionBackward0", _CONV_SAVE, scalar_edges=(2,),
             names=_CONV_NAMES)
CONV_T = defop("conv_transpose", _conv_transpose, "ConvolutionBackward0", _CONV_SAVE,
               scalar_edges=(2,), names=_CONV_NAMES)


def _check_input_dims(input, nd, name):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")






def _batched_shape(input, nd):
    return (1, *input.shape) if input.ndim == nd + 1 else tuple(input.shape)




def _run_conv(op, nd, input, weight, bias, statics, error):
    """``op`` on the batched input; an ``error`` of the kernel's shape checks is raised after
    saved-tensor hooks pack the input and weight, as PyTorch's node packs them first."""
    unbatched = input.ndim == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    if error is not None:
        pack_before_error(op, (x, weight, bias))
        raise error
    y = apply(op, (x, weight, bias), statics)
    return y.squeeze(0) if unbatched else y




def _convnd(nd, name, input, weight, bias, stride, padding, dilation, groups):
    groups = int(groups)
    _check_input_dims(input, nd, name)
    shape = _batched_shape(input, nd)
    pads = None
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if padding == "same":
            pads = _same_pads(nd, shape, weight, stride, dilation)
        padding = 0 if pads is None else [lo for lo, _ in pads]
    error = param_error(nd, weight, groups, (
        ("stride", stride), ("padding", padding), ("dilation", dilation),
        ("output_padding", 0)))
    statics = None
    if error is None:
        stride, dilation = _ntuple(stride, nd), _ntuple(dilation, nd)
        k = weight.shape[2:]
        if pads is None:
            pads = tuple((p, p) for p in _ntuple(padding, nd))
        error = shape_error(shape, weight, bias, nd, False, groups) or \
            kernel_error(input.shape[-nd:], pads, dilation, k) or \
            dilation_error(shape, nd, dilation, False)
        statics = {"stride": stride, "padding": pads, "dilation": dilation, "groups": groups}
    return _run_conv(CONV, nd, input, weight, bias, statics, error)


def _same_pads(nd, shape, weight, stride, dilation):
    """``padding="same"``'s pads (an odd total goes on the high side, as PyTorch does), after
    the checks PyTorch's "same" mode makes before the convolution runs."""
    if weight.ndim != len(shape):
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-"
                           f"dimensional weight{list(weight.shape)}, but got {len(shape)}-"
                           f"dimensional input of size {list(shape)} instead")
    for name, v in (("stride", stride), ("dilation", dilation)):
        if isinstance(v, (list, tuple)) and len(v) not in (1, nd):
            raise RuntimeError(f"{name} cannot broadcast to {nd} dimensions")
    if any(s != 1 for s in _ntuple(stride, nd)):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    tot = [d * (kk - 1) for d, kk in zip(_ntuple(dilation, nd), weight.shape[2:])]
    return tuple((t // 2, t - t // 2) for t in tot)


@export(method=False)
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """Applies a 1D convolution over an input signal of shape ``(N, C_in, L)``.

    ::

        conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor
    """
    return _convnd(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


@export(method=False)
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """Applies a 2D convolution over an input image of shape ``(N, C_in, H, W)``.

    ::

        conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor

    Example::

        >>> w = hookgrad.randn(8, 4, 3, 3)
        >>> F.conv2d(hookgrad.randn(1, 4, 5, 5), w, padding=1).shape
        hookgrad.Size([1, 8, 5, 5])
    """
    return _convnd(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)


@export(method=False)
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """Applies a 3D convolution over an input of shape ``(N, C_in, D, H, W)``."""
    return _convnd(3, "conv3d", input, weight, bias, stride, padding, dilation, groups)


def _conv_transposend(nd, name, input, weight, bias, stride, padding, output_padding, groups,
                      dilation):
    groups = int(groups)
    _check_input_dims(input, nd, name)
    shape = _batched_shape(input, nd)
    error = param_error(nd, weight, groups, (
        ("stride", stride), ("padding", padding), ("dilation", dilation),
        ("output_padding", output_padding)))
    statics = None
    if error is None:
        stride, dilation = _ntuple(stride, nd), _ntuple(dilation, nd)
        padding, output_padding = _ntuple(padding, nd), _ntuple(output_padding, nd)
        error = shape_error(shape, weight, bias, nd, True, groups) or \
            dilation_error(shape, nd, dilation, True) or \
            output_padding_error(output_padding, stride, dilation)
        k = weight.shape[2:]
        pads = tuple((d * (kk - 1) - p, d * (kk - 1) - p + o)
                     for d, kk, p, o in zip(dilation, k, padding, output_padding))
        statics = {"stride": stride, "padding": pads, "dilation": dilation, "groups": groups}
    return _run_conv(CONV_T, nd, input, weight, bias, statics, error)


@export(method=False)
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """Applies a 1D transposed convolution ("deconvolution"); ``weight`` is
    ``(C_in, C_out / groups, kL)``."""
    return _conv_transposend(1, "conv_transpose1d", input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


@export(method=False)
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """Applies a 2D transposed convolution; ``weight`` is ``(C_in, C_out / groups, kH, kW)``.

    ::

        conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                         groups=1, dilation=1) -> Tensor
    """
    return _conv_transposend(2, "conv_transpose2d", input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


@export(method=False)
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1) -> Tensor:
    """Applies a 3D transposed convolution; ``weight`` is ``(C_in, C_out / groups, kD, kH,
    kW)``."""
    return _conv_transposend(3, "conv_transpose3d", input, weight, bias, stride, padding,
                             output_padding, groups, dilation)


# --------------------------------------------------------------------------- pooling


def _pool_geometry(spatial, kernel, stride, padding, dilation, ceil_mode):
    """Output sizes and the extra high-side padding ``ceil_mode`` needs (PyTorch's rule: the
    last window must start inside the input or the left padding)."""
    outs, extra = [], []
    for n, k, s, p, d in zip(spatial, kernel, stride, padding, dilation):
        span = n + 2 * p - d * (k - 1) - 1
        o = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (o - 1) * s >= n + p:
            o -= 1
        outs.append(o)
        extra.append(max(0, (o - 1) * s + d * (k - 1) + 1 - (n + 2 * p)))
    return outs, extra


def _windows(x, kernel, stride, dilation, outs):
    """Every kernel offset's strided slice of the padded input, stacked on a last axis."""
    lead = x.ndim - len(kernel)
    parts = []
    for offs in itertools.product(*[range(k) for k in kernel]):
        start = [0] * lead + [o * d for o, d in zip(offs, dilation)]
        limit = list(x.shape[:lead]) + [st + s * (o - 1) + 1
                                        for st, s, o in zip(start[lead:], stride, outs)]
        parts.append(jax.lax.slice(x, start, limit, [1] * lead + list(stride)))
    return jnp.stack(parts, axis=-1)


def _max_pool(x, kernel, stride, padding, dilation, ceil_mode, with_indices):
    nd = len(kernel)
    spatial = x.shape[-nd:]
    outs, extra = _pool_geometry(spatial, kernel, stride, padding, dilation, ceil_mode)
    fill = -jnp.inf if jnp.issubdtype(x.dtype, jnp.floating) else jnp.iinfo(x.dtype).min
    xp = jnp.pad(x, [(0, 0)] * (x.ndim - nd) + [(p, p + e) for p, e in zip(padding, extra)],
                 constant_values=fill)
    win = _windows(xp, kernel, stride, dilation, outs)
    # the first maximum of each window (NaN wins), so the gradient goes to that one element
    # as in PyTorch, also when there are ties
    arg = jnp.argmax(win, axis=-1)
    vals = jnp.take_along_axis(win, arg[..., None], axis=-1)[..., 0]
    if not with_indices:
        return vals
    offs = np.array(list(itertools.product(*[range(k) for k in kernel])))  # (K, nd)
    flat = jnp.zeros(arg.shape, jnp.int32)
    for i in range(nd):
        pos = np.arange(outs[i]) * stride[i] - padding[i]
        pos = pos.reshape((-1,) + (1,) * (nd - 1 - i))
        coord = pos + jnp.asarray(offs[:, i] * dilation[i])[arg]
        flat = flat * spatial[i] + coord
    return vals, flat


def _avg_pool(x, kernel, stride, padding, ceil_mode, divisor):
    nd = len(kernel)
    outs, extra = _pool_geometry(x.shape[-nd:], kernel, stride, padding, (1,) * nd, ceil_mode)
    lead = x.ndim - nd
    xp = jnp.pad(x, [(0, 0)] * lead + [(p, p + e) for p, e in zip(padding, extra)])
    s = jax.lax.reduce_window(xp, np.zeros((), x.dtype), jax.lax.add,
                              (1,) * lead + tuple(kernel), (1,) * lead + tuple(stride), "VALID")
    return s / jnp.asarray(np.asarray(divisor), x.dtype)


def _avg_divisor(spatial, kernel, stride, padding, outs, count_include_pad, override):
    if override is not None:
        return float(override)
    div = np.ones((), np.float64)
    for n, k, s, p, o in zip(spatial, kernel, stride, padding, outs):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        if count_include_pad:
            cnt = end - start
        else:
            cnt = np.minimum(end, n) - np.maximum(start, 0)
        div = np.multiply.outer(div, cnt)
    return div


def _adaptive_matrix(n, o):
    m = np.zeros((o, n), np.float32)
    for i in range(o):
        a, b = (i * n) // o, -((-(i + 1) * n) // o)
        m[i, a:b] = 1.0 / (b - a)
    return m


def _adaptive_avg(x, mats):
    nd = len(mats)
    for i, m in enumerate(mats):
        axis = x.ndim - nd + i
        pooled = jnp.tensordot(x, jnp.asarray(np.asarray(m), x.dtype), axes=([axis], [1]))
        x = jnp.moveaxis(pooled, -1, axis)
    return x


MAX_POOL2D = defop("max_pool2d", _max_pool, "MaxPool2DWithIndicesBackward0")
MAX_POOL3D = defop("max_pool3d", _max_pool, "MaxPool3DWithIndicesBackward0")
AVG_POOL2D = defop("avg_pool2d", _avg_pool, "AvgPool2DBackward0", ())
AVG_POOL3D = defop("avg_pool3d", _avg_pool, "AvgPool3DBackward0", ())
ADAPTIVE_AVG2D = defop("adaptive_avg_pool2d", _adaptive_avg, "AdaptiveAvgPool2DBackward0", ())
ADAPTIVE_AVG3D = defop("adaptive_avg_pool3d", _adaptive_avg, "AdaptiveAvgPool3DBackward0", ())


def check_1d_rank(input, name):
    """PyTorch's rank check of the 1-d pools that run as 2-d ones (before the 2-d kernel's
    own checks)."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                           f"tensor for argument #1 'self' (while checking arguments for "
                           f"{name})")


def _check_pool_input(input, nd, name):
    if input.ndim not in (nd + 1, nd + 2) or any(s == 0 for s in input.shape[-nd:]):
        raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with "
                           f"optional 0 dim batch size for input, but got: "
                           f"{list(input.shape)}")


def check_output_size(output_size, input):
    """``nn.functional``'s check of a sequence ``output_size`` of a 2-d or 3-d adaptive
    pooling: ``input`` needs one dim more than it names (a ``ValueError``, raised before
    the kernel's own checks)."""
    if isinstance(output_size, (list, tuple)) and input.ndim <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")


def _max_poolnd(nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    _check_pool_input(input, nd, f"max_pool{nd}d")
    k = _ntuple(kernel_size, nd)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else \
        _ntuple(stride, nd)
    p, d = _ntuple(padding, nd), _ntuple(dilation, nd)
    if 0 in s:  # (the stride defaults to the kernel's size)
        raise RuntimeError("stride should not be zero")
    for pp, kk, dd in zip(p, k, d):
        if pp > (dd * (kk - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pp}, kernel_size={kk} and dilation={dd}")
    outs, _ = _pool_geometry(input.shape[-nd:], k, s, p, d, ceil_mode)
    if any(o <= 0 for o in outs):
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, input.shape[-nd - 1:]))}). "
                           f"Calculated output size: ({input.shape[-nd - 1]}x"
                           f"{'x'.join(map(str, outs))}). Output size is too small")
    op = MAX_POOL2D if nd == 2 else MAX_POOL3D
    st = {"kernel": k, "stride": s, "padding": p, "dilation": d, "ceil_mode": bool(ceil_mode),
          "with_indices": bool(return_indices)}
    return apply(op, (input,), st)


@export(method=False)
def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False) -> Tensor | tuple[Tensor, Tensor]:
    """Applies 1D max pooling over ``(N, C, L)``; computed as a 2D pool of height 1."""
    _check_pool_input(input, 1, "max_pool1d")
    if _ntuple(kernel_size, 1)[0] <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got "
                           f"{_ntuple(kernel_size, 1)[0]}")
    one = lambda v: (1, *_ntuple(v, 1))  # noqa: E731
    s = None if stride is None or (isinstance(stride, (list, tuple)) and not stride) else \
        one(stride)
    try:
        r = _max_poolnd(2, input.unsqueeze(-2), one(kernel_size), s or one(kernel_size),
                        (0, *_ntuple(padding, 1)), one(dilation), ceil_mode, return_indices)
    except RuntimeError as e:
        # PyTorch's max_pool1d without indices has a kernel of its own, worded its own way
        if return_indices or not str(e).startswith("Given input size"):
            raise
        outs, _ = _pool_geometry(input.shape[-1:], _ntuple(kernel_size, 1),
                                 (s or one(kernel_size))[1:], _ntuple(padding, 1),
                                 _ntuple(dilation, 1), ceil_mode)
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {outs[0]}") from None
    if return_indices:
        return r[0].squeeze(-2), r[1].squeeze(-2)
    return r.squeeze(-2)


@export(method=False)
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False) -> Tensor | tuple[Tensor, Tensor]:
    """Applies 2D max pooling over ``(N, C, H, W)``.

    ::

        max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                   return_indices=False)

    With ``return_indices=True`` also returns the flat index (``h * W + w``) of each
    maximum; the gradient goes to that element only, as in PyTorch.
    """
    return _max_poolnd(2, input, kernel_size, stride, padding, dilation, ceil_mode,
                       return_indices)


@export(method=False)
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False) -> Tensor | tuple[Tensor, Tensor]:
    """Applies 3D max pooling over ``(N, C, D, H, W)``."""
    return _max_poolnd(3, input, kernel_size, stride, padding, dilation, ceil_mode,
                       return_indices)


def _avg_poolnd(nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
    _check_pool_input(input, nd, f"avg_pool{nd}d")
    k = _ntuple(kernel_size, nd)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else \
        _ntuple(stride, nd)
    p = _ntuple(padding, nd)
    _check_avg_pool_window(k, s)
    for pp, kk in zip(p, k):
        if pp > kk // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pp}, kernel_size={kk} and dilation=1")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    outs, _ = _pool_geometry(input.shape[-nd:], k, s, p, (1,) * nd, ceil_mode)
    if any(o <= 0 for o in outs):
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, input.shape[-nd - 1:]))}). "
                           f"Calculated output size: ({input.shape[-nd - 1]}x"
                           f"{'x'.join(map(str, outs))}). Output size is too small")
    div = _avg_divisor(input.shape[-nd:], k, s, p, outs, count_include_pad, divisor_override)
    div = div if isinstance(div, float) else _Const(div)
    op = AVG_POOL2D if nd == 2 else AVG_POOL3D
    return apply(op, (input,), {"kernel": k, "stride": s, "padding": p,
                                "ceil_mode": bool(ceil_mode), "divisor": div})


def _check_avg_pool_window(k, s):
    """PyTorch's avg_pool kernels' checks of the window, in their order (a zero stride
    first: the stride defaults to the kernel's size); a 1-d pool names its height of 1."""
    if 0 in s:
        raise RuntimeError("stride should not be zero")
    for v, what, letter in ((k, "kernel size", "k"), (s, "stride", "d")):
        if min(v) <= 0:
            got = " ".join(f"{letter}{dim}: {n}" for dim, n in zip("THW"[-len(v):], v))
            raise RuntimeError(f"{what} should be greater than zero, but got {got}")


class _Const:
    """A NumPy array as a hashable static argument (compared by value)."""
    __slots__ = ("a", "_h")

    def __init__(self, a):
        self.a = np.asarray(a)
        self._h = hash((self.a.shape, self.a.tobytes()))

    def __hash__(self):
        return self._h

    def __eq__(self, other):
        return isinstance(other, _Const) and self.a.shape == other.a.shape and \
            np.array_equal(self.a, other.a)

    def __array__(self, dtype=None, copy=None):
        return self.a if dtype is None else self.a.astype(dtype)


@export(method=False)
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True) -> Tensor:
    """Applies 1D average pooling over ``(N, C, L)`` (as a 2D pool of height 1)."""
    check_1d_rank(input, "avg_pool1d")
    _check_pool_input(input, 1, "avg_pool1d")
    one = lambda v: (1, *_ntuple(v, 1))  # noqa: E731
    s = None if stride is None or (isinstance(stride, (list, tuple)) and not stride) else \
        one(stride)
    return _avg_poolnd(2, input.unsqueeze(-2), one(kernel_size), s, (0, *_ntuple(padding, 1)),
                       ceil_mode, count_include_pad, None).squeeze(-2)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None) -> Tensor:
    """Applies 2D average pooling over ``(N, C, H, W)``.

    ::

        avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
                   count_include_pad=True, divisor_override=None) -> Tensor
    """
    return _avg_poolnd(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None) -> Tensor:
    """Applies 3D average pooling over ``(N, C, D, H, W)``."""
    return _avg_poolnd(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override)


def _adaptive_avg_poolnd(nd, input, output_size):
    _check_pool_input(input, nd, f"adaptive_avg_pool{nd}d")
    if not isinstance(output_size, (list, tuple)):
        output_size = (output_size,) * nd
    if len(output_size) != nd:
        raise RuntimeError(f"adaptive_avg_pool{nd}d: output_size must be {nd}")
    spatial = input.shape[-nd:]
    outs = tuple(int(n if o is None else o) for n, o in zip(spatial, output_size))
    if any(o < 0 for o in outs):
        raise RuntimeError(f"adaptive_avg_pool{nd}d: elements of output_size must be greater "
                           f"than or equal to 0 but received {{{', '.join(map(str, outs))}}}")
    if all(o == 1 for o in outs):  # PyTorch takes a mean here
        return input.mean(tuple(range(-nd, 0)), keepdim=True)
    mats = tuple(_Const(_adaptive_matrix(n, o)) for n, o in zip(spatial, outs))
    op = ADAPTIVE_AVG2D if nd == 2 else ADAPTIVE_AVG3D
    return apply(op, (input,), {"mats": mats})


@export(method=False)
def adaptive_avg_pool1d(input, output_size) -> Tensor:
    """Average pooling over ``(N, C, L)`` to ``output_size`` bins, PyTorch's bin edges."""
    check_1d_rank(input, "adaptive_avg_pool1d")
    _check_pool_input(input, 1, "adaptive_avg_pool1d")
    o = output_size[0] if isinstance(output_size, (list, tuple)) else output_size
    return _adaptive_avg_poolnd(2, input.unsqueeze(-2), (1, o)).squeeze(-2)


def adaptive_avg_pool2d(input, output_size) -> Tensor:
    """Average pooling over ``(N, C, H, W)`` to ``output_size`` (an int, a pair, ``None``
    keeps that size): bin ``i`` of ``o`` over ``n`` covers ``[floor(i n / o), ceil((i+1) n / o))``.
    """
    check_output_size(output_size, input)
    return _adaptive_avg_poolnd(2, input, output_size)


def adaptive_avg_pool3d(input, output_size) -> Tensor:
    check_output_size(output_size, input)
    return _adaptive_avg_poolnd(3, input, output_size)
