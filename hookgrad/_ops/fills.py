"""Writes of a constant or a copy: ``zero_``, ``fill_``, ``fill`` (out of place) and
``copy_``, with PyTorch's node names (``FillBackward2`` for a number written in place,
``FillBackward3`` for a 0-d Tensor, ``CopyBackwards``).
"""
from __future__ import annotations

import jax.numpy as jnp

from .. import _errors
from .._tensor import Tensor
from .dispatch import apply
from .registry import defop, export, to_tensor_like

_ZERO = defop("zero", jnp.zeros_like, "ZeroBackward0", ())
_FILL = defop("fill", lambda x, v: jnp.full_like(x, v), "FillBackward2", ())
_FILL_T = defop("fill_tensor", lambda x, v: jnp.full_like(x, v), "FillBackward3", ())


def _copy(x, src):
    if jnp.iscomplexobj(src) and not jnp.iscomplexobj(x):  # warned in copy_, as PyTorch
        src = jnp.real(src)
    return jnp.broadcast_to(src, x.shape).astype(x.dtype)


_COPY = defop("copy", _copy, "torch::autograd::CopyBackwards", ())


@export
def zero_(self) -> Tensor:
    """``zero_(self)``: fills ``self`` with zeros, in place."""
    return apply(_ZERO, (self,), out=self)


@export
def fill_(self, value) -> Tensor:
    """``fill_(self, value)``: fills ``self`` with ``value`` (a number or a 0-d Tensor)."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.ndim} dimensions.")
        return apply(_FILL_T, (self, value), out=self)
    return apply(_FILL, (self, value), out=self)


_FILL_OUT = defop("fill_out", lambda x, v: jnp.full_like(x, v), "FillBackward0", ())
_FILL_OUT_T = defop("fill_out_tensor", lambda x, v: jnp.full_like(x, v), "FillBackward1", ())


@export(method=False)
def fill(input, value) -> Tensor:
    """``fill(input, value)``: a new tensor shaped as ``input``, every element ``value`` (a
    number or a 0-d Tensor, whose gradient is the sum of the output's)."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.ndim} dimensions.")
        return apply(_FILL_OUT_T, (input, value))
    return apply(_FILL_OUT, (input, value))


@export(function=False)
def copy_(self, src, non_blocking=False) -> Tensor:
    """``copy_(src, non_blocking=False)``: ``src`` (broadcast) written into ``self``."""
    src = to_tensor_like(src)
    if isinstance(src, Tensor):
        if src.dtype.is_complex and not self.dtype.is_complex:
            _errors.warn("Casting complex values to real discards the imaginary part")
        try:
            jnp.broadcast_shapes(src.shape, self.shape)
        except ValueError:
            raise RuntimeError(f"The size of tensor a ({self.shape[-1]}) must match the size of "
                               f"tensor b ({src.shape[-1]}) at non-singleton dimension "
                               f"{self.ndim - 1}") from None
    return apply(_COPY, (self, src), out=self)
