"""Elementwise ops: unary math, binary arithmetic, comparisons, selection (clamping is in
``clamp.py``; writes of a constant or a copy, ``zero_``/``fill_``/``copy_``, in ``fills.py``).

One ``OpDef`` row per op: name, JAX forward, torch node name, what is saved, and its
public forms. Backward is JAX's vjp of the forward unless the row saves the output
(``OUT``), where the backward is a formula of the output: PyTorch saves the result of
those ops (an in-place change of it is an error in backward, and pack hooks see it), so
the input is not at hand. Ops whose function picks among variants (a Tensor bound, an
alpha, a rounding mode) are ``@variants`` choosers.
"""
from __future__ import annotations

import dataclasses
import inspect

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from .binary_forms import REFLECTED_FORM, binary_form
from .binary_operands import (NOT_GIVEN, OPERANDS, OPERATOR_OPERANDS, inplace_operand,
                              signatures, with_keywords)
from .checked_conversion import check_fits, check_value_tensor
from .dispatch import NOT_IMPLEMENTED, OUT, apply
from .numpy_operands import BY_NUMPY, by_numpy
from .parser_errors import (REFUSED_OTHERS, input_forms, integer, not_a, refuse_input,
                            refuse_other, refused_call)
from .promotion import (NOT_FOR_COMPLEX as _MAX_C, clamping as _clamping,
                        floats_only as _floats_only, ordered as _ordered,
                        real_only, refuses_complex, rounding as _rounding,
                        subtraction as _subtraction, tensor_operands, _tensor_like)
from .registry import (FUNCTIONS, NUMBERS, OpCall, OpDef, bapply, broadcast_error, defop,
                       export, reraise, to_tensor_like, variants)


def _abs(x):
    # x * sign(x): JAX's derivative of this is sign(x), 0 at 0 as in PyTorch (jnp.abs gives 1)
    if jnp.issubdtype(x.dtype, jnp.floating):
        return x * jnp.sign(x)
    return jnp.abs(x)


def _inexact(fn):
    """``fn`` taking an integer or bool ``x`` in the default float type, as PyTorch's
    floating ops (and jnp's own math functions, but not these) promote it."""
    def promoting(x):
        if not jnp.issubdtype(x.dtype, jnp.inexact):
            x = x.astype(jnp.result_type(float))
        return fn(x)
    return promoting


def _sign(x):
    return x if x.dtype == jnp.bool_ else jnp.sign(x)  # a bool is its own sign


def _square(x):
    # PyTorch squares a bool as pow(x, 2) does: into int64
    return jnp.square(x.astype(jnp.int64) if x.dtype == jnp.bool_ else x)


def _bool_as_number(fn):
    """``fn`` of a bool operand beside a floating one as of 0 and 1 in uint8: XLA rewrites
    ``float(mask) * c`` and ``float(mask) / c`` into selects of ``c`` and 0, so a False
    times inf or over 0 gives 0 where PyTorch's arithmetic gives NaN."""
    def f(a, b):
        if _is_bool(a) and _floating_operand(b):
            a = a.astype(jnp.uint8)
        if _is_bool(b) and _floating_operand(a):
            b = b.astype(jnp.uint8)
        return fn(a, b)
    return f


def _is_bool(x):
    return getattr(x, "dtype", None) == jnp.bool_


def _floating_operand(x):
    """Whether ``x`` is floating or complex; an operand may be a Python number."""
    if isinstance(x, (float, complex)):
        return True
    dtype = getattr(x, "dtype", None)
    return dtype is not None and jnp.issubdtype(dtype, jnp.inexact)


def _fmax(a, b):
    # written as a select so the gradient goes where PyTorch sends it: to ``a`` on ties and
    # wherever ``b`` is NaN
    return jnp.where((a >= b) | jnp.isnan(b), a, b)


def _fmin(a, b):
    return jnp.where((a <= b) | jnp.isnan(b), a, b)


def _pow(x, y):
    # 0 ** 0 is 1 with zero gradients, as PyTorch masks them; jnp.power's derivative there
    # is 0 * inf = nan. Selecting base 1 at that point keeps the value and zeroes both.
    both0 = (x == 0) & (y == 0)
    return jnp.power(jnp.where(both0, jnp.ones_like(x), x), y)


# PyTorch's names of what binary ops save (``saved_names``); it packs ``other`` first
_OTHER_SELF = "self other -> other self"
# NOTE: output-based backward formulas, only where PyTorch saves the result.
# ``inplace_function``: PyTorch also exports the in-place form (``torch.sin_(x)``).
_UNARY = [
    OpDef("exp", jnp.exp, "ExpBackward0", OUT, lambda y, g: g * y, inplace_function=True),
    OpDef("tanh", jnp.tanh, "TanhBackward0", OUT, lambda y, g: g * (1 - y * y),
          inplace_function=True),
    OpDef("sigmoid", _inexact(jax.nn.sigmoid), "SigmoidBackward0", OUT,
          lambda y, g: g * y * (1 - y), inplace_function=True),
    OpDef("relu", _clamping(jax.nn.relu), "ReluBackward0", OUT,
          lambda y, g: jnp.where(y > 0, g, jnp.zeros_like(g)), inplace_function=True),
    OpDef("log", jnp.log, "LogBackward0", inplace_function=True),
    OpDef("log2", jnp.log2, "Log2Backward0", inplace_function=True),
    OpDef("log10", jnp.log10, "Log10Backward0", inplace_function=True),
    OpDef("log1p", jnp.log1p, "Log1PBackward0", inplace_function=True),
    OpDef("expm1", jnp.expm1, "Expm1Backward0", inplace_function=True,
          names="self -> result"),
    OpDef("exp2", jnp.exp2, "Exp2Backward0", inplace_function=True,
          names="self -> result"),
    OpDef("sqrt", jnp.sqrt, "SqrtBackward0", inplace_function=True,
          names="self -> result"),
    OpDef("rsqrt", _inexact(jax.lax.rsqrt), "RsqrtBackward0", inplace_function=True,
          names="self -> result"),
    OpDef("reciprocal", jnp.reciprocal, "ReciprocalBackward0", inplace_function=True,
          names="self -> result"),
    OpDef("square", _square, "PowBackward0", inplace_function=True,
          names="self -> self exponent=2"),
    OpDef("abs", _abs, "AbsBackward0", inplace_function=True),
    OpDef("sign", refuses_complex(_sign, NotImplementedError, "Unlike NumPy, torch.sign is not "
                                  "intended to support complex numbers. Please use torch.sgn "
                                  "instead."), "SignBackward0", ()),
    OpDef("sin", jnp.sin, "SinBackward0", inplace_function=True),
    OpDef("cos", jnp.cos, "CosBackward0", inplace_function=True),
    OpDef("tan", jnp.tan, "TanBackward0", inplace_function=True,
          names="self -> result"),
    OpDef("asin", jnp.arcsin, "AsinBackward0", inplace_function=True),
    OpDef("acos", jnp.arccos, "AcosBackward0", inplace_function=True),
    OpDef("atan", jnp.arctan, "AtanBackward0", inplace_function=True),
    OpDef("sinh", jnp.sinh, "SinhBackward0", inplace_function=True),
    OpDef("cosh", jnp.cosh, "CoshBackward0", inplace_function=True),
    OpDef("asinh", jnp.arcsinh, "AsinhBackward0", inplace_function=True),
    OpDef("acosh", jnp.arccosh, "AcoshBackward0", inplace_function=True),
    OpDef("atanh", jnp.arctanh, "AtanhBackward0", inplace_function=True),
    # PyTorch's CPU kernels of these are its vectorized (``_vml``) ones: no complex form
    OpDef("erf", real_only("erf_vml_cpu", jax.scipy.special.erf), "ErfBackward0",
          inplace_function=True),
    OpDef("erfc", real_only("erfc_vml_cpu", jax.scipy.special.erfc), "ErfcBackward0",
          inplace_function=True),
    OpDef("erfinv", real_only("erfinv_vml_cpu", jax.scipy.special.erfinv), "ErfinvBackward0"),
    OpDef("lgamma", real_only("lgamma_vml_cpu", jax.scipy.special.gammaln), "LgammaBackward0"),
    OpDef("digamma", jax.scipy.special.digamma, "DigammaBackward0"),
    OpDef("floor", _rounding(jnp.floor, "floor"), "FloorBackward0", (),
          inplace_function=True),
    OpDef("ceil", _rounding(jnp.ceil, "ceil"), "CeilBackward0", (),
          inplace_function=True),
    OpDef("trunc", _rounding(jnp.trunc, "trunc"), "TruncBackward0", (),
          inplace_function=True),
    OpDef("frac", real_only("frac_cpu", lambda x: x - jnp.trunc(x)), "FracBackward0", (),
          inplace_function=True),
    OpDef("logical_not", jnp.logical_not, None),
    OpDef("isnan", jnp.isnan, None, inplace=False),
    OpDef("isinf", jnp.isinf, None, inplace=False),
    OpDef("isfinite", jnp.isfinite, None, inplace=False),
    OpDef("bitwise_not", jnp.invert, None),
]

_BINARY = [
    OpDef("mul", tensor_operands(_bool_as_number(jnp.multiply)), "MulBackward0",
          {0: (1,), 1: (0,)}, aliases=("multiply",), scalar_edges=True, names=_OTHER_SELF),
    OpDef("maximum", _ordered(jnp.maximum, "maximum", _MAX_C, RuntimeError),
          "MaximumBackward0", names=_OTHER_SELF),
    OpDef("minimum", _ordered(jnp.minimum, "minimum", _MAX_C, RuntimeError),
          "MinimumBackward0", names=_OTHER_SELF),
    OpDef("fmax", _ordered(_fmax, "fmax", _MAX_C, RuntimeError), "FmaxBackward0",
          names=_OTHER_SELF),
    OpDef("fmin", _ordered(_fmin, "fmin", _MAX_C, RuntimeError), "FminBackward0",
          names=_OTHER_SELF),
    OpDef("atan2", _ordered(jnp.arctan2, "atan2"), "Atan2Backward0", names=_OTHER_SELF),
    OpDef("hypot", _ordered(jnp.hypot, "hypot"), "HypotBackward0",
          names="self other -> other self result"),
    OpDef("xlogy", tensor_operands(real_only("xlogy_cpu", jax.scipy.special.xlogy)),
          "XlogyBackward0",
          inplace_function=True, names=_OTHER_SELF),
    OpDef("floor_divide", _ordered(jnp.floor_divide, "div_floor"), NOT_IMPLEMENTED, ()),
    OpDef("eq", tensor_operands(jnp.equal), None),
    OpDef("ne", tensor_operands(jnp.not_equal), None, aliases=("not_equal",)),
    OpDef("lt", _ordered(jnp.less, "lt"), None, aliases=("less",)),
    OpDef("le", _ordered(jnp.less_equal, "le"), None, aliases=("less_equal",)),
    OpDef("gt", _ordered(jnp.greater, "gt"), None, aliases=("greater",)),
    OpDef("ge", _ordered(jnp.greater_equal, "ge"), None, aliases=("greater_equal",)),
    OpDef("logical_and", jnp.logical_and, None),
    OpDef("logical_or", jnp.logical_or, None),
    OpDef("logical_xor", jnp.logical_xor, None),
    OpDef("bitwise_and", tensor_operands(jnp.bitwise_and), None),
    OpDef("bitwise_or", tensor_operands(jnp.bitwise_or), None),
    OpDef("bitwise_xor", tensor_operands(jnp.bitwise_xor), None),
]


def _unary(row):
    op = row.op()
    name = row.name

    def fn(input):
        if input.__class__ is not Tensor and not isinstance(input, Tensor):
            raise not_a(name, "input", input, "Tensor")  # a number or an array too
        return apply(op, (input,))
    row.expose(fn, op)
    return op


# the rows with a Tensor operator (``x * y``, ``x == y``, ``x & y``)
_OPERATOR_ROWS = ("mul", "floor_divide", "eq", "ne", "lt", "le", "gt", "ge", "bitwise_and",
                  "bitwise_or", "bitwise_xor")
OPERATORS = {}  # name -> the Tensor operator's function, where it is not the method
# the reflected operators (``2 * x``: ``__rmul__``) of the rows that have one: a NumPy array
# on the left is NotImplemented, as PyTorch's are (NumPy deferred to the Tensor: Python
# raises "unsupported operand type(s)")
_REFLECTED_ROWS = ("mul", "bitwise_and", "bitwise_or", "bitwise_xor")
REFLECTED = {}


def _binary(row):
    op = row.op()
    for name in (row.name, *row.aliases):  # each alias its own forms, which name it
        method_forms, function_forms = signatures(name)
        dataclasses.replace(row, name=name, aliases=()).expose(
            binary_form(op, name, function_forms), op, inplace_operand(name),
            binary_form(op, name, method_forms))
    if row.name in _OPERATOR_ROWS:
        OPERATORS[row.name] = binary_form(op, row.name, True)
    if row.name in _REFLECTED_ROWS:
        REFLECTED[row.name] = binary_form(op, row.name, REFLECTED_FORM)
    return op


UNARY = {row.name: _unary(row) for row in _UNARY}    # name -> Op
BINARY = {row.name: _binary(row) for row in _BINARY}

# ---- arithmetic with variants: alpha, a number on the left, rounding modes
_ALPHA1 = "self other -> alpha=1"


_ADD = defop("add", tensor_operands(jnp.add), "AddBackward0", (), scalar_edges=True, names=_ALPHA1)
_SUB = defop("sub", _subtraction(jnp.subtract), "SubBackward0", (), scalar_edges=True,
             names=_ALPHA1)
_DIV = defop("div", tensor_operands(_bool_as_number(jnp.true_divide)), "DivBackward0",
             {0: (1,), 1: (0, 1)}, scalar_edges=True, names=_OTHER_SELF)
# alpha is a static argument (rarely varied)
_ADD_ALPHA = defop("add_alpha", tensor_operands(lambda a, b, alpha: a + alpha * b),
                   "AddBackward0", (), scalar_edges=True, names="self other -> alpha")
_SUB_ALPHA = defop("sub_alpha", _subtraction(lambda a, b, alpha: a - alpha * b), "SubBackward0", (),
                   scalar_edges=True, names="self other -> alpha")
_RSUB = defop("rsub", _subtraction(lambda a, b: b - a), "RsubBackward1", (), names=_ALPHA1)
_RSUB_T = defop("rsub_tensor", _subtraction(lambda a, b, alpha: b - alpha * a), "RsubBackward0", (),
                names="self other -> alpha")
_POW = defop("pow", _pow, "PowBackward0", {0: (0, 1)}, names="self exponent -> self exponent")
_POW_T = defop("pow_tensor", tensor_operands(_pow), "PowBackward1",
               names="self exponent -> exponent self result")
_RPOW = defop("rpow", lambda a, b: _pow(b, a), "PowBackward2",
              names="exponent self -> exponent self result")
# rounding divisions: PyTorch records DivBackward2, whose gradients are zero
_DIV_FLOOR = defop("div_floor", _ordered(lambda a, b: jax.lax.stop_gradient(
    jnp.floor_divide(a, b)), "div_floor"),
                   "DivBackward2", (), scalar_edges=True,
                   names="self other -> other self rounding_mode='floor'")
_DIV_TRUNC = defop("div_trunc", _ordered(lambda a, b: jax.lax.stop_gradient(
    jnp.trunc(a / b).astype(jnp.result_type(a, b))), "div_trunc"), "DivBackward2", (),
    scalar_edges=True,
    names="self other -> other self rounding_mode='trunc'")
_DIV_MODES = {None: _DIV, "floor": _DIV_FLOOR, "trunc": _DIV_TRUNC}
_NEG = defop("neg", jnp.negative, "NegBackward0", ())


@variants(inplace=True, inplace_function=True, aliases=("negative",))
def neg(input) -> OpCall:
    """``neg(input)`` (alias ``negative``): ``-input``."""
    if not isinstance(input, Tensor):
        raise not_a("neg", "input", input, "Tensor")
    if input.dtype.name == "bool":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return _NEG, (input,), None


# PyTorch's signatures of add, sub and div (``variants(forms=)``: the parser's errors)
_ALPHA_FORMS = (("(Tensor other, *, Number alpha = 1)",),
                ("(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)",))
_ARITHMETIC_FORMS = {"add": _ALPHA_FORMS, "sub": _ALPHA_FORMS, "subtract": (
    (_ALPHA_FORMS[0][0], "(Number other, Number alpha = 1)"),
    (_ALPHA_FORMS[1][0], "(Tensor input, Number other, Number alpha = 1)"))}
_MODE = "*, str rounding_mode"
_DIV_FORMS = {"div": (("(Tensor other)", f"(Tensor other, {_MODE})", f"(Number other, {_MODE})"),
                      ("(Tensor input, Tensor other, *, Tensor out = None)",
                       f"(Tensor input, Tensor other, {_MODE}, Tensor out = None)",
                       f"(Tensor input, Number other, {_MODE})")),
              "divide": (("(Tensor other)", f"(Tensor other, {_MODE})", "(Number other)",
                          f"(Number other, {_MODE})"),
                         ("(Tensor input, Tensor other, *, Tensor out = None)",
                          f"(Tensor input, Tensor other, {_MODE}, Tensor out = None)",
                          "(Tensor input, Number other)",
                          f"(Tensor input, Number other, {_MODE})"))}


def _refuse(name, input, other, alpha=1):
    """The parser's refusal of ``add``'s, ``sub``'s or ``div``'s operands (a list, an array,
    None or a str: PyTorch's parser takes a Tensor or a number), worded by ``variants`` for
    the form called. NOTE: the ops test the operands inline, and call this to raise."""
    for arg, v in (("input", input), ("other", other)):
        if v.__class__ in _NOT_INPUTS or v is None:
            raise refused_call(not_a(name, arg, v, "Tensor"))
    raise refused_call(not_a(name, "alpha", alpha, "Number", None))


@variants(inplace=True, forms=_ARITHMETIC_FORMS, hidden=True)
def add(input, other, *, alpha=1) -> OpCall:
    """``add(input, other, *, alpha=1)``: ``input + alpha * other``, broadcasting."""
    if input.__class__ in _NOT_INPUTS or other.__class__ in _NOT_INPUTS or input is None or \
            other is None or alpha is None or alpha.__class__ in _NOT_INPUTS:
        _refuse("add", input, other, alpha)
    args = (to_tensor_like(input), to_tensor_like(other))
    return (_ADD_ALPHA, args, {"alpha": alpha}) if alpha != 1 else (_ADD, args, None)


_NOT_INPUTS = (list, tuple, np.ndarray, str)  # an ``input`` PyTorch's parser refuses


def add_operator(input, other=NOT_GIVEN, *more, **kwargs) -> Tensor:
    """``input + other`` (``Tensor.__add__``): a Tensor or a Python number to the op, not
    through :func:`add`'s chooser; anything else (or ``alpha=``: ``with_keywords``) through it."""
    if kwargs or more:
        return with_keywords(add, input, other, more, kwargs)
    if other.__class__ in OPERANDS:
        return bapply(_ADD, (input, other))
    if other.__class__ is np.ndarray:  # NumPy's sum in PyTorch, which reads ``input``
        return by_numpy("add", input, other)
    if not isinstance(other, OPERATOR_OPERANDS):
        return NotImplemented  # Python's TypeError, as PyTorch's (see operator_of)
    return add(input, other)


def radd_operator(input, other=NOT_GIVEN, *more, **kwargs) -> Tensor:
    """``other + input`` (``Tensor.__radd__``, PyTorch's ``add`` too): as ``add_operator``,
    but a NumPy array is NotImplemented, as PyTorch's reflected operators give it."""
    if kwargs or more:
        return with_keywords(add, input, other, more, kwargs)
    if other.__class__ in OPERANDS:
        return bapply(_ADD, (input, other))
    if other.__class__ is np.ndarray or not isinstance(other, OPERATOR_OPERANDS):
        return NotImplemented
    return add(input, other)


add_operator.__name__ = add_operator.__qualname__ = "add"  # as __torch_function__ names it
radd_operator.__name__ = radd_operator.__qualname__ = "add"


def sub_operator(input, other=NOT_GIVEN, *more, **kwargs) -> Tensor:
    """``input - other`` (``Tensor.__sub__``): as :func:`add_operator`, a Tensor or a Python
    number straight to the op, an array to NumPy, anything else through :func:`sub`."""
    if kwargs or more:
        return with_keywords(sub, input, other, more, kwargs)
    if other.__class__ in OPERANDS:
        return bapply(_SUB, (input, other))
    if other.__class__ is np.ndarray:
        return by_numpy("sub", input, other)
    if not isinstance(other, OPERATOR_OPERANDS):
        return NotImplemented
    return sub(input, other)


def div_operator(input, other=NOT_GIVEN, *more, **kwargs) -> Tensor:
    """``input / other`` (``Tensor.__truediv__``, ``rounding_mode=`` too): as ``sub``'s."""
    if kwargs or more:
        return with_keywords(div, input, other, more, kwargs)
    if other.__class__ in OPERANDS:
        return bapply(_DIV, (input, other))
    if other.__class__ is np.ndarray:
        return by_numpy("div", input, other)
    if not isinstance(other, OPERATOR_OPERANDS):
        return NotImplemented
    return div(input, other)


sub_operator.__name__ = sub_operator.__qualname__ = "sub"
div_operator.__name__ = div_operator.__qualname__ = "div"
# what ``inspect`` and the stubs show: the operand, then the method's keywords
_OPERATOR_SIGNATURE = inspect.signature(lambda input, other, **kwargs: None).replace(
    return_annotation="Tensor")


@variants(inplace=True, aliases=("subtract",), forms=_ARITHMETIC_FORMS, hidden=True)
def sub(input, other, *, alpha=1) -> OpCall:
    """``sub(input, other, *, alpha=1)`` (alias ``subtract``): ``input - alpha * other``,
    broadcasting."""
    if input.__class__ in _NOT_INPUTS or other.__class__ in _NOT_INPUTS or input is None or \
            other is None or alpha is None or alpha.__class__ in _NOT_INPUTS:
        _refuse("sub", input, other, alpha)
    args = (to_tensor_like(input), to_tensor_like(other))
    return (_SUB_ALPHA, args, {"alpha": alpha}) if alpha != 1 else (_SUB, args, None)


@variants(inplace=True, forms=input_forms("pow"))  # (each form's errors its own)
def pow(input, exponent) -> OpCall:
    """``pow(input, exponent)``: ``input ** exponent``; either side may be a number."""
    if isinstance(input, Tensor):
        if isinstance(exponent, Tensor):
            return _POW_T, (input, exponent), None
        if exponent.__class__ in REFUSED_OTHERS:
            refuse_other("pow", input, exponent)
        return _POW, (input, to_tensor_like(exponent)), None
    refuse_input("pow", input, exponent)
    return _RPOW, (exponent, input), None


_RSUB_FORMS = {"rsub": (("(Tensor other, *, Number alpha = 1)", "(Number other, Number alpha = 1)"),
                        ("(Tensor input, Tensor other, *, Number alpha = 1)",
                         "(Tensor input, Number other, Number alpha = 1)"))}


@variants(forms=_RSUB_FORMS)
def rsub(input, other, *, alpha=1) -> OpCall:
    """``rsub(input, other, *, alpha=1)``: ``other - alpha * input``."""
    if input.__class__ is not Tensor and not isinstance(input, Tensor) or \
            other.__class__ in _NOT_INPUTS or other is None or alpha is None or \
            alpha.__class__ in _NOT_INPUTS:  # (the parser's; worded for the form called)
        raise refused_call(TypeError("rsub(): invalid arguments"))
    if isinstance(other, Tensor):
        return _RSUB_T, (input, other), {"alpha": alpha}
    if alpha != 1:
        input = FUNCTIONS["mul"](input, alpha)
    return _RSUB, (input, other), None


def rsub_operator(input, other=NOT_GIVEN, *more, **kwargs) -> Tensor:
    """``other - input`` (``Tensor.__rsub__``): as :func:`add_operator`, a number straight
    to the op (``1 - x``), an operand the parser refuses NotImplemented. PyTorch's
    ``__rsub__`` takes no keyword: given one, it is NotImplemented (its TypeError)."""
    if kwargs or more:
        return NotImplemented
    if other.__class__ in NUMBERS:
        return bapply(_RSUB, (input, other))
    if other.__class__ is np.ndarray or not isinstance(other, OPERATOR_OPERANDS):
        return NotImplemented  # (an array: ``array - x`` raises, as PyTorch's)
    return rsub(input, other)


rsub_operator.__name__ = rsub_operator.__qualname__ = "rsub"
for _op in (add_operator, radd_operator, sub_operator, div_operator, rsub_operator):
    _op.__signature__ = _OPERATOR_SIGNATURE


def rdiv(input, other) -> Tensor:
    """``other / input`` for a number ``other``: PyTorch computes it as
    ``input.reciprocal() * other`` (a ``MulBackward0`` after a ``ReciprocalBackward0``)."""
    return OPERATORS["mul"](apply(UNARY["reciprocal"], (input,)), other)  # (an array too)


@variants(forms=input_forms("true_divide"))  # (each form's errors its own)
def true_divide(input, other) -> OpCall:
    """``true_divide(input, other)``: :func:`div` without a rounding mode."""
    if not isinstance(input, Tensor):
        refuse_input("true_divide", input, other)
    if other.__class__ in REFUSED_OTHERS:
        refuse_other("true_divide", input, other)
    return div.__wrapped__(input, other)  # (div's chooser)


@variants(inplace=True, aliases=("divide",), forms=_DIV_FORMS)
def div(input, other, *, rounding_mode=None) -> OpCall:
    """``div(input, other, *, rounding_mode=None)`` (alias ``divide``): true division, or
    rounded with ``rounding_mode`` ``'trunc'`` / ``'floor'`` (whose gradient is zero)."""
    if input.__class__ in _NOT_INPUTS or other.__class__ in _NOT_INPUTS or input is None or \
            other is None:
        _refuse("div", input, other)
    args = (to_tensor_like(input), to_tensor_like(other))
    op = _DIV_MODES.get(rounding_mode) if isinstance(rounding_mode, (str, type(None))) else None
    if op is None:
        if rounding_mode.__class__ is not str:  # (the parser's: a str or None)
            raise refused_call(not_a("div", "rounding_mode", rounding_mode, "str", None))
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")
    return op, args, None


_ROUND = defop("round", _ordered(jnp.round, "round_vml"), "RoundBackward0", ())
# PyTorch's kernel with decimals takes floating input only
_ROUND_DECIMALS = defop("round_decimals", _floats_only("round_cpu", lambda x, decimals:
                                                       jnp.round(x, decimals)),
                        "RoundBackward1", (), names="self ->")


@variants(inplace=True, inplace_function=True)
def round(input, *, decimals=0) -> OpCall:
    """``round(input, *, decimals=0)``: to the nearest integer (halves to even), or to
    ``decimals`` decimal places."""
    if not isinstance(input, Tensor):
        raise not_a("round", "input", input, "Tensor")
    if decimals.__class__ is not int:
        decimals = integer("round", "decimals", decimals)
    if decimals == 0:
        return _ROUND, (input,), None
    return _ROUND_DECIMALS, (input,), {"decimals": decimals}


# ---- selection (clamping: ``clamp.py``)


# where's operands come first so Python numbers among them get torch's ``None`` edges
_WHERE = defop("where", tensor_operands(lambda x, y, c: jnp.where(c, x, y), (0, 1)),
               "WhereBackward0", {},
               scalar_edges=True, nondiff=(2,), names="self other condition -> condition")
_MASKED_FILL = defop("masked_fill", lambda x, m, v: jnp.where(m, jnp.asarray(v, x.dtype), x),
                     "MaskedFillBackward0", {}, nondiff=(1,), names="self mask value -> mask")
_MASKED_FILL_T = defop("masked_fill_tensor", lambda x, v, m: jnp.where(
    m, v.astype(x.dtype), x), "MaskedFillBackward1", {}, nondiff=(2,),
    names="self value mask -> mask")


@tensor_operands
def _lerp_formula(a, b, w):
    # PyTorch's two-sided formula (exact at w == 1)
    return jnp.where(jnp.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


def _lerp(a, b, w):
    """lerp's forward: PyTorch requires ``end``, and a dimensioned ``weight``, in
    ``input``'s dtype (a 0-d weight promotes). NOTE: checked where a program is traced,
    once per signature, so no call pays for it."""
    for arg, v in (("end", b), ("weight", w)):
        if _tensor_like(v) and (arg == "end" or v.ndim) and v.dtype != a.dtype:
            a_type, v_type = (_dtype.c_type_name(_dtype.as_dtype(t.dtype)) for t in (a, v))
            raise RuntimeError(f"expected dtype {a_type} for `{arg}` but got dtype {v_type}")
    return _lerp_formula(a, b, w)


# a number weight makes lerp linear in its tensors: PyTorch saves only the number
_LERP = defop("lerp", _lerp, "LerpBackward0", (), names="self end weight -> weight")
# PyTorch saves only the weight unless the weight needs a gradient
_LERP_T = defop("lerp_tensor", _lerp, "LerpBackward1", {0: (2,), 1: (2,), 2: (0, 1, 2)},
                names="self end weight -> end self weight")


@export(method=False)
def where(condition, input=None, other=None) -> Tensor:
    """``where(condition, input, other)``: ``input`` where ``condition`` is True, else
    ``other`` (either may be a number). ``where(condition)`` is ``nonzero(as_tuple=True)``."""
    if input is None and other is None:
        from .nonzero_forms import nonzero
        return nonzero(condition, as_tuple=True)
    cond = to_tensor_like(condition)
    if not isinstance(cond, Tensor) or cond.dtype.name != "bool":
        kind = type(cond).__name__ if not isinstance(cond, Tensor) else \
            _dtype.torch_kind(cond._data.dtype)
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {kind}")
    return bapply(_WHERE, (to_tensor_like(input), to_tensor_like(other), cond))


@export(name="where", function=False)
def _where_method(self, condition, other) -> Tensor:
    return where(condition, self, other)


@variants(inplace=True)
def masked_fill(input, mask, value) -> OpCall:
    """``masked_fill(input, mask, value)``: ``value`` where the boolean ``mask`` is True."""
    mask = to_tensor_like(mask)
    if mask.dtype.name != "bool":
        from .._dtype import c_type_name  # PyTorch prints the C++ type: "long int"
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{c_type_name(mask.dtype)}")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        return _MASKED_FILL_T, (input, check_value_tensor(input, value), mask), None
    return _MASKED_FILL, (input, mask, check_fits(input, value)), None


@variants(inplace=True)
def lerp(input, end, weight) -> OpCall:
    """``lerp(input, end, weight)``: ``input + weight * (end - input)``; a Tensor ``end``
    and a dimensioned ``weight`` of ``input``'s dtype (a 0-d ``weight`` may differ)."""
    op = _LERP_T if isinstance(weight, Tensor) else _LERP
    return op, (input, to_tensor_like(end), to_tensor_like(weight)), None
