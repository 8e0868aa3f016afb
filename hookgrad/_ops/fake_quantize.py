"""``fake_quantize_per_tensor_affine`` and ``fake_quantize_per_channel_affine``: round to
the quantized grid and back, in floating point (quantization-aware training).

The gradient is PyTorch's straight-through one: the incoming gradient where the rounded
value lay inside ``[quant_min, quant_max]``, 0 where it was clamped. It is not a formula
written here: the forward is the grid value held constant (``stop_gradient``) plus the
input's own identity on the unclamped elements, and JAX differentiates that.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from .dispatch import apply
from .registry import defop, export
from .shape import wrap_dim


def _quantized(x, scale, zero_point, quant_min, quant_max, axis, float_zp):
    """``(q, xs, scale, zp)``: the rounded, unclamped grid index of each element and the
    values it was computed from, in the computing dtype."""
    if axis is not None:  # per channel: scale and zero_point run along ``axis``
        shape = [1] * x.ndim
        shape[axis] = -1
        scale, zero_point = scale.reshape(shape), zero_point.reshape(shape)
    dt = x.dtype if x.dtype in (jnp.float32, jnp.float64) else jnp.float32
    xs = x.astype(dt)
    scale = jnp.asarray(scale, jnp.float32)
    zp = jnp.asarray(zero_point, dt)
    inv = (1.0 / scale).astype(dt)  # PyTorch multiplies by a float32 1/scale
    q = jnp.round(xs * inv + zp) if float_zp else jnp.round(xs * inv) + zp  # half to even
    return q, xs, scale.astype(dt), zp


def _fake_quantize(x, scale, zero_point, quant_min, quant_max, axis=None, float_zp=False):
    q, xs, scale, zp = _quantized(x, scale, zero_point, quant_min, quant_max, axis, float_zp)
    keep = (q >= quant_min) & (q <= quant_max)
    grid = jax.lax.stop_gradient((jnp.clip(q, quant_min, quant_max) - zp) * scale)
    return (grid + (xs - jax.lax.stop_gradient(xs)) * keep).astype(x.dtype)


def _mask(x, scale, zero_point, quant_min, quant_max, axis=None, float_zp=False):
    """PyTorch's cachemask kernel's second output, which its node saves: where the
    gradient passes."""
    q = _quantized(x, scale, zero_point, quant_min, quant_max, axis, float_zp)[0]
    return ((q >= quant_min) & (q <= quant_max),)


_MASK = dict(extras=_mask, names="self scale zero_point -> mask=result1")
PER_TENSOR = defop("fake_quantize_per_tensor_affine", _fake_quantize,
                   "FakeQuantizePerTensorAffineCachemaskBackward0", **_MASK)
# the quantization parameters are no inputs of the gradient (no edges), as in PyTorch
PER_TENSOR_QPARAMS = defop("fake_quantize_per_tensor_affine.tensor_qparams", _fake_quantize,
                           "FakeQuantizePerTensorAffineCachemaskTensorQparamsBackward0",
                           nondiff=(1, 2), **_MASK)
PER_CHANNEL = defop("fake_quantize_per_channel_affine", _fake_quantize,
                    "FakeQuantizePerChannelAffineCachemaskBackward0", nondiff=(1, 2), **_MASK)


def _check(input, quant_min, quant_max):
    if not input.is_floating_point():
        kind = _dtype.TORCH_KINDS.get(input.dtype.name, input.dtype.name)
        raise NotImplementedError('"fake_quantize_tensor_cachemask_kernel_type_handling" not '
                                  f"implemented for '{kind}'")
    if quant_min > quant_max:
        raise RuntimeError("`quant_min` should be less than or         equal to `quant_max`.")


def _zero_point_in_range(zero_point, quant_min, quant_max):
    values = zero_point._data if isinstance(zero_point, Tensor) else zero_point
    if isinstance(values, jax.core.Tracer):
        return  # inside hookgrad.compile the values are not known: PyTorch's check is eager
    values = np.asarray(values)
    if values.size and (values.min() < quant_min or values.max() > quant_max):
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")


@export(method=False)
def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min,
                                    quant_max) -> Tensor:
    """Returns ``input`` fake quantized with one ``scale`` and ``zero_point``:
    ``(clamp(round(input / scale) + zero_point, quant_min, quant_max) - zero_point) * scale``
    (rounding half to even). ``scale`` and ``zero_point`` are numbers or one-element
    Tensors; the gradient passes where the rounded value was not clamped."""
    quant_min, quant_max = int(quant_min), int(quant_max)
    _check(input, quant_min, quant_max)
    _zero_point_in_range(zero_point, quant_min, quant_max)
    statics = {"quant_min": quant_min, "quant_max": quant_max}
    if isinstance(scale, Tensor) or isinstance(zero_point, Tensor):
        qparams = [q.reshape(()) if isinstance(q, Tensor) else q for q in (scale, zero_point)]
        return apply(PER_TENSOR_QPARAMS, (input, *qparams), statics)
    return apply(PER_TENSOR, (input,), {"scale": float(scale),
                                        "zero_point": int(zero_point), **statics})


@export(method=False)
def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min,
                                     quant_max) -> Tensor:
    """Returns ``input`` fake quantized with one ``scale`` and ``zero_point`` per index of
    dimension ``axis`` (1-D Tensors of that length; ``zero_point`` int32, or float/half to
    round ``input / scale + zero_point``); the gradient passes where the rounded value was
    not clamped."""
    quant_min, quant_max = int(quant_min), int(quant_max)
    _check(input, quant_min, quant_max)
    axis = wrap_dim(axis, input.ndim)
    kind = _dtype.TORCH_KINDS.get(zero_point.dtype.name, zero_point.dtype.name)
    if zero_point.dtype.name not in ("int32", "float32", "float16"):
        raise RuntimeError(f"Zero-point must be Int32, Float or Half, found {kind}")
    if scale.dtype.name not in ("float32", "bfloat16"):
        raise RuntimeError("Scale must be Float or BFloat16, found "
                           f"{_dtype.TORCH_KINDS.get(scale.dtype.name, scale.dtype.name)}")
    if scale.ndim != 1:
        raise RuntimeError("scale should be a 1-D tensor")
    if zero_point.ndim != 1:
        raise RuntimeError("zero point should be a 1-D tensor")
    if scale.numel() != zero_point.numel():
        raise RuntimeError("scale and zero-point need to have the same dimensions")
    if scale.numel() != input.shape[axis]:
        raise RuntimeError("dimensions of scale and zero-point are not consistent with input "
                           "tensor")
    _zero_point_in_range(zero_point, quant_min, quant_max)
    return apply(PER_CHANNEL, (input, scale, zero_point), {
        "quant_min": quant_min, "quant_max": quant_max, "axis": axis,
        "float_zp": zero_point.dtype.is_floating_point})
