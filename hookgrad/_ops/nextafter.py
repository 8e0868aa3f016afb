"""``torch.nextafter``: the next floating-point value after ``input`` towards ``other``.

JAX gives ``nextafter`` no derivative; PyTorch's passes the gradient to ``input`` unchanged
where it differs from ``other`` (the step is below the precision of anything downstream) and
zero where they are equal (the result is ``other`` there), and gives ``other`` zero."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .._dtype import TORCH_KINDS, from_jax
from .._tensor import Tensor
from .registry import OpCall, defop, variants


@jax.custom_jvp
def _nextafter(x, y):
    return jnp.nextafter(x, y)


_nextafter.defjvps(lambda g, ans, x, y: jnp.where(x != y, g, 0).astype(ans.dtype),
                   lambda g, ans, x, y: jnp.zeros_like(ans))

_NEXTAFTER = defop("nextafter", _nextafter, "NextafterBackward0",
                   names="self other -> other self")


@variants(inplace=True)
def nextafter(input, other) -> OpCall:
    """``nextafter(input, other, *, out=None)``: the next floating-point value after
    ``input`` towards ``other``, elementwise (floating inputs only)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"nextafter(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    common = jnp.promote_types(input._data.dtype, other._data.dtype)  # PyTorch promotes
    if not jnp.issubdtype(common, jnp.floating):
        raise NotImplementedError(f"\"nextafter_cpu\" not implemented for "
                                  f"'{TORCH_KINDS[jnp.dtype(common).name]}'")
    if input._data.dtype != common or other._data.dtype != common:
        input, other = input.to(from_jax(common)), other.to(from_jax(common))
    return _NEXTAFTER, (input, other), None
