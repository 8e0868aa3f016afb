"""The remainders of a division: ``fmod`` (C's: the dividend's sign) and ``remainder``
(Python's: the divisor's sign), each a row per PyTorch overload (a number or a Tensor
divisor, a number dividend), with PyTorch's parser errors for operands neither form takes.
"""
from __future__ import annotations

import jax.numpy as jnp

from .._tensor import Tensor
from .dispatch import NOT_IMPLEMENTED
from .parser_errors import REFUSED_OTHERS, input_forms, refuse_input, refuse_other
from .pointwise import _OTHER_SELF
from .promotion import ordered as _ordered
from .registry import OpCall, defop, to_tensor_like, variants

# a number divisor: PyTorch's ``.Scalar`` overload saves nothing (self's gradient is 1);
# a Tensor divisor: its ``.Tensor`` overload, which saves both for the divisor's gradient
_FMOD = defop("fmod", _ordered(jnp.fmod, "fmod"), "FmodBackward0", (), names="self other ->")
_FMOD_T = defop("fmod_tensor", _ordered(jnp.fmod, "fmod"), "FmodBackward1", {0: (), 1: (0, 1)},
                names=_OTHER_SELF)
_REMAINDER = defop("remainder", _ordered(jnp.remainder, "remainder"), "RemainderBackward0", (),
                   names="self other ->")
_REMAINDER_T = defop("remainder_tensor", _ordered(jnp.remainder, "remainder"), "RemainderBackward1",
                     {0: (), 1: (0, 1)}, names=_OTHER_SELF)
# a number dividend (``2.0 % y``): PyTorch's ``.Scalar_Tensor`` overload, not differentiable
_REMAINDER_ST = defop("remainder.Scalar_Tensor", jnp.remainder, NOT_IMPLEMENTED, ())


@variants(inplace=True, forms=input_forms("fmod"))  # (each form's errors its own)
def fmod(input, other) -> OpCall:
    """``fmod(input, other)``: the C-style remainder of ``input / other`` (the dividend's
    sign)."""
    if not isinstance(input, Tensor):
        refuse_input("fmod", input, other)
    if isinstance(other, Tensor):
        return _FMOD_T, (input, other), None
    if other.__class__ in REFUSED_OTHERS:
        refuse_other("fmod", input, other)
    return _FMOD, (input, to_tensor_like(other)), None


@variants(inplace=True, forms=input_forms("remainder"))  # (each form's errors its own)
def remainder(input, other) -> OpCall:
    """``remainder(input, other)``: the Python-style remainder of ``input / other`` (the
    divisor's sign); ``input`` may be a number."""
    if not isinstance(input, Tensor):
        refuse_input("remainder", input, other)
        return _REMAINDER_ST, (to_tensor_like(input), to_tensor_like(other)), None
    if isinstance(other, Tensor):
        return _REMAINDER_T, (input, other), None
    if other.__class__ in REFUSED_OTHERS:
        refuse_other("remainder", input, other)
    return _REMAINDER, (input, to_tensor_like(other)), None
