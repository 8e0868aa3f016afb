"""What a binary row's ``other`` operand may be, and PyTorch's parser's words where it may
not: in its function, its in-place method (``x.mul_(None)``) and its operator (``x % "a"``,
which PyTorch leaves to Python: "unsupported operand type(s) for %: 'Tensor' and 'str'")."""
from __future__ import annotations

import functools

import jax
import numpy as np

from .._tensor import Tensor
from .numpy_operands import by_numpy
from .parser_errors import arguments_error, as_method, invalid_arguments, not_a

LOGICAL = ("logical_and", "logical_or", "logical_xor")
# the rows whose only signature takes a Tensor ``other`` (``values`` for heaviside): PyTorch's
# parser refuses a Python number as it refuses an array
TENSOR_ONLY = {"maximum": "other", "minimum": "other", "fmax": "other", "fmin": "other",
               "atan2": "other", "hypot": "other", "logaddexp": "other", "logaddexp2": "other",
               "ldexp": "other", "gcd": "other", "lcm": "other", "heaviside": "values"}
ONE_SIGNATURE = ("mul", *TENSOR_ONLY)  # a Tensor
FORMS = ("(Tensor other)", "(Number other)")
# what ``to_tensor_like`` keeps as it is: tested by class, the hot path of an operator
OPERANDS = frozenset((Tensor, int, float, bool, complex))
# what a binary row's ``other`` may be beside a Tensor: a number (a NumPy one too), or an
# array an operator leaves to NumPy (a JAX array: a constant)
OPERAND_KINDS = (int, float, complex, np.generic, np.ndarray, jax.Array)
# an operator's other operand: PyTorch's operators turn its parser's TypeError for anything
# else (None, a string, a list) into NotImplemented, so Python raises its own "unsupported
# operand type(s)" (or asks the other operand)
OPERATOR_OPERANDS = (Tensor, *OPERAND_KINDS)
IN_PLACE_OPERANDS = (Tensor, int, float, complex, np.generic, jax.Array)  # no NumPy array


NOT_GIVEN = object()  # an operand not given (``x.eq()``)


def refused(name, other):
    """PyTorch's parser's TypeError for an array or a list as a binary row's operand."""
    if name in LOGICAL:
        return not_a(name, "other", other, "Tensor", 2)
    if name in ONE_SIGNATURE:
        return not_a(name, TENSOR_ONLY.get(name, "other"), other, "Tensor")
    return invalid_arguments(name, FORMS, other)


_OUT = ", *, Tensor out = None"
# the function forms PyTorch adds to ``(Tensor input, Tensor other)`` and ``(Tensor input,
# Number other)`` for the rows that have a Number form (``out=`` where it is given)
_NUMBER_FORMS = {"floor_divide": ("(Tensor input, Number other)",),
                 "xlogy": (f"(Number self, Tensor other{_OUT})",
                           f"(Tensor input, Number other{_OUT})"),
                 **dict.fromkeys(("bitwise_and", "bitwise_or", "bitwise_xor"), (
                     "(Number self, Tensor other)", f"(Tensor input, Number other{_OUT})"))}


def signatures(name):
    """PyTorch's signatures of the binary row ``name``: its method's and its function's,
    as its parser lists them (a row without a Number form has one of each)."""
    if name == "multiply":  # (mul's alias, its own signatures)
        return FORMS, (f"(Tensor input, Tensor other{_OUT})", "(Tensor input, Number other)")
    if name in LOGICAL or name in ONE_SIGNATURE:
        other = TENSOR_ONLY.get(name, "other")
        return (f"(Tensor {other})",), (f"(Tensor input, Tensor {other}{_OUT})",)
    return FORMS, (f"(Tensor input, Tensor other{_OUT})",
                   *_NUMBER_FORMS.get(name, (f"(Tensor input, Number other{_OUT})",)))


def call_error(name, forms, args, more, kwargs):
    """PyTorch's TypeError for a call of a binary row's form (``forms``: its signatures)
    with ``args`` (the operands given, ``NOT_GIVEN`` for one that was not), ``more`` positional
    arguments and ``kwargs``."""
    err = arguments_error(name, forms, (*(a for a in args if a is not NOT_GIVEN), *more), kwargs)
    err.refused_call = True  # (worded again where the operands came by keyword)
    return err


def with_keywords(fn, input, other, more, kwargs):
    """A Tensor operator given keywords or more operands (``x.__sub__(1, alpha=2)``,
    ``x.__truediv__(2, rounding_mode="floor")``): PyTorch's operators are their methods,
    parsers included, and return NotImplemented for the TypeError of a call the method
    refuses (a keyword it does not take, ``out=``, an operand too many or too few)."""
    if more or "out" in kwargs:
        return NotImplemented
    try:
        return fn(input, **kwargs) if other is NOT_GIVEN else fn(input, other, **kwargs)
    except TypeError:
        return NotImplemented


def operator_of(fn, in_place=False, numpy_name=None):
    """``fn(input, other)`` as a Tensor operator (``__mod__``, ``__rsub__``, ``__imul__``):
    NotImplemented for an ``other`` PyTorch's parser refuses. ``in_place``: an in-place or
    a reflected operator, which also refuses a NumPy array (so Python computes
    ``x * array``, a new Tensor, instead, or raises for ``array ** x``), as with PyTorch's.
    ``numpy_name``: a NumPy array operand is computed by NumPy (``by_numpy``), as PyTorch
    leaves it to NumPy."""
    kinds = IN_PLACE_OPERANDS if in_place else OPERATOR_OPERANDS

    @functools.wraps(fn)  # its name (what __torch_function__ sees) and signature
    def operator(input, other=NOT_GIVEN, *more, **kwargs):
        if kwargs or more:  # (an in-place ``+=``'s method's: ``x.__iadd__(1, alpha=2)``)
            return with_keywords(fn, input, other, more, kwargs)
        if other.__class__ in OPERANDS:
            return fn(input, other)
        if numpy_name is not None and other.__class__ is np.ndarray:
            return by_numpy(numpy_name, input, other)
        if isinstance(other, kinds):
            return fn(input, other)
        return NotImplemented
    return operator


def inplace_operand(name):
    """The parser's check of a binary row's in-place method's arguments (``x.mul_(None)``):
    one ``other``, which its function would take (a Tensor only, for a row without a
    Number signature), else its error worded for the method (``mul_()``)."""
    method = name + "_"
    forms = signatures(name)[0]
    tensor_only = name in LOGICAL or name in TENSOR_ONLY

    def check(*args, **kwargs):
        if kwargs or len(args) != 1:
            raise arguments_error(method, forms, args, kwargs)
        other = args[0]
        if other.__class__ is Tensor:
            return
        if tensor_only and not isinstance(other, Tensor) or other.__class__ not in OPERANDS and (
                not isinstance(other, OPERATOR_OPERANDS) or other.__class__ is np.ndarray):
            raise arguments_error(method, forms, args, {})
    return check
