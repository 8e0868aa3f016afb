"""Elementwise ops: unary math, binary arithmetic, comparisons, selection.

One row per op: (name, JAX forward, torch node name[, what is saved]). Backward is JAX's
vjp of the forward unless the row saves the output (``OUT``), where the backward is a
formula of the output: PyTorch saves the result of those ops (an in-place change of it
is an error in backward, and pack hooks see it), so the input is not at hand.
"""
import jax
import jax.numpy as jnp

from .._tensor import Tensor
from .dispatch import OUT, apply
from .registry import defop, inplace_of, register, to_tensor_like

# NOTE: output-based backward formulas, only where PyTorch saves the result.
_UNARY = [
    # name        forward            node                  save  backward from output y
    ("neg",        jnp.negative,      "NegBackward0",       ()),
    ("exp",        jnp.exp,           "ExpBackward0",       OUT, lambda y, g: g * y),
    ("tanh",       jnp.tanh,          "TanhBackward0",      OUT, lambda y, g: g * (1 - y * y)),
    ("sigmoid",    jax.nn.sigmoid,    "SigmoidBackward0",   OUT, lambda y, g: g * y * (1 - y)),
    ("relu",       jax.nn.relu,       "ReluBackward0",      OUT,
     lambda y, g: jnp.where(y > 0, g, jnp.zeros_like(g))),
    ("log",        jnp.log,           "LogBackward0"),
    ("log2",       jnp.log2,          "Log2Backward0"),
    ("log10",      jnp.log10,         "Log10Backward0"),
    ("log1p",      jnp.log1p,         "Log1PBackward0"),
    ("expm1",      jnp.expm1,         "Expm1Backward0"),
    ("exp2",       jnp.exp2,          "Exp2Backward0"),
    ("sqrt",       jnp.sqrt,          "SqrtBackward0"),
    ("rsqrt",      jax.lax.rsqrt,     "RsqrtBackward0"),
    ("reciprocal", jnp.reciprocal,    "ReciprocalBackward0"),
    ("square",     jnp.square,        "PowBackward0"),
    ("abs",        jnp.abs,           "AbsBackward0"),
    ("sign",       jnp.sign,          "SignBackward0",      ()),
    ("sin",        jnp.sin,           "SinBackward0"),
    ("cos",        jnp.cos,           "CosBackward0"),
    ("tan",        jnp.tan,           "TanBackward0"),
    ("asin",       jnp.arcsin,        "AsinBackward0"),
    ("acos",       jnp.arccos,        "AcosBackward0"),
    ("atan",       jnp.arctan,        "AtanBackward0"),
    ("sinh",       jnp.sinh,          "SinhBackward0"),
    ("cosh",       jnp.cosh,          "CoshBackward0"),
    ("asinh",      jnp.arcsinh,       "AsinhBackward0"),
    ("acosh",      jnp.arccosh,       "AcoshBackward0"),
    ("atanh",      jnp.arctanh,       "AtanhBackward0"),
    ("erf",        jax.scipy.special.erf,    "ErfBackward0"),
    ("erfc",       jax.scipy.special.erfc,   "ErfcBackward0"),
    ("erfinv",     jax.scipy.special.erfinv, "ErfinvBackward0"),
    ("lgamma",     jax.scipy.special.gammaln, "LgammaBackward0"),
    ("digamma",    jax.scipy.special.digamma, "DigammaBackward0"),
    ("floor",      jnp.floor,         "FloorBackward0",     ()),
    ("ceil",       jnp.ceil,          "CeilBackward0",      ()),
    ("trunc",      jnp.trunc,         "TruncBackward0",     ()),
    ("frac",       lambda x: x - jnp.trunc(x), "FracBackward0", ()),
    ("logical_not", jnp.logical_not,  None),
    ("isnan",      jnp.isnan,         None),
    ("isinf",      jnp.isinf,         None),
    ("isfinite",   jnp.isfinite,      None),
    ("bitwise_not", jnp.invert,       None),
]

_BINARY = [
    # name           forward              node               save
    ("add",          jnp.add,             "AddBackward0",    ()),
    ("sub",          jnp.subtract,        "SubBackward0",    ()),
    ("mul",          jnp.multiply,        "MulBackward0",    {0: (1,), 1: (0,)}),
    ("div",          jnp.true_divide,     "DivBackward0",    {0: (1,), 1: (0, 1)}),
    ("maximum",      jnp.maximum,         "MaximumBackward0"),
    ("minimum",      jnp.minimum,         "MinimumBackward0"),
    ("fmax",         jnp.fmax,            "FmaxBackward0"),
    ("fmin",         jnp.fmin,            "FminBackward0"),
    ("atan2",        jnp.arctan2,         "Atan2Backward0"),
    ("hypot",        jnp.hypot,           "HypotBackward0"),
    ("fmod",         jnp.fmod,            "FmodBackward0"),
    ("remainder",    jnp.remainder,       "RemainderBackward0"),
    ("xlogy",        jax.scipy.special.xlogy, "XlogyBackward0"),
    ("floor_divide", jnp.floor_divide,    None),
    ("eq",           jnp.equal,           None),
    ("ne",           jnp.not_equal,       None),
    ("lt",           jnp.less,            None),
    ("le",           jnp.less_equal,      None),
    ("gt",           jnp.greater,         None),
    ("ge",           jnp.greater_equal,   None),
    ("logical_and",  jnp.logical_and,     None),
    ("logical_or",   jnp.logical_or,      None),
    ("logical_xor",  jnp.logical_xor,     None),
    ("bitwise_and",  jnp.bitwise_and,     None),
    ("bitwise_or",   jnp.bitwise_or,      None),
    ("bitwise_xor",  jnp.bitwise_xor,     None),
]

_SCALAR_EDGE_OPS = {"add", "sub", "mul", "div"}


def _make_unary(row):
    name, fwd, node = row[:3]
    save = row[3] if len(row) > 3 else "all"
    bwd = row[4] if len(row) > 4 else None
    op = defop(name, fwd, node, save, bwd)

    def fn(input):
        return apply(op, (input,))
    fn.__name__ = name
    register(fn)
    if node is not None:
        inplace_of(op, name)
    return op


def _make_binary(row):
    name, fwd, node = row[:3]
    save = row[3] if len(row) > 3 else "all"
    op = defop(name, fwd, node, save, scalar_edges=name in _SCALAR_EDGE_OPS)

    def fn(input, other):
        return apply(op, (to_tensor_like(input), to_tensor_like(other)))
    fn.__name__ = name
    register(fn)
    inplace_of(op, name)
    return op


UNARY = {row[0]: _make_unary(row) for row in _UNARY}
BINARY = {row[0]: _make_binary(row) for row in _BINARY}

# add/sub with alpha: alpha is a static argument (rarely varied)
_ADD_ALPHA = defop("add_alpha", lambda a, b, alpha: a + alpha * b, "AddBackward0", ())
_SUB_ALPHA = defop("sub_alpha", lambda a, b, alpha: a - alpha * b, "SubBackward0", ())
_RSUB = defop("rsub", lambda a, b: b - a, "RsubBackward1", ())
_RDIV = defop("rdiv", lambda a, b: b / a, "DivBackward0", {0: (0, 1), 1: (0,)})
_POW = defop("pow", jnp.power, "PowBackward0", {0: (0, 1)})
_POW_T = defop("pow_tensor", jnp.power, "PowBackward1")
_RPOW = defop("rpow", lambda a, b: jnp.power(b, a), "PowBackward2")


def add(input, other, *, alpha=1):
    if alpha != 1:
        return apply(_ADD_ALPHA, (to_tensor_like(input), to_tensor_like(other)), {"alpha": alpha})
    return apply(BINARY["add"], (to_tensor_like(input), to_tensor_like(other)))


def sub(input, other, *, alpha=1):
    if alpha != 1:
        return apply(_SUB_ALPHA, (to_tensor_like(input), to_tensor_like(other)), {"alpha": alpha})
    return apply(BINARY["sub"], (to_tensor_like(input), to_tensor_like(other)))


def _add_(self, other, *, alpha=1):
    op, st = (_ADD_ALPHA, {"alpha": alpha}) if alpha != 1 else (BINARY["add"], None)
    return apply(op, (self, to_tensor_like(other)), st, out=self)


def _sub_(self, other, *, alpha=1):
    op, st = (_SUB_ALPHA, {"alpha": alpha}) if alpha != 1 else (BINARY["sub"], None)
    return apply(op, (self, to_tensor_like(other)), st, out=self)


def pow(input, exponent):
    if isinstance(input, Tensor):
        op = _POW_T if isinstance(exponent, Tensor) else _POW
        return apply(op, (input, to_tensor_like(exponent)))
    return apply(_RPOW, (exponent, input))


def _pow_(self, exponent):
    op = _POW_T if isinstance(exponent, Tensor) else _POW
    return apply(op, (self, exponent), out=self)


def rsub(input, other, alpha=1):
    return apply(_RSUB, (input, to_tensor_like(other)))


def true_divide(input, other):
    return BINARY_FN["div"](input, other)


def div(input, other, *, rounding_mode=None):
    if rounding_mode is None:
        return apply(BINARY["div"], (to_tensor_like(input), to_tensor_like(other)))
    if rounding_mode == "floor":
        return apply(BINARY["floor_divide"], (to_tensor_like(input), to_tensor_like(other)))
    if rounding_mode == "trunc":
        return apply(_DIV_TRUNC, (to_tensor_like(input), to_tensor_like(other)))
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                     f"found '{rounding_mode}'")


_DIV_TRUNC = defop("div_trunc", lambda a, b: jnp.trunc(a / b).astype(jnp.result_type(a, b)),
                   None)

# ---- selection and clamping
_CLAMP = defop("clamp", lambda x, lo, hi, has_lo, has_hi: jnp.clip(
    x, lo if has_lo else None, hi if has_hi else None), "ClampBackward1")
_CLAMP_T = defop("clamp_tensor", lambda x, lo, hi, has_lo, has_hi: jnp.clip(
    x, lo if has_lo else None, hi if has_hi else None), "ClampBackward0")


def _clamp_args(input, min, max):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    tensor_bounds = isinstance(min, Tensor) or isinstance(max, Tensor)
    op = _CLAMP_T if tensor_bounds else _CLAMP
    lo = 0 if min is None else min
    hi = 0 if max is None else max
    return op, (input, lo, hi), {"has_lo": min is not None, "has_hi": max is not None}


def clamp(input, min=None, max=None):
    op, args, st = _clamp_args(input, min, max)
    return apply(op, args, st)


def clamp_(self, min=None, max=None):
    op, args, st = _clamp_args(self, min, max)
    return apply(op, args, st, out=self)


def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


_WHERE = defop("where", jnp.where, "WhereBackward0", {1: (0,), 2: (0,)})
_MASKED_FILL = defop("masked_fill", lambda x, m, v: jnp.where(m, jnp.asarray(v, x.dtype), x),
                     "MaskedFillBackward0", {0: (1,), 2: (1,)})
_LERP = defop("lerp", lambda a, b, w: a + w * (b - a), "LerpBackward0")


def where(condition, input=None, other=None):
    if input is None and other is None:
        from .shape import nonzero
        return nonzero(condition, as_tuple=True)
    return apply(_WHERE, (to_tensor_like(condition), to_tensor_like(input),
                          to_tensor_like(other)))


def masked_fill(input, mask, value):
    return apply(_MASKED_FILL, (input, to_tensor_like(mask), to_tensor_like(value)))


def masked_fill_(self, mask, value):
    return apply(_MASKED_FILL, (self, to_tensor_like(mask), to_tensor_like(value)), out=self)


def lerp(input, end, weight):
    return apply(_LERP, (input, to_tensor_like(end), to_tensor_like(weight)))


# ---- in-place writes of constants
_ZERO = defop("zero", jnp.zeros_like, "ZeroBackward0", ())
_FILL = defop("fill", lambda x, v: jnp.full_like(x, v), "FillBackward0", ())
_COPY = defop("copy", lambda x, src: jnp.broadcast_to(src, x.shape).astype(x.dtype),
              "CopyBackwards", ())


def zero_(self):
    return apply(_ZERO, (self,), out=self)


def fill_(self, value):
    return apply(_FILL, (self, to_tensor_like(value)), out=self)


def copy_(self, src, non_blocking=False):
    return apply(_COPY, (self, to_tensor_like(src)), out=self)


BINARY_FN = {}
for _n in ("mul", "maximum", "minimum", "fmax", "fmin", "atan2", "hypot", "fmod", "remainder",
           "xlogy", "floor_divide", "eq", "ne", "lt", "le", "gt", "ge", "logical_and",
           "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "div"):
    from .registry import FUNCTIONS as _F
    BINARY_FN[_n] = _F[_n]

for _f in (add, sub, pow, div, true_divide, rsub, clamp, clamp_min, clamp_max, where,
           masked_fill, lerp):
    register(_f)
register(clamp, "clip")
register(clamp_, "clamp_", function=False)
register(clamp_, "clip_", function=False)
register(_add_, "add_", function=False)
register(_sub_, "sub_", function=False)
register(_pow_, "pow_", function=False)
register(masked_fill_, function=False)
register(zero_, function=False)
register(fill_, function=False)
register(copy_, function=False)
register(BINARY_FN["mul"], "multiply")
register(sub, "subtract")
register(div, "divide")
register(BINARY_FN["ne"], "not_equal")
register(BINARY_FN["gt"], "greater")
register(BINARY_FN["lt"], "less")
register(BINARY_FN["ge"], "greater_equal")
register(BINARY_FN["le"], "less_equal")
