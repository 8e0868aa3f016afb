"""More elementwise math: angle conversions, sinc, logit, sign queries, copysign,
logaddexp, addcmul/addcdiv, and PyTorch's aliases of the elementwise ops (``arccos``,
``absolute``, ``fix``, ...).

One ``OpDef`` row per op, as in ``pointwise``; ops with a static argument (``logit``'s
``eps``, ``addcmul``'s ``value``) are ``@variants`` choosers.
"""
from __future__ import annotations

import collections
import math

import jax
import jax.numpy as jnp

from .. import _dtype as _dtype_mod
from .._tensor import Tensor
from .dispatch import NOT_IMPLEMENTED, apply
from .pointwise import _POW, _POW_T, _RPOW, _binary, _ordered, _sign, _unary
from .parser_errors import (REFUSED_OTHERS, as_method, input_forms, integer, number,
                            refuse_input, refuse_other)
from .promotion import integers_only, real_only, refuses_complex, tensor_operands
from .registry import (FUNCTIONS, METHODS, OpCall, OpDef, defop, export,
                       to_tensor_like, variants)


def _sinc(x):
    # PyTorch's sinc is the normalised one, sin(pi x) / (pi x), 1 at 0 (jnp.sinc's too)
    return jnp.sinc(x)


def _sgn(x):
    if not jnp.iscomplexobj(x):
        return _sign(x)
    # z / |z|, written out: JAX gives sign a zero derivative, PyTorch's sgn of a complex
    # value has one (0 at 0, where a safe divisor keeps the gradient finite)
    a = jnp.abs(x)
    zero = a == 0
    return jnp.where(zero, 0, x / jnp.where(zero, 1, a))


_UNARY = [
    OpDef("deg2rad", refuses_complex(lambda x: x * (math.pi / 180), RuntimeError,
                                     "deg2rad is not supported for complex tensors."),
          "Deg2RadBackward0", (),
          inplace_function=True, names="self ->"),
    OpDef("rad2deg", refuses_complex(lambda x: x * (180 / math.pi), RuntimeError,
                                     "rad2deg is not supported for complex tensors."),
          "Rad2DegBackward0", (),
          inplace_function=True, names="self ->"),
    OpDef("sinc", _sinc, "SincBackward0", inplace_function=True, names="self -> self"),
    OpDef("i0", real_only("i0_vml_cpu", jax.scipy.special.i0), "I0Backward0", inplace_function=True,
          names="self -> self"),
    OpDef("sgn", _sgn, "SgnBackward0", names="self -> self result"),
    OpDef("signbit", refuses_complex(jnp.signbit, NotImplementedError,
                                     "signbit is not implemented for complex tensors."),
          None, inplace=False),
    OpDef("isneginf", refuses_complex(jnp.isneginf, RuntimeError,
                                      "isneginf does not support complex inputs."),
          None, inplace=False),
    OpDef("isposinf", refuses_complex(jnp.isposinf, RuntimeError,
                                      "isposinf does not support complex inputs."),
          None, inplace=False),
    OpDef("angle", lambda x: jnp.where(x < 0, jnp.pi, 0.0).astype(x.dtype)
          if jnp.issubdtype(x.dtype, jnp.floating) else jnp.angle(x), "AngleBackward0",
          inplace=False, names="self -> self"),
    OpDef("isreal", lambda x: jnp.isreal(x) if jnp.iscomplexobj(x) else jnp.ones(x.shape, bool),
          None, inplace=False),
]

_BINARY = [
    OpDef("logaddexp", tensor_operands(jnp.logaddexp), "LogaddexpBackward0", inplace=False,
          names="self other -> other self"),
    OpDef("logaddexp2", tensor_operands(jnp.logaddexp2), "Logaddexp2Backward0", inplace=False,
          names="self other -> other self"),
    OpDef("heaviside", _ordered(lambda x, v: jnp.heaviside(x, v).astype(jnp.result_type(x, v)),
                                "heaviside", "{} is not yet implemented for complex tensors.",
                                RuntimeError), NOT_IMPLEMENTED, ()),
    OpDef("ldexp", lambda x, e: x * jnp.exp2(e), "LdexpBackward0", inplace_function=True,
          names="self other -> other result"),
    OpDef("gcd", integers_only("gcd_cpu", jnp.gcd), None, inplace_function=True),
    OpDef("lcm", integers_only("lcm_cpu", jnp.lcm), None, inplace_function=True),
    OpDef("bitwise_left_shift", jnp.left_shift, None, inplace_function=False),
    OpDef("bitwise_right_shift", jnp.right_shift, None, inplace_function=False),
]

UNARY = {row.name: _unary(row) for row in _UNARY}
BINARY = {row.name: _binary(row) for row in _BINARY}

# ---- copysign: a Tensor ``other`` or a number (PyTorch's two overloads)
@jax.custom_jvp
def _copysign(x, y):
    return jnp.copysign(x, y)


@_copysign.defjvp
def _copysign_jvp(primals, tangents):
    # NOTE: PyTorch's gradient, ``result / self`` with 0 where ``self`` is 0, written so
    # that its own derivative is PyTorch's too: a double backward meets 0 / 0 at a zero
    # ``self`` and gives nan there, as PyTorch's does (JAX's rule gives 0)
    x, y = primals
    out = jnp.copysign(x, y)
    ratio = jnp.where(x == 0, jnp.zeros((), out.dtype), out / x)
    return out, tangents[0] * ratio


# broadcast first: JAX's own broadcast inside names the shapes in its order, not the operands'
_COPYSIGN = defop("copysign", _ordered(lambda x, y: _copysign(*jnp.broadcast_arrays(x, y)),
                                       "copysign"), "CopysignBackward0",
                  names="self other -> self result")
_COPYSIGN_S = defop("copysign.Scalar", _ordered(_copysign, "copysign"), "CopysignBackward1",
                    names="self other -> self result")


def _float_of(x):
    # integer inputs promote to the default float dtype, as PyTorch's copysign does
    if isinstance(x, Tensor) and not (x.dtype.is_floating_point or x.dtype.is_complex):
        return x.float()
    return x


@variants(inplace=True, forms=input_forms("copysign"))  # (each form's errors its own)
def copysign(input, other) -> OpCall:
    """``copysign(input, other)``: the magnitude of ``input`` with the sign of ``other``
    (a Tensor or a number); the gradient reaches ``input`` only."""
    if not isinstance(input, Tensor):
        refuse_input("copysign", input, other)
    if isinstance(other, Tensor):
        return _COPYSIGN, (_float_of(input), other), None
    if other.__class__ in REFUSED_OTHERS:
        refuse_other("copysign", input, other)
    return _COPYSIGN_S, (_float_of(input), to_tensor_like(other)), None


# ---- logit, nan_to_num: statics
def _logit(x, eps):
    if eps is not None:
        x = jnp.clip(x, eps, 1 - eps)
    return jnp.log(x / (1 - x))


_LOGIT = defop("logit", real_only("logit_cpu", _logit), "LogitBackward0",
               names="self -> eps self")


@variants(inplace=True, inplace_function=True)
def logit(input, eps=None) -> OpCall:
    """``logit(input, eps=None)``: ``log(p / (1 - p))``, with ``p`` clamped to
    ``[eps, 1 - eps]`` when ``eps`` is given (NaN outside ``[0, 1]`` otherwise)."""
    return _LOGIT, (input,), {"eps": None if eps is None else number("logit", "eps", eps, None,
                                                                      "float")}


def _nan_to_num(x, nan, posinf, neginf):
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return x
    return jnp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


_NAN_TO_NUM = defop("nan_to_num", _nan_to_num, "NanToNumBackward0",
                    names="self -> self")


@variants(inplace=True, inplace_function=True)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None) -> OpCall:
    """``nan_to_num(input, nan=0.0, posinf=None, neginf=None)``: NaN, +inf and -inf
    replaced by ``nan``, ``posinf`` and ``neginf`` (by default the dtype's largest and
    smallest finite values)."""
    return _NAN_TO_NUM, (input,), {"nan": float(nan), "posinf": posinf, "neginf": neginf}


# ---- addcmul, addcdiv: input + value * t1 {*, /} t2
_ADDCMUL = defop("addcmul", tensor_operands(lambda x, a, b, value: x + value * a * b),
                 "AddcmulBackward0",
                 {1: (2,), 2: (1,)}, names="self tensor1 tensor2 -> tensor1 tensor2 value")
_ADDCDIV = defop("addcdiv", tensor_operands(lambda x, a, b, value: x + value * a / b),
                 "AddcdivBackward0",
                 {1: (2,), 2: (1, 2)},
                 names="self tensor1 tensor2 -> tensor1 tensor2 value")


@variants(inplace=True)
def addcmul(input, tensor1, tensor2, *, value=1) -> OpCall:
    """``addcmul(input, tensor1, tensor2, *, value=1)``: ``input + value * tensor1 *
    tensor2``, broadcasting."""
    return _ADDCMUL, (input, tensor1, tensor2), {"value": value}


@variants(inplace=True)
def addcdiv(input, tensor1, tensor2, *, value=1) -> OpCall:
    """``addcdiv(input, tensor1, tensor2, *, value=1)``: ``input + value * tensor1 /
    tensor2``, broadcasting (integer ``tensor1`` and ``tensor2`` are refused, as PyTorch's
    integer division was removed)."""
    check_addcdiv_operands(tensor1, tensor2)
    return _ADDCDIV, (input, tensor1, tensor2), {"value": value}


def check_addcdiv_operands(tensor1, tensor2):
    """PyTorch refuses ``addcdiv`` (and ``_foreach_addcdiv``) of two integer tensors."""
    if not (tensor1.dtype.is_floating_point or tensor1.dtype.is_complex) and \
            not (tensor2.dtype.is_floating_point or tensor2.dtype.is_complex):
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a "
                           "future  release addcdiv will perform a true division of tensor1 "
                           "and tensor2. The historic addcdiv behavior can be implemented as "
                           "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) "
                           "for integer inputs and as (input + value * tensor1 / tensor2) for "
                           "float inputs. The future addcdiv behavior is just the latter "
                           "implementation: (input + value * tensor1 / tensor2), for all "
                           "dtypes.")


def _polygamma_refusing(kernel):
    return real_only(kernel, lambda x, n: jax.scipy.special.polygamma(n, x))


# PyTorch's polygamma runs digamma's kernel for n = 0, trigamma's for 1: a complex input's
# refusal names the one it reached
_POLYGAMMA_FWDS = tuple(map(_polygamma_refusing, ("digamma", "trigamma", "polygamma")))
_POLYGAMMA = defop("polygamma", lambda x, n: _POLYGAMMA_FWDS[min(n, 2)](x, n=n),
                   "PolygammaBackward0", names="self -> n self")
# (PyTorch's mvlgamma first builds an arange in the input's dtype: complex has none)
_MVLGAMMA = defop("mvlgamma", real_only("arange_cpu", lambda x, p:
                                        jax.scipy.special.multigammaln(x, p)),
                  "MvlgammaBackward0", names="self -> p self")


@export(method=False)
def polygamma(n, input) -> Tensor:
    """``polygamma(n, input)``: the ``n``-th derivative of the digamma function."""
    if n.__class__ is not int:
        n = integer("polygamma", "n", n, 1)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return apply(_POLYGAMMA, (input,), {"n": n})


@export(name="polygamma", function=False)
def _polygamma_method(self, n) -> Tensor:
    return polygamma(n, self)


@export(name="polygamma_", function=False)
def _polygamma_inplace(self, n) -> Tensor:
    if n.__class__ is not int:
        n = integer("polygamma_", "n", n, 1)
    return apply(_POLYGAMMA, (self,), {"n": n}, out=self)


@variants(inplace=True)
def mvlgamma(input, p) -> OpCall:
    """``mvlgamma(input, p)``: the multivariate log-gamma function of dimension ``p``
    (every element must exceed ``(p - 1) / 2``)."""
    if p.__class__ is not int:
        p = integer("mvlgamma", "p", p, 1)
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return _MVLGAMMA, (input,), {"p": p}


@variants(forms=input_forms("float_power"))  # (each form's errors its own)
def float_power(input, exponent) -> OpCall:
    """``float_power(input, exponent)``: ``input ** exponent`` computed in double precision
    (the result is ``float64``, or ``complex128``)."""
    if not isinstance(input, Tensor):  # (PyTorch's parser: a number, a Tensor exponent)
        if not isinstance(exponent, Tensor):
            refuse_other("float_power", input, exponent)
        refuse_input("float_power", input, exponent)
    elif exponent.__class__ in REFUSED_OTHERS:
        refuse_other("float_power", input, exponent)
    wide = _dtype_mod.complex128 if (isinstance(input, Tensor) and input.dtype.is_complex) \
        else _dtype_mod.float64
    base = input.to(wide) if isinstance(input, Tensor) else input
    exp = exponent.to(wide) if isinstance(exponent, Tensor) else exponent
    if not isinstance(base, Tensor):
        return _RPOW, (exp, base), None
    return (_POW_T if isinstance(exp, Tensor) else _POW), (base, to_tensor_like(exp)), None


_FREXP = defop("frexp", lambda x: (lambda m, e: (m, e.astype(jnp.int32)))(*jnp.frexp(x)),
               "FrexpBackward0", names="self -> exponent=result1")


@export
def frexp(input):
    """``frexp(input)``: ``(mantissa, exponent)`` with ``input = mantissa * 2 **
    exponent`` and ``0.5 <= |mantissa| < 1``."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    return _FREXP_TYPE(*apply(_FREXP, (input,)))


_FREXP_TYPE = collections.namedtuple("frexp", ["mantissa", "exponent"])


@export(function=False)
def float_power_(self, exponent) -> Tensor:
    """In-place :func:`float_power`: ``self`` must already be double precision."""
    wide = _dtype_mod.complex128 if self.dtype.is_complex else _dtype_mod.float64
    if self.dtype is not wide:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{_dtype_mod.TORCH_KINDS[self.dtype.name]} but the operation's "
                           f"result requires dtype {_dtype_mod.TORCH_KINDS[wide.name]}")
    op, args, st = float_power.__wrapped__(self, exponent)
    return apply(op, args, st, out=self)


@export
def positive(input) -> Tensor:
    """``positive(input)``: ``input`` itself (refused for bool tensors, as PyTorch does)."""
    if input.dtype.name == "bool":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# ---- PyTorch's other names of existing ops, every form the original has
ALIASES = {
    "unsafe_chunk": "chunk", "unsafe_split": "split",
    "unsafe_split_with_sizes": "split_with_sizes", "arccos": "acos", "arccosh": "acosh",
    "arcsin": "asin", "arcsinh": "asinh", "arctan": "atan", "arctanh": "atanh",
    "arctan2": "atan2", "absolute": "abs", "fix": "trunc",
}


def _alias(new, old):
    for table in (FUNCTIONS, METHODS):
        for suffix in ("", "_"):
            # PyTorch has no ``torch.absolute_`` although it has ``torch.abs_``
            if old + suffix in table and (table is METHODS or new + suffix != "absolute_"):
                table.setdefault(new + suffix, table[old + suffix])


for _new, _old in ALIASES.items():
    _alias(_new, _old)


def true_divide_(self, other) -> Tensor:
    """``x.true_divide_(other)``: ``div_`` without a rounding mode; its refusal of a
    non-number ``other`` worded as PyTorch's ``true_divide_``."""
    if other.__class__ in REFUSED_OTHERS:
        try:
            refuse_other("true_divide", self, other)
        except TypeError as e:
            raise as_method(e, "true_divide_") from None
    return METHODS["div_"](self, other)


METHODS.setdefault("true_divide_", true_divide_)
