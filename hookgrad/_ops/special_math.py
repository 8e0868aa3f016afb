"""Special functions and integer arithmetic PyTorch has at top level: ``polygamma``,
``mvlgamma``, ``gcd``, ``lcm``, ``float_power``, ``angle``, with their in-place forms.

Forwards and derivatives are JAX's (``jax.scipy.special``, ``jax.numpy``).
"""
from __future__ import annotations

import jax.numpy as jnp
import jax.scipy.special as jss

from .._tensor import Tensor
from .. import _dtype
from .registry import FUNCTIONS, OpCall, bapply, defop, export, to_tensor_like, variants

POLYGAMMA = defop("polygamma", lambda x, n: jss.polygamma(n, x), "PolygammaBackward0",
                  names="self -> n self")
MVLGAMMA = defop("mvlgamma", lambda x, p: jss.multigammaln(x, p), "MvlgammaBackward0",
                 names="self -> p self")
GCD = defop("gcd", jnp.gcd, None)
LCM = defop("lcm", jnp.lcm, None)
ANGLE = defop("angle", jnp.angle, "AngleBackward0")


def _floating(x):
    # integer and bool inputs promote to the default float dtype, as PyTorch's kernels do
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        return x.to(_dtype.get_default_dtype())
    return x


def _pick_polygamma(self, n) -> OpCall:
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return POLYGAMMA, (_floating(self),), {"n": int(n)}


_pick_polygamma.__name__ = "polygamma"
variants(inplace=True, function=False)(_pick_polygamma)


@export(method=False)
def polygamma(n, input) -> Tensor:
    """``polygamma(n, input)``: the ``n``-th derivative of the digamma function."""
    op, args, statics = _pick_polygamma(input, n)
    return bapply(op, args, statics)


@variants(inplace=True)
def mvlgamma(input, p) -> OpCall:
    """``mvlgamma(input, p)``: the multivariate log-gamma function of dimension ``p``."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return MVLGAMMA, (_floating(input),), {"p": int(p)}


def _integers(name, op, input, other) -> OpCall:
    input, other = to_tensor_like(input), to_tensor_like(other)
    for t in (input, other):
        if isinstance(t, Tensor) and (t.dtype.is_floating_point or t.dtype.is_complex):
            kind = _dtype.torch_kind(t._data.dtype)
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{kind}\'')
    return op, (input, other), None


@variants(inplace=True, inplace_function=True)
def gcd(input, other) -> OpCall:
    """``gcd(input, other)``: the elementwise greatest common divisor (integers), >= 0."""
    return _integers("gcd", GCD, input, other)


@variants(inplace=True, inplace_function=True)
def lcm(input, other) -> OpCall:
    """``lcm(input, other)``: the elementwise least common multiple (integers), >= 0."""
    return _integers("lcm", LCM, input, other)


@export
def angle(input) -> Tensor:
    """``angle(input)``: the elementwise argument (radians); 0 or pi for real inputs."""
    return bapply(ANGLE, (_floating(input),))


def _double(x):
    want = _dtype.complex128 if x.dtype.is_complex else _dtype.float64
    return x.to(want)


@export
def float_power(input, exponent) -> Tensor:
    """``float_power(input, exponent)``: ``pow`` computed in double precision (complex
    double if either operand is complex); either operand may be a number."""
    if isinstance(input, Tensor):
        input = _double(input)
    if isinstance(exponent, Tensor):
        exponent = _double(exponent)
    return FUNCTIONS["pow"](input, exponent)


@export(name="float_power_", function=False)
def _float_power_(self, exponent) -> Tensor:
    """In-place :func:`float_power`: ``self`` must be double already."""
    want = "ComplexDouble" if self.dtype.is_complex or (
        isinstance(exponent, Tensor) and exponent.dtype.is_complex) else "Double"
    have = _dtype.torch_kind(self._data.dtype)
    if have != want:
        raise RuntimeError(f"the base given to float_power_ has dtype {have} but the "
                           f"operation's result requires dtype {want}")
    if isinstance(exponent, Tensor):
        exponent = _double(exponent)
    return self.pow_(exponent)
