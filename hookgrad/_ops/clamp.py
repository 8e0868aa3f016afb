"""``clamp``, ``clamp_min`` and ``clamp_max`` (alias ``clip``): bounding elementwise.

A number bound is a static argument of the row; a Tensor bound is an operand that promotes
with ``input`` and gets a gradient where it is the result, as in PyTorch.
"""
from __future__ import annotations

import jax.numpy as jnp

from .._tensor import Tensor
from .parser_errors import invalid_arguments
from .promotion import clamping as _clamping, ordered as _ordered, tensor_operands
from .registry import OpCall, defop, to_tensor_like, variants


def _at_least(x, lo):
    return jnp.where(x < lo, lo, x)


def _at_most(x, hi):
    return jnp.where(x > hi, hi, x)


@tensor_operands  # Tensor bounds promote with ``x`` (a missing one is None)
def _clamp(x, lo, hi, has_lo, has_hi):
    # selects rather than jnp.clip: the gradient reaches ``x`` on the bounds inclusive and
    # a Tensor bound where it is the result, as in PyTorch (jnp.clip halves it on ties)
    if has_lo:
        x = jnp.where(x < lo, lo, x)
    if has_hi:
        x = jnp.where(x > hi, hi, x)
    return x


_CLAMP = defop("clamp", _clamping(_clamp), "ClampBackward1",
               names="self min max -> self min max")
_CLAMP_T = defop("clamp_tensor", _clamping(_clamp), "ClampBackward0", scalar_edges=(1, 2),
                 names="self min max -> max min self")  # a missing bound: None, no edge
_CLAMP_MIN = defop("clamp_min", _clamping(_at_least), "ClampMinBackward0",
                   names="self min -> self min")
# a Tensor bound: PyTorch's kernels are maximum's and minimum's
_CLAMP_MIN_T = defop("clamp_min_tensor", _ordered(_at_least, "maximum"), "ClampMinBackward1",
                     names="self min -> min self")
_CLAMP_MAX = defop("clamp_max", _clamping(_at_most), "ClampMaxBackward0",
                   names="self max -> self max")
_CLAMP_MAX_T = defop("clamp_max_tensor", _ordered(_at_most, "minimum"), "ClampMaxBackward1",
                     names="self max -> max self")


_OUT = ", *, Tensor out = None"
_FORMS = (("(Tensor min = None, Tensor max = None)", "(Number min = None, Number max = None)"),
          (f"(Tensor input, Tensor min = None, Tensor max = None{_OUT})",
           f"(Tensor input, Number min = None, Number max = None{_OUT})"))


@variants(inplace=True, inplace_function=True, aliases=("clip",), forms=_FORMS)
def clamp(input, min=None, max=None) -> OpCall:
    """``clamp(input, min=None, max=None)`` (alias ``clip``): ``min(max(input, min), max)``.

    The gradient passes where ``min <= input <= max``; Tensor bounds get it where they are
    the result.
    """
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    st = {"has_lo": min is not None, "has_hi": max is not None}
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        lo = None if min is None else to_tensor_like(min)
        hi = None if max is None else to_tensor_like(max)
        return _CLAMP_T, (input, lo, hi), st
    if min.__class__ in _NOT_BOUNDS or max.__class__ in _NOT_BOUNDS:  # (the method's forms)
        raise invalid_arguments("clamp", _CLAMP_FORMS, *((min,) if max is None else (min, max)))
    return _CLAMP, (input, 0 if min is None else min, 0 if max is None else max), st


_NOT_BOUNDS = (str, list, tuple)  # PyTorch's parser takes a Tensor or a number as a bound
_CLAMP_FORMS = _FORMS[0]


@variants(inplace=True, inplace_function=True)
def clamp_min(input, min) -> OpCall:
    """``clamp_min(input, min)``: :func:`clamp` with a lower bound only."""
    if isinstance(min, Tensor):
        return _CLAMP_MIN_T, (input, to_tensor_like(min)), None
    return _CLAMP_MIN, (input, min), None


@variants(inplace=True, inplace_function=True)
def clamp_max(input, max) -> OpCall:
    """``clamp_max(input, max)``: :func:`clamp` with an upper bound only."""
    if isinstance(max, Tensor):
        return _CLAMP_MAX_T, (input, to_tensor_like(max)), None
    return _CLAMP_MAX, (input, max), None
