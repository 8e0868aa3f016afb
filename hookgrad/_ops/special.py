"""The elementwise functions of ``torch.special`` that have no ``torch.<name>`` of their own:
entropy, scaled error functions, Bessel functions of JAX's, normal distribution functions,
Hurwitz zeta, ``xlog1py``, and the regularized incomplete gamma functions (which are also
``torch.igamma`` / ``torch.igammac`` and their Tensor forms).

Each is one op with PyTorch's node name (``SpecialEntrBackward0``, ...) and JAX's
derivative. Where PyTorch has no derivative formula for an input (``igamma``'s ``input``,
``zeta``), a gradient asked for it raises PyTorch's error (:func:`no_derivative`).
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import jax.scipy.special as jss

from .. import _dtype

from .._tensor import Tensor
from .dispatch import apply
from .pointwise import _inexact
from .parser_errors import REFUSED_OTHERS, invalid_arguments, not_a, refused_call
from .promotion import REFUSED, refuses_complex
from .statistics import _MUL_SCALAR
from .registry import bapply, defop, to_tensor_like, variants, with_out


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def no_derivative(x, message):
    """``x``, whose derivative raises ``NotImplementedError(message)`` (PyTorch's
    ``not_implemented`` formula). The vjp is traced for the wanted gradients only, so an
    argument that needs none goes through."""
    return x


def _nd_fwd(x, message):
    return x, None


def _nd_bwd(message, _, g):
    raise NotImplementedError(message)


no_derivative.defvjp(_nd_fwd, _nd_bwd)


def _unary_fn(name, op, doc):
    def fn(input) -> Tensor:
        if not isinstance(input, Tensor):  # JAX's words otherwise
            raise not_a(f"special_{name}", "input", input, "Tensor")
        return apply(op, (input,))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return with_out(fn)


def _real(kernel, fwd):
    """``fwd`` refusing complex input as PyTorch's CPU ``kernel`` does (JAX's error would
    name the op, or let JAX's words through)."""
    return refuses_complex(fwd, NotImplementedError, REFUSED.format(kernel))


ENTR = defop("special_entr", _real("entr_cpu", jss.entr), "SpecialEntrBackward0")
# PyTorch's formulas for these read the input and the result (computed again here)
_SELF_RESULT = "self -> self result"
ERFCX = defop("special_erfcx", _real("erfcx_cpu", jss.erfcx), "SpecialErfcxBackward0",
              names=_SELF_RESULT)
I0E = defop("special_i0e", _real("i0e_cpu", jss.i0e), "SpecialI0EBackward0", names=_SELF_RESULT)
I1 = defop("special_i1", _real("i1_cpu", jss.i1), "SpecialI1Backward0", names=_SELF_RESULT)
I1E = defop("special_i1e", _real("i1e_cpu", jss.i1e), "SpecialI1EBackward0", names=_SELF_RESULT)
LOG_NDTR = defop("special_log_ndtr", _real("log_ndtr_cpu", _inexact(jss.log_ndtr)),
                 "SpecialLogNdtrBackward0", names=_SELF_RESULT)
NDTRI = defop("special_ndtri", _real("ndtri_cpu", jss.ndtri), "SpecialNdtriBackward0",
              names="self -> result")

entr = _unary_fn("entr", ENTR, """``entr(input, *, out=None)``: the elementwise entropy
    ``-input * log(input)``: 0 at 0, ``-inf`` below 0.""")
erfcx = _unary_fn("erfcx", ERFCX, """``erfcx(input, *, out=None)``: the scaled complementary
    error function ``exp(input ** 2) * erfc(input)``.""")
i0e = _unary_fn("i0e", I0E, """``i0e(input, *, out=None)``: the exponentially scaled
    modified Bessel function of the first kind of order 0, ``exp(-|input|) * i0(input)``.""")
i1 = _unary_fn("i1", I1, """``i1(input, *, out=None)``: the modified Bessel function of the
    first kind of order 1.""")
i1e = _unary_fn("i1e", I1E, """``i1e(input, *, out=None)``: the exponentially scaled modified
    Bessel function of the first kind of order 1, ``exp(-|input|) * i1(input)``.""")
log_ndtr = _unary_fn("log_ndtr", LOG_NDTR, """``log_ndtr(input, *, out=None)``: the log of
    the area under the standard normal density from ``-inf`` to ``input``.""")
ndtri = _unary_fn("ndtri", NDTRI, """``ndtri(input, *, out=None)``: the inverse of
    :func:`ndtr`: the argument at which the standard normal CDF is ``input``.""")


@with_out
def ndtr(input) -> Tensor:
    """``ndtr(input, *, out=None)``: the area under the standard normal density from
    ``-inf`` to ``input``, ``(1 + erf(input / sqrt(2))) / 2``."""
    if not isinstance(input, Tensor):
        raise not_a("special_ndtr", "input", input, "Tensor")
    # PyTorch composes it of Scalar overloads, whose nodes these are
    scaled = apply(_MUL_SCALAR, (input,), {"other": 0.7071067811865476}).erf()
    return apply(_MUL_SCALAR, (apply(_ADD_SCALAR, (scaled,), {"other": 1}),), {"other": 0.5})


_ADD_SCALAR = defop("add.Scalar", lambda x, other: x + other, "AddBackward1", (),
                    names="self ->")


# ---- binary: a Tensor or a number on either side, one node name each (PyTorch's overloads)
def _binary_ops(name, fwd, node):
    return tuple(defop(f"{name}{suffix}", fwd, f"{node}{k}", names="self other -> other self")
                 for k, suffix in enumerate(("", ".self_scalar", ".other_scalar")))


_FORMS = ("(Tensor input, Tensor other, *, Tensor out = None)",
          "(Number self, Tensor other, *, Tensor out = None)",
          "(Tensor input, Number other, *, Tensor out = None)")


def _pick(ops, input, other):
    if isinstance(input, Tensor):
        if isinstance(other, Tensor):
            return ops[0], (input, other)
        if other.__class__ not in REFUSED_OTHERS:
            return ops[2], (input, to_tensor_like(other))
    elif isinstance(other, Tensor) and input.__class__ not in REFUSED_OTHERS:
        return ops[1], (to_tensor_like(input), other)
    raise invalid_arguments(ops[0].name, _FORMS, input, other)  # two numbers, None, a str


XLOG1PY = _binary_ops("special_xlog1py", jss.xlog1py, "SpecialXlog1PyBackward")
_ZETA_MESSAGE = "the derivative for 'zeta' is not implemented."
ZETA = _binary_ops("special_zeta", lambda x, q: jss.zeta(no_derivative(x, _ZETA_MESSAGE),
                                                         no_derivative(q, _ZETA_MESSAGE)),
                   "SpecialZetaBackward")


@with_out
def xlog1py(input, other) -> Tensor:
    """``xlog1py(input, other, *, out=None)``: ``input * log1p(other)``, 0 where ``input``
    is 0 (unless ``other`` is NaN); either may be a number."""
    op, args = _pick(XLOG1PY, input, other)
    return bapply(op, args)


@with_out
def zeta(input, other) -> Tensor:
    """``zeta(input, other, *, out=None)``: the Hurwitz zeta function
    ``sum_k (k + other) ** -input``; either may be a number. It has no derivative."""
    op, args = _pick(ZETA, input, other)
    return bapply(op, args)


# ---- the regularized incomplete gamma functions: differentiable in ``other`` only
def _in_float64(fn):
    """``fn(a, x)`` computed in float64 and rounded to the operands' dtype, where x64 is
    on: JAX's float32 series and continued fraction lose up to ~1e-3 at large ``a``
    (Q(900.5, 900.5): 0.49580 against 0.49557), where PyTorch's float32 kernel is within
    ~1e-7 of the float64 value (fuzz seed 1858). JAX's derivative in ``other`` then runs
    in float64 too: PyTorch's formula, ``exp((a - 1) * log(x) - x - lgamma(a))`` in the
    operands' dtype, cancels (~2e-4 of 0.8 at a = x = 900.5 in float32; overflows in
    bfloat16), and no float32 formulation of it repeats PyTorch's rounding. Without x64
    JAX's float32 value stays (docs/differences.md)."""
    def wide(a, x):
        if x.dtype.itemsize >= 8 or not _dtype.x64_enabled():
            return fn(a, x)
        return fn(a.astype(jnp.float64), x.astype(jnp.float64)).astype(x.dtype)
    return wide


IGAMMA = defop("igamma", _real("igamma_cpu", _in_float64(lambda a, x: jss.gammainc(
    no_derivative(a, "the derivative for 'igamma: input' is not implemented."), x))),
    "IgammaBackward0", names="self other -> other self")
IGAMMAC = defop("igammac", _real("igammac_cpu", _in_float64(lambda a, x: jss.gammaincc(
    no_derivative(a, "the derivative for 'igammac: input' is not implemented."), x))),
    "IgammacBackward0", names="self other -> other self")


def _check_tensors(name, input, other):
    """PyTorch's parser takes Tensors only: else its error, worded for the form called."""
    for arg, t in (("input", input), ("other", other)):
        if not isinstance(t, Tensor):
            raise refused_call(not_a(name, arg, t, "Tensor"))


_IGAMMA_FORMS = (("(Tensor other)",), ("(Tensor input, Tensor other, *, Tensor out = None)",))


@variants(inplace=True, forms=_IGAMMA_FORMS)
def igamma(input, other):
    """``igamma(input, other, *, out=None)``: the regularized lower incomplete gamma
    function ``P(input, other)`` (``torch.special.gammainc``); differentiable in ``other``
    only, as PyTorch's."""
    _check_tensors("igamma", input, other)
    return IGAMMA, (input, other), None


@variants(inplace=True, forms=_IGAMMA_FORMS)
def igammac(input, other):
    """``igammac(input, other, *, out=None)``: the regularized upper incomplete gamma
    function ``Q(input, other) = 1 - P(input, other)`` (``torch.special.gammaincc``)."""
    _check_tensors("igammac", input, other)
    return IGAMMAC, (input, other), None
