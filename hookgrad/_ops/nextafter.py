"""``torch.nextafter``: the next floating-point value after ``input`` towards ``other``.

JAX gives ``nextafter`` no derivative; PyTorch's passes the gradient to ``input`` unchanged
where it differs from ``other`` (the step is below the precision of anything downstream) and
zero where they are equal (the result is ``other`` there), and gives ``other`` zero."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .._dtype import torch_kind
from .._tensor import Tensor
from .parser_errors import not_a, refused_call
from .registry import OpCall, defop, variants
from .type_queries import result_type


@jax.custom_jvp
def _nextafter(x, y):
    return jnp.nextafter(x, y)


_nextafter.defjvps(lambda g, ans, x, y: jnp.where(x != y, g, 0).astype(ans.dtype),
                   lambda g, ans, x, y: jnp.zeros_like(ans))

_NEXTAFTER = defop("nextafter", _nextafter, "NextafterBackward0",
                   names="self other -> other self")


_FORMS = (("(Tensor other)",), ("(Tensor input, Tensor other, *, Tensor out = None)",))


def _tensors(input, other):
    """PyTorch's parser takes Tensors only: else its error, worded for the form called."""
    for arg, v in (("input", input), ("other", other)):
        if not isinstance(v, Tensor):
            raise refused_call(not_a("nextafter", arg, v, "Tensor"))


@variants(inplace=True, forms=_FORMS)
def nextafter(input, other) -> OpCall:
    """``nextafter(input, other, *, out=None)``: the next floating-point value after
    ``input`` towards ``other``, elementwise (floating inputs only)."""
    if input.__class__ is not Tensor or other.__class__ is not Tensor:
        _tensors(input, other)
    # PyTorch's promotion: a 0-d tensor lifts the kind only, not the precision
    common = result_type(input, other)
    if not common.is_floating_point:
        raise NotImplementedError(f"\"nextafter_cpu\" not implemented for "
                                  f"'{torch_kind(common.np)}'")
    if input.dtype is not common or other.dtype is not common:
        input, other = input.to(common), other.to(common)
    return _NEXTAFTER, (input, other), None
