"""A binary row's forms over one body: its function, its method, its Tensor operator (``x
< y``) and its reflected operator (``2 * x``), which differ in what an array or a list
operand gets and in how a call their parser refuses is answered: the function's and the
method's TypeErrors list their own signatures (``eq()``: ``(Tensor input, Tensor other, *,
Tensor out = None)`` or ``(Tensor other)``), an operator's is NotImplemented."""
from __future__ import annotations

import inspect

import numpy as np

from .._tensor import Tensor
from .binary_operands import (LOGICAL, NOT_GIVEN, OPERAND_KINDS, TENSOR_ONLY,
                              call_error)
from .dispatch import apply
from .numpy_operands import BY_NUMPY, by_numpy
from .parser_errors import NUMBERS_AS_TENSORS
from .registry import NUMBERS, broadcast_error, reraise, to_tensor_like, write_out

REFLECTED_FORM = "reflected"
_ORDERING = ("lt", "le", "gt", "ge")


def read_by_numpy(input):
    """``input <op> array``: PyTorch leaves it to NumPy, which reads ``input`` by numpy()."""
    if isinstance(input, Tensor) and input._requires_grad:
        input.numpy()


def binary_form(op, name, operator):
    """A binary row's function or method (``operator``: the form's signatures, which its
    parser errors list), its Tensor operator's (True: ``x < y``) or its reflected
    operator's (``REFLECTED_FORM``: ``2 * x``): one body for all, which differ only in
    what an array or list operand gets, and in the errors: an operator's are NotImplemented."""
    logical = name in LOGICAL or name in TENSOR_ONLY  # (no Number signature)
    ordering = name in _ORDERING
    forms, operator = (operator, False) if operator.__class__ is tuple else (None, operator)
    is_method = forms is not None and not forms[0].startswith("(Tensor input")
    takes_out = forms is not None and not is_method  # (the function: no with_out around it)
    # a number ``input``: where a signature takes one (``bitwise_and(2, t)``), or the parser
    # reads a number as a Tensor (``mul(2, t)``); an operator's ``input`` is a Tensor
    number_input = forms is None or name in NUMBERS_AS_TENSORS or any(
        f.startswith("(Number self") for f in forms)
    other_name = TENSOR_ONLY.get(name, "other")

    def refused(input, other, more=(), kwargs=None):
        """The parser's TypeError for the call (its arguments after ``self`` for a method)."""
        return call_error(name, forms, (input, other)[is_method:], more, kwargs or {})

    def by_keyword(input, other, more, kwargs):
        """A call with keywords or more arguments: its operands by name (``eq(x,
        other=y)``), else the parser's refusal (for an operator NotImplemented)."""
        given = dict(kwargs)
        a, b = input, other
        if a is NOT_GIVEN and "input" in given and not is_method:
            a = given.pop("input")
        if b is NOT_GIVEN and other_name in given:
            b = given.pop(other_name)
        out = given.pop("out", None) if takes_out else None
        if not more and not given and a is not NOT_GIVEN and b is not NOT_GIVEN and (
                out is None or isinstance(out, Tensor) or name in NUMBERS_AS_TENSORS):
            try:
                return fn(a, b) if out is None else write_out(name, fn, (a, b), {}, out)
            except TypeError as e:  # worded as given, keywords named
                if not getattr(e, "refused_call", False):
                    raise
        if operator:
            return NotImplemented
        raise refused(input, other, more, kwargs) from None

    # NOTE: the operands are positional only, with ``more`` and ``kwargs`` for the rest:
    # one test per call (and an empty dict), where Python's own TypeError would word a
    # call of other arguments its way; PyTorch's parser words it (and its operators return
    # NotImplemented: ``x.__mul__(y, foo=1)``, ``x.__eq__()``)
    def fn(input=NOT_GIVEN, other=NOT_GIVEN, /, *more, **kwargs):
        if more or kwargs:
            return by_keyword(input, other, more, kwargs)
        if other.__class__ is not Tensor and not isinstance(other, Tensor):
            if operator and not isinstance(other, OPERAND_KINDS):
                return NotImplemented  # (see operator_of; ``x.__eq__()`` too)
            if logical or other.__class__ in (np.ndarray, list):
                # PyTorch's parser takes neither; an operator leaves an array to NumPy (an
                # ordering's to Python: "'<' not supported between instances of ...")
                if not operator:  # (no operator's row is logical)
                    raise refused(input, other)
                if ordering:
                    return NotImplemented
            if other.__class__ is np.ndarray:
                if operator is REFLECTED_FORM:
                    return NotImplemented
                if operator and name in BY_NUMPY:
                    return by_numpy(name, input, other)
                read_by_numpy(input)
            if other.__class__ not in NUMBERS and not isinstance(other, OPERAND_KINDS):
                raise refused(input, other)  # None, a str, not given ...
            other = other if other.__class__ in NUMBERS else other.item() \
                if isinstance(other, np.generic) else to_tensor_like(other)
        if input.__class__ is not Tensor and not isinstance(input, Tensor):
            if input.__class__ not in NUMBERS or not number_input:
                raise refused(input, other)
            input = to_tensor_like(input)
        try:  # bapply, inlined: the hot path of every binary operator
            return apply(op, (input, other))
        except (TypeError, ValueError):
            raise broadcast_error((input, other)) or reraise() from None
    fn.__name__ = fn.__qualname__ = name
    fn.__annotations__ = {"return": "Tensor"}
    fn.__signature__ = _FUNCTION_SIGNATURE if takes_out else _OPERANDS_SIGNATURE
    return fn


_OPERANDS_SIGNATURE = inspect.Signature(
    [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in ("input", "other")],
    return_annotation="Tensor")
_FUNCTION_SIGNATURE = _OPERANDS_SIGNATURE.replace(parameters=[
    *_OPERANDS_SIGNATURE.parameters.values(),
    inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None,
                      annotation="Optional[Tensor]")])
