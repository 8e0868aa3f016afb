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
from .registry import METHODS, defop, inplace_of, register, to_tensor_like


def _abs(x):
    # x * sign(x): JAX's derivative of this is sign(x), 0 at 0 as in PyTorch (jnp.abs gives 1)
    if jnp.issubdtype(x.dtype, jnp.floating):
        return x * jnp.sign(x)
    return jnp.abs(x)


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
    ("abs",        _abs,              "AbsBackward0"),
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
    ("round",      jnp.round,         "RoundBackward0",     ()),
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
    ("fmax",         _fmax,               "FmaxBackward0"),
    ("fmin",         _fmin,               "FminBackward0"),
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


def _broadcast_error(args):
    """PyTorch's error for operands whose shapes do not broadcast (None if they do)."""
    shapes = [tuple(a.shape) for a in args if isinstance(a, Tensor)]
    for i, a in enumerate(shapes):
        for b in shapes[i + 1:]:
            err = shape_broadcast_error(a, b)
            if err is not None:
                return err
    return None


def shape_broadcast_error(a, b):
    """PyTorch's error for shapes ``a`` and ``b`` that do not broadcast (None if they do)."""
    nd = max(len(a), len(b))
    for k in range(1, nd + 1):
        da = a[-k] if k <= len(a) else 1
        db = b[-k] if k <= len(b) else 1
        if da != db and da != 1 and db != 1:
            return RuntimeError(f"The size of tensor a ({da}) must match the size of tensor b "
                                f"({db}) at non-singleton dimension {nd - k}")
    return None


def bapply(op, args, statics=None, out=None):
    """``apply`` for broadcasting ops: a shape mismatch raises PyTorch's RuntimeError
    (checked only after JAX refused, so it costs nothing otherwise)."""
    try:
        return apply(op, args, statics, out=out)
    except (TypeError, ValueError):
        raise _broadcast_error(args) or _reraise() from None


def _reraise():
    raise  # the exception being handled: JAX's own, when the shapes were not the cause


_LOGICAL = ("logical_and", "logical_or", "logical_xor")


def _make_binary(row):
    name, fwd, node = row[:3]
    save = row[3] if len(row) > 3 else "all"
    op = defop(name, fwd, node, save, scalar_edges=name in _SCALAR_EDGE_OPS)

    logical = name in _LOGICAL

    def fn(input, other):
        if not isinstance(other, Tensor):
            if logical:
                raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, "
                                f"not {type(other).__name__}")
            other = to_tensor_like(other)
        if not isinstance(input, Tensor):
            input = to_tensor_like(input)
        try:  # bapply, inlined: the hot path of every binary operator
            return apply(op, (input, other))
        except (TypeError, ValueError):
            raise _broadcast_error((input, other)) or _reraise() from None
    fn.__name__ = name
    register(fn)
    inplace_of(op, name)
    return op


UNARY = {row[0]: _make_unary(row) for row in _UNARY}
BINARY = {row[0]: _make_binary(row) for row in _BINARY}

# add/sub with alpha: alpha is a static argument (rarely varied)
_ADD_ALPHA = defop("add_alpha", lambda a, b, alpha: a + alpha * b, "AddBackward0", (),
                   scalar_edges=True)
_SUB_ALPHA = defop("sub_alpha", lambda a, b, alpha: a - alpha * b, "SubBackward0", (),
                   scalar_edges=True)
_RSUB = defop("rsub", lambda a, b: b - a, "RsubBackward1", ())
_RSUB_T = defop("rsub_tensor", lambda a, b, alpha: b - alpha * a, "RsubBackward0", ())
_POW = defop("pow", _pow, "PowBackward0", {0: (0, 1)})
_POW_T = defop("pow_tensor", _pow, "PowBackward1")
_RPOW = defop("rpow", lambda a, b: _pow(b, a), "PowBackward2")
# rounding divisions: PyTorch records DivBackward2, whose gradients are zero
_DIV_FLOOR = defop("div_floor", lambda a, b: jax.lax.stop_gradient(jnp.floor_divide(a, b)),
                   "DivBackward2", (), scalar_edges=True)
_DIV_TRUNC = defop("div_trunc", lambda a, b: jax.lax.stop_gradient(
    jnp.trunc(a / b).astype(jnp.result_type(a, b))), "DivBackward2", (), scalar_edges=True)


def add(input, other, *, alpha=1):
    """``add(input, other, *, alpha=1)``: ``input + alpha * other``, broadcasting."""
    if alpha != 1:
        return bapply(_ADD_ALPHA, (to_tensor_like(input), to_tensor_like(other)),
                      {"alpha": alpha})
    return bapply(BINARY["add"], (to_tensor_like(input), to_tensor_like(other)))


def sub(input, other, *, alpha=1):
    """``sub(input, other, *, alpha=1)``: ``input - alpha * other``, broadcasting."""
    if alpha != 1:
        return bapply(_SUB_ALPHA, (to_tensor_like(input), to_tensor_like(other)),
                      {"alpha": alpha})
    return bapply(BINARY["sub"], (to_tensor_like(input), to_tensor_like(other)))


def _add_(self, other, *, alpha=1):
    op, st = (_ADD_ALPHA, {"alpha": alpha}) if alpha != 1 else (BINARY["add"], None)
    return bapply(op, (self, to_tensor_like(other)), st, out=self)


def _sub_(self, other, *, alpha=1):
    op, st = (_SUB_ALPHA, {"alpha": alpha}) if alpha != 1 else (BINARY["sub"], None)
    return bapply(op, (self, to_tensor_like(other)), st, out=self)


def pow(input, exponent):
    """``pow(input, exponent)``: ``input ** exponent``; either side may be a number."""
    if isinstance(input, Tensor):
        op = _POW_T if isinstance(exponent, Tensor) else _POW
        return bapply(op, (input, to_tensor_like(exponent)))
    return bapply(_RPOW, (exponent, input))


def _pow_(self, exponent):
    op = _POW_T if isinstance(exponent, Tensor) else _POW
    return bapply(op, (self, to_tensor_like(exponent)), out=self)


def rsub(input, other, *, alpha=1):
    """``rsub(input, other, *, alpha=1)``: ``other - alpha * input``."""
    if isinstance(other, Tensor):
        return bapply(_RSUB_T, (input, other), {"alpha": alpha})
    if alpha != 1:
        input = BINARY_FN["mul"](input, alpha)
    return bapply(_RSUB, (input, other))


def rdiv(input, other):
    """``other / input`` for a number ``other``: PyTorch computes it as
    ``input.reciprocal() * other`` (a ``MulBackward0`` after a ``ReciprocalBackward0``)."""
    return BINARY_FN["mul"](apply(UNARY["reciprocal"], (input,)), other)


def true_divide(input, other):
    return div(input, other)


def div(input, other, *, rounding_mode=None):
    """``div(input, other, *, rounding_mode=None)``: true division, or rounded with
    ``rounding_mode`` ``'trunc'`` / ``'floor'`` (whose gradient is zero)."""
    args = (to_tensor_like(input), to_tensor_like(other))
    if rounding_mode is None:
        return bapply(BINARY["div"], args)
    if rounding_mode == "floor":
        return bapply(_DIV_FLOOR, args)
    if rounding_mode == "trunc":
        return bapply(_DIV_TRUNC, args)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                       f"but found '{rounding_mode}'")


def _div_(self, other, *, rounding_mode=None):
    op = {None: BINARY["div"], "floor": _DIV_FLOOR, "trunc": _DIV_TRUNC}.get(rounding_mode)
    if op is None:
        div(self, other, rounding_mode=rounding_mode)  # raises PyTorch's error
    return bapply(op, (self, to_tensor_like(other)), out=self)


# ---- selection and clamping


def _clamp(x, lo, hi, has_lo, has_hi):
    # selects rather than jnp.clip: the gradient reaches ``x`` on the bounds inclusive and
    # a Tensor bound where it is the result, as in PyTorch (jnp.clip halves it on ties)
    if has_lo:
        x = jnp.where(x < lo, lo, x)
    if has_hi:
        x = jnp.where(x > hi, hi, x)
    return x


_CLAMP = defop("clamp", _clamp, "ClampBackward1")
_CLAMP_T = defop("clamp_tensor", _clamp, "ClampBackward0")
_CLAMP_MIN = defop("clamp_min", lambda x, lo: jnp.where(x < lo, lo, x), "ClampMinBackward0")
_CLAMP_MIN_T = defop("clamp_min_tensor", lambda x, lo: jnp.where(x < lo, lo, x),
                     "ClampMinBackward1")
_CLAMP_MAX = defop("clamp_max", lambda x, hi: jnp.where(x > hi, hi, x), "ClampMaxBackward0")
_CLAMP_MAX_T = defop("clamp_max_tensor", lambda x, hi: jnp.where(x > hi, hi, x),
                     "ClampMaxBackward1")
_NO_BOUND = []  # a 0-d Tensor standing for a missing Tensor bound (its edge is None)


def _no_bound():
    if not _NO_BOUND:
        _NO_BOUND.append(Tensor._wrap(jnp.zeros((), jnp.float32)))
    return _NO_BOUND[0]


def _clamp_args(input, min, max):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    st = {"has_lo": min is not None, "has_hi": max is not None}
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        lo = _no_bound() if min is None else to_tensor_like(min)
        hi = _no_bound() if max is None else to_tensor_like(max)
        return _CLAMP_T, (input, lo, hi), st
    return _CLAMP, (input, 0 if min is None else min, 0 if max is None else max), st


def clamp(input, min=None, max=None):
    """``clamp(input, min=None, max=None)`` (alias ``clip``): ``min(max(input, min), max)``.

    The gradient passes where ``min <= input <= max``; Tensor bounds get it where they are
    the result.
    """
    op, args, st = _clamp_args(input, min, max)
    return bapply(op, args, st)


def clamp_(self, min=None, max=None):
    op, args, st = _clamp_args(self, min, max)
    return bapply(op, args, st, out=self)


def _clamp_min_op(min):
    return (_CLAMP_MIN_T, to_tensor_like(min)) if isinstance(min, Tensor) else (_CLAMP_MIN, min)


def _clamp_max_op(max):
    return (_CLAMP_MAX_T, to_tensor_like(max)) if isinstance(max, Tensor) else (_CLAMP_MAX, max)


def clamp_min(input, min):
    op, lo = _clamp_min_op(min)
    return bapply(op, (input, lo))


def clamp_max(input, max):
    op, hi = _clamp_max_op(max)
    return bapply(op, (input, hi))


def clamp_min_(self, min):
    op, lo = _clamp_min_op(min)
    return bapply(op, (self, lo), out=self)


def clamp_max_(self, max):
    op, hi = _clamp_max_op(max)
    return bapply(op, (self, hi), out=self)


# where's operands come first so Python numbers among them get torch's ``None`` edges
_WHERE = defop("where", lambda x, y, c: jnp.where(c, x, y), "WhereBackward0", {},
               scalar_edges=True, nondiff=(2,))
_MASKED_FILL = defop("masked_fill", lambda x, m, v: jnp.where(m, jnp.asarray(v, x.dtype), x),
                     "MaskedFillBackward0", {}, nondiff=(1,))
_MASKED_FILL_T = defop("masked_fill_tensor", lambda x, v, m: jnp.where(
    m, v.astype(x.dtype), x), "MaskedFillBackward1", {}, nondiff=(2,))


def _lerp(a, b, w):
    # PyTorch's two-sided formula (exact at w == 1)
    return jnp.where(jnp.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


_LERP = defop("lerp", _lerp, "LerpBackward0")
_LERP_T = defop("lerp_tensor", _lerp, "LerpBackward1")


def where(condition, input=None, other=None):
    """``where(condition, input, other)``: ``input`` where ``condition`` is True, else
    ``other`` (either may be a number). ``where(condition)`` is ``nonzero(as_tuple=True)``."""
    if input is None and other is None:
        from .shape import nonzero
        return nonzero(condition, as_tuple=True)
    cond = to_tensor_like(condition)
    if not isinstance(cond, Tensor) or cond.dtype.name != "bool":
        kind = type(cond).__name__ if not isinstance(cond, Tensor) else _kind(cond)
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {kind}")
    return bapply(_WHERE, (to_tensor_like(input), to_tensor_like(other), cond))


def _kind(t):
    from .dispatch import _torch_kind
    return _torch_kind(t._data.dtype)


def _masked_fill_args(input, mask, value):
    mask = to_tensor_like(mask)
    if mask.dtype.name != "bool":
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_kind(mask).lower()}")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        return _MASKED_FILL_T, (input, value, mask)
    return _MASKED_FILL, (input, mask, value)


def masked_fill(input, mask, value):
    """``masked_fill(input, mask, value)``: ``value`` where the boolean ``mask`` is True."""
    op, args = _masked_fill_args(input, mask, value)
    return bapply(op, args)


def masked_fill_(self, mask, value):
    op, args = _masked_fill_args(self, mask, value)
    return bapply(op, args, out=self)


def lerp(input, end, weight):
    """``lerp(input, end, weight)``: ``input + weight * (end - input)``."""
    op = _LERP_T if isinstance(weight, Tensor) else _LERP
    return bapply(op, (input, to_tensor_like(end), to_tensor_like(weight)))


def lerp_(self, end, weight):
    op = _LERP_T if isinstance(weight, Tensor) else _LERP
    return bapply(op, (self, to_tensor_like(end), to_tensor_like(weight)), out=self)


# ---- in-place writes of constants
_ZERO = defop("zero", jnp.zeros_like, "ZeroBackward0", ())
_FILL = defop("fill", lambda x, v: jnp.full_like(x, v), "FillBackward2", ())
_FILL_T = defop("fill_tensor", lambda x, v: jnp.full_like(x, v), "FillBackward3", ())
_COPY = defop("copy", lambda x, src: jnp.broadcast_to(src, x.shape).astype(x.dtype),
              "torch::autograd::CopyBackwards", ())


def zero_(self):
    return apply(_ZERO, (self,), out=self)


def fill_(self, value):
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.ndim} dimensions.")
        return apply(_FILL_T, (self, value), out=self)
    return apply(_FILL, (self, value), out=self)


def copy_(self, src, non_blocking=False):
    src = to_tensor_like(src)
    if isinstance(src, Tensor):
        try:
            jnp.broadcast_shapes(src.shape, self.shape)
        except ValueError:
            raise RuntimeError(f"The size of tensor a ({self.shape[-1]}) must match the size of "
                               f"tensor b ({src.shape[-1]}) at non-singleton dimension "
                               f"{self.ndim - 1}") from None
    return apply(_COPY, (self, src), out=self)


BINARY_FN = {}
for _n in ("mul", "maximum", "minimum", "fmax", "fmin", "atan2", "hypot", "fmod", "remainder",
           "xlogy", "floor_divide", "eq", "ne", "lt", "le", "gt", "ge", "logical_and",
           "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "div"):
    from .registry import FUNCTIONS as _F
    BINARY_FN[_n] = _F[_n]

_ROUND_DECIMALS = defop("round_decimals", lambda x, decimals: jnp.round(x, decimals),
                        "RoundBackward1", ())


def round(input, *, decimals=0):
    """``round(input, *, decimals=0)``: to the nearest integer (halves to even), or to
    ``decimals`` decimal places."""
    if decimals == 0:
        return apply(UNARY["round"], (input,))
    return apply(_ROUND_DECIMALS, (input,), {"decimals": int(decimals)})


def _round_(self, *, decimals=0):
    if decimals == 0:
        return apply(UNARY["round"], (self,), out=self)
    return apply(_ROUND_DECIMALS, (self,), {"decimals": int(decimals)}, out=self)


def _where_method(self, condition, other):
    return where(condition, self, other)


for _f in (add, sub, pow, div, true_divide, rsub, clamp, clamp_min, clamp_max, masked_fill,
           lerp):
    register(_f)
register(where, method=False)
register(round)
register(_round_, "round_", function=False)
register(_where_method, "where", function=False)
register(clamp, "clip")
register(clamp_, "clamp_", function=False)
register(clamp_, "clip_", function=False)
register(clamp_min_, "clamp_min_", function=False)
register(clamp_max_, "clamp_max_", function=False)
register(_add_, "add_", function=False)
register(_sub_, "sub_", function=False)
register(_sub_, "subtract_", function=False)
register(_pow_, "pow_", function=False)
register(_div_, "div_", function=False)
register(_div_, "divide_", function=False)
register(lerp_, function=False)
register(masked_fill_, function=False)
register(zero_, function=False)
register(fill_, function=False)
register(copy_, function=False)
register(BINARY_FN["mul"], "multiply")
register(METHODS["mul_"], "multiply_", function=False)
register(sub, "subtract")
register(div, "divide")
register(BINARY_FN["ne"], "not_equal")
register(BINARY_FN["gt"], "greater")
register(BINARY_FN["lt"], "less")
register(BINARY_FN["ge"], "greater_equal")
register(BINARY_FN["le"], "less_equal")

# PyTorch also exports these in-place methods as functions (``torch.sin_(x)``)
for _n in ("abs_", "acos_", "acosh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_",
           "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "erf_", "erfc_", "exp2_", "exp_",
           "expm1_", "fill_", "floor_", "frac_", "log10_", "log1p_", "log2_", "log_", "neg_",
           "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinh_", "sqrt_",
           "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_"):
    register(METHODS[_n], _n, method=False)
register(METHODS["neg"], "negative")
register(METHODS["neg_"], "negative_")
