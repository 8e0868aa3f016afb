"""A NumPy interpreter of JAX jaxprs, for programs seen for the first time.

Compiling a small XLA program costs 20-100 ms on a CPU. A program's first call can instead be
run here, one NumPy call per equation, while XLA compiles it in the background; later calls
use the compiled program. So this interpreter must give XLA's values (up to float rounding:
float32 transcendentals differ by a few ulp, reductions round differently, and XLA on a CPU
flushes denormals to zero where NumPy keeps them), and must refuse what it does not fully
handle rather than guess: :func:`supported` says whether every equation, recursively through
call-like sub-jaxprs, has a rule here for its primitive, for each of its params and for its
dtypes. The caller runs XLA when it says no.

Refused: dtypes other than bool, the signed and unsigned ints and float32/float64 (no complex,
no bfloat16/float16, no PRNG key types); loops (``while``, ``scan``: an unbounded Python loop
could take longer than the compile it saves; ``cond`` is supported); random primitives;
erf, lgamma and the other special functions NumPy has no vectorized form of; anything with
effects (callbacks, debug prints); a ``sharding`` param that is not None; ``reduce_precision``
that is not a no-op for its dtype; ``scatter`` (replace) without ``unique_indices`` (XLA's order
among duplicates is unspecified) or with an ``update_jaxpr`` (``x.at[i].apply``); an unstable
multi-operand ``sort`` (ties could come out in another order than XLA's); and any param or
param value that has no check below.

XLA semantics that differ from NumPy's and are matched here: integer division truncates toward
zero, ``x / 0`` is -1 (all ones) and ``x % 0`` is ``x``; a float converted to an integer
saturates and NaN becomes 0; shifts by the bit width or more give 0 (or the sign, arithmetic
right shift); dynamic_slice clamps its start; gather clamps (CLIP, PROMISE_IN_BOUNDS) or fills
whole out-of-bounds slices (FILL_OR_DROP), while scatter drops whole out-of-bounds windows
(FILL_OR_DROP and PROMISE_IN_BOUNDS) or clamps (CLIP).
"""
import weakref

import numpy as np

from jax.extend.core import DropVar as _DropVar, Literal as _Literal

from hookgrad import _numpy_eval_indexing as _ix

__all__ = ["supported", "eval_jaxpr"]

_DTYPES = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float32, np.float64))

RULES = {}   # primitive name -> rule(*operands, **params) -> array, or list of arrays
PARAMS = {}  # primitive name -> {param name: check(value) -> bool}; an unlisted param refuses
SUBS = {}    # primitive name -> params -> the sub-jaxprs that supported() must also check
REFUSE = {}  # primitive name -> refuse(params, in_avals) -> bool, for what the checks above miss


def _any(v):
    return True


def _none(v):
    return v is None


def _unspecified(shardings):
    # jit's in/out shardings are UnspecifiedValue unless the user pinned a placement
    return all(type(s).__name__ == "UnspecifiedValue" for s in shardings)


def _all_none(vs):
    return all(v is None for v in vs)


def _dtype_or_none(v):
    return v is None or np.dtype(v) in _DTYPES


def define(names, rule, params=None, subs=None, refuse=None):
    for name in names.split():
        RULES[name] = rule
        PARAMS[name] = params or {}
        if subs:
            SUBS[name] = subs
        if refuse:
            REFUSE[name] = refuse


# --- elementwise -------------------------------------------------------------------------------

_ACC = {"accuracy": _none}  # a requested accuracy asks for an implementation NumPy cannot pick


def _unary(name, fn, params=_ACC):
    define(name, lambda x, **_: fn(x), params)


def _binary(name, fn, params=None):
    define(name, lambda x, y, **_: fn(x, y), params)


for _name, _fn in {
        "exp": np.exp, "exp2": np.exp2, "log": np.log, "log1p": np.log1p, "expm1": np.expm1,
        "tanh": np.tanh, "sin": np.sin, "cos": np.cos, "tan": np.tan, "sqrt": np.sqrt,
        "cbrt": np.cbrt, "rsqrt": lambda x: 1 / np.sqrt(x),
        "logistic": lambda x: 1 / (1 + np.exp(-x))}.items():
    _unary(_name, _fn)
for _name, _fn in {
        "neg": np.negative, "abs": np.abs, "sign": np.sign, "floor": np.floor, "ceil": np.ceil,
        "is_finite": np.isfinite, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
        "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh,
        "atanh": np.arctanh, "not": np.invert, "square": np.square,
        "stop_gradient": lambda x: x, "copy": lambda x: x, "copy_p": lambda x: x}.items():
    _unary(_name, _fn, None)
for _name, _fn in {
        "add": np.add, "add_any": np.add, "sub": np.subtract, "max": np.maximum,
        "min": np.minimum, "atan2": np.arctan2, "nextafter": np.nextafter,
        "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
        "gt": np.greater, "ge": np.greater_equal, "and": np.bitwise_and, "or": np.bitwise_or,
        "xor": np.bitwise_xor}.items():
    _binary(_name, _fn)
define("mul", lambda x, y, **_: x * y, {"out_dtype": _none})


def _round(x, rounding_method):
    if int(rounding_method) == 1:  # TO_NEAREST_EVEN, NumPy's own rounding
        return np.round(x)
    t = np.trunc(x)  # AWAY_FROM_ZERO: x - t is exact, so the half-way test is too
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


define("round", _round, {"rounding_method": lambda v: int(v) in (0, 1)})


def _div(x, y):
    if x.dtype.kind not in "iu":
        return np.true_divide(x, y)
    # XLA truncates toward zero, gives -1 (all ones) for x / 0 and INT_MIN for INT_MIN / -1
    zero = y == 0
    safe = np.where(zero, 1, y).astype(y.dtype)
    if x.dtype.kind == "i":
        safe = np.where((x == np.iinfo(x.dtype).min) & (y == -1), 1, safe).astype(y.dtype)
    r = np.fmod(x, safe)
    q = (x - r) // safe  # exact: x - r is a multiple of safe
    return np.where(zero, np.array(-1).astype(x.dtype), q)


def _rem(x, y):
    if x.dtype.kind not in "iu":
        return np.fmod(x, y)  # C fmod: the result has the dividend's sign
    zero = y == 0
    safe = np.where(zero, 1, y).astype(y.dtype)  # x % 0 is x in XLA; INT_MIN % -1 is 0
    return np.where(zero, x, np.fmod(x, safe))


define("div", lambda x, y: _div(x, y))
define("rem", lambda x, y: _rem(x, y))


def _pow(x, y):
    # x is float; y float or int (pow(f32, i32) is allowed): compute in x's dtype
    return np.power(x, y.astype(x.dtype, copy=False))


define("pow", lambda x, y: _pow(x, y))


def _integer_pow(x, y):
    if y == 0:
        return np.ones_like(x)
    if y == 1:
        return x
    if y == 2:
        return x * x
    if y < 0:
        return 1 / np.power(x, -y)
    return np.power(x, y)


define("integer_pow", _integer_pow, {"y": _any})


def _shift(x, s, kind):
    bits = x.dtype.itemsize * 8
    udt, sdt = np.dtype(f"uint{bits}"), np.dtype(f"int{bits}")
    ux = x.view(udt)  # the bit pattern, whatever x's signedness
    us = s.astype(udt)
    over = us >= bits  # also negative shift amounts, seen as huge unsigned ones
    us = np.where(over, 0, us).astype(udt)
    if kind == "left":
        r = np.left_shift(ux, us)
        return np.where(over, 0, r).astype(udt).view(x.dtype)
    if kind == "logical":
        r = np.right_shift(ux, us)
        return np.where(over, 0, r).astype(udt).view(x.dtype)
    sx = x.view(sdt)  # arithmetic: shift the signed pattern
    r = np.right_shift(sx, us.astype(sdt))
    return np.where(over, np.where(sx < 0, -1, 0), r).astype(sdt).view(x.dtype)


define("shift_left", lambda x, s: _shift(x, s, "left"))
define("shift_right_logical", lambda x, s: _shift(x, s, "logical"))
define("shift_right_arithmetic", lambda x, s: _shift(x, s, "arithmetic"))
define("clamp", lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi))


def _select_n(which, *cases):
    if which.dtype == np.bool_:
        return np.where(which, cases[1], cases[0]) if len(cases) == 2 else cases[0]
    return np.choose(which, cases, mode="clip")


# np.choose takes at most 32 choices in older NumPy (64 now): more falls back to XLA
define("select_n", _select_n, refuse=lambda p, avals: len(avals) > 33)


def _convert(x, new_dtype, **_):
    dt = np.dtype(new_dtype)
    if x.dtype.kind == "f" and dt.kind in "iu":
        # XLA saturates out-of-range floats and sends NaN to 0; NumPy's cast is undefined there
        info = np.iinfo(dt)
        big, small, nan = x >= float(info.max), x <= float(info.min), np.isnan(x)
        mid = np.where(big | small | nan, 0, x).astype(dt)
        return np.where(big, info.max, np.where(small, info.min, mid)).astype(dt)
    return x.astype(dt)


define("convert_element_type", _convert,
       {"new_dtype": _dtype_or_none, "weak_type": _any, "sharding": _none})


def _reduce_precision(x, exponent_bits, mantissa_bits):
    return x


define("reduce_precision", _reduce_precision, {"exponent_bits": _any, "mantissa_bits": _any},
       refuse=lambda p, avals: not all(
           (a.dtype, p["exponent_bits"], p["mantissa_bits"]) in
           ((np.dtype(np.float32), 8, 23), (np.dtype(np.float64), 11, 52)) for a in avals))


# --- reductions and scans ----------------------------------------------------------------------

def _identity(dtype, high):
    if dtype.kind == "f":
        return np.inf if high else -np.inf
    if dtype.kind == "b":
        return high
    info = np.iinfo(dtype)
    return info.max if high else info.min


_RED = {"axes": _any, "out_sharding": _none}
define("reduce_sum", lambda x, axes, **_: np.sum(x, axis=tuple(axes), dtype=x.dtype), _RED)
define("reduce_prod", lambda x, axes, **_: np.prod(x, axis=tuple(axes), dtype=x.dtype), _RED)
define("reduce_max", lambda x, axes, **_: np.max(
    x, axis=tuple(axes), initial=_identity(x.dtype, False)), _RED)
define("reduce_min", lambda x, axes, **_: np.min(
    x, axis=tuple(axes), initial=_identity(x.dtype, True)), _RED)
define("reduce_and", lambda x, axes, **_: np.all(x, axis=tuple(axes)) if x.dtype == np.bool_
       else np.bitwise_and.reduce(x, axis=tuple(axes)), _RED)
define("reduce_or", lambda x, axes, **_: np.any(x, axis=tuple(axes)) if x.dtype == np.bool_
       else np.bitwise_or.reduce(x, axis=tuple(axes)), _RED)
define("reduce_xor", lambda x, axes, **_: np.bitwise_xor.reduce(x, axis=tuple(axes)), _RED)
# NumPy's argmax/argmin return the first NaN, as XLA's do
define("argmax", lambda x, axes, index_dtype: np.argmax(x, axis=axes[0]),
       {"axes": lambda v: len(v) == 1, "index_dtype": _dtype_or_none})
define("argmin", lambda x, axes, index_dtype: np.argmin(x, axis=axes[0]),
       {"axes": lambda v: len(v) == 1, "index_dtype": _dtype_or_none})


def _cumulative(accumulate):
    def rule(x, axis, reverse):
        if reverse:
            return np.flip(accumulate(np.flip(x, axis), axis), axis)
        return accumulate(x, axis)
    return rule


_CUM = {"axis": _any, "reverse": _any}
define("cumsum", _cumulative(lambda x, a: np.cumsum(x, a, dtype=x.dtype)), _CUM)
define("cumprod", _cumulative(lambda x, a: np.cumprod(x, a, dtype=x.dtype)), _CUM)
define("cummax", _cumulative(lambda x, a: np.maximum.accumulate(x, a)), _CUM)
define("cummin", _cumulative(lambda x, a: np.minimum.accumulate(x, a)), _CUM)
define("cumlogsumexp", _cumulative(lambda x, a: np.logaddexp.accumulate(x, a)), _CUM)


# --- shapes ------------------------------------------------------------------------------------

def _broadcast_in_dim(x, shape, broadcast_dimensions, sharding):
    expanded = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        expanded[dst] = x.shape[src]
    return np.broadcast_to(x.reshape(expanded), shape)


define("broadcast_in_dim", _broadcast_in_dim,
       {"shape": _any, "broadcast_dimensions": _any, "sharding": _none})
def _reshape(x, new_sizes, dimensions, sharding):
    # dimensions: the order in which to read x's elements, i.e. a transpose first
    return (x if dimensions is None else np.transpose(x, dimensions)).reshape(new_sizes)


define("reshape", _reshape, {"new_sizes": _any, "dimensions": _any, "sharding": _none})
define("squeeze", lambda x, dimensions: np.squeeze(x, tuple(dimensions)), {"dimensions": _any})
define("transpose", lambda x, permutation: np.transpose(x, permutation), {"permutation": _any})
define("rev", lambda x, dimensions: np.flip(x, tuple(dimensions)), {"dimensions": _any})
define("concatenate", lambda *xs, dimension: np.concatenate(xs, dimension),
       {"dimension": _any})
define("split", lambda x, sizes, axis: np.split(x, np.cumsum(sizes)[:-1], axis),
       {"sizes": _any, "axis": _any})
define("stack", lambda *xs, axis: np.stack(xs, axis), {"axis": _any})
define("unstack", lambda x, axis: [np.take(x, i, axis) for i in range(x.shape[axis])],
       {"axis": _any})
define("tile", lambda x, reps: np.tile(x, reps), {"reps": _any})


def _iota(dtype, shape, dimension, sharding):
    line = np.arange(shape[dimension], dtype=dtype)
    return np.broadcast_to(line.reshape([-1 if d == dimension else 1 for d in range(len(shape))]),
                           shape)


define("iota", _iota, {"dtype": _dtype_or_none, "shape": _any, "dimension": _any,
                       "sharding": _none})


def _slice(x, start_indices, limit_indices, strides):
    strides = strides or (1,) * x.ndim
    return x[tuple(slice(a, b, s) for a, b, s in zip(start_indices, limit_indices, strides))]


define("slice", _slice, {"start_indices": _any, "limit_indices": _any, "strides": _any})


def _pad(x, value, padding_config):
    # interior padding and positive edges first, into a filled array; negative edges crop after
    shape = [max(lo, 0) + n + max(n - 1, 0) * mid + max(hi, 0)
             for n, (lo, hi, mid) in zip(x.shape, padding_config)]
    out = np.full(shape, value, dtype=x.dtype)
    out[tuple(slice(max(lo, 0), max(lo, 0) + ((n - 1) * (mid + 1) + 1 if n else 0), mid + 1)
              for n, (lo, hi, mid) in zip(x.shape, padding_config))] = x
    return out[tuple(slice(-min(lo, 0), s + min(hi, 0))
                     for s, (lo, hi, mid) in zip(shape, padding_config))]


define("pad", _pad, {"padding_config": _any})


def _starts(x_shape, window, indices):
    # XLA clamps dynamic starts so that the whole window fits
    return [int(min(max(int(i), 0), n - w)) for i, n, w in zip(indices, x_shape, window)]


def _dynamic_slice(x, *indices, slice_sizes):
    starts = _starts(x.shape, slice_sizes, indices)
    return x[tuple(slice(s, s + w) for s, w in zip(starts, slice_sizes))]


def _dynamic_update_slice(x, update, *indices):
    starts = _starts(x.shape, update.shape, indices)
    out = x.copy()
    out[tuple(slice(s, s + w) for s, w in zip(starts, update.shape))] = update
    return out


define("dynamic_slice", _dynamic_slice, {"slice_sizes": _any})
define("dynamic_update_slice", _dynamic_update_slice)


def _sort(*operands, dimension, is_stable, num_keys):
    # NumPy's stable sort puts NaNs last and keeps -0.0 and 0.0 in input order, as XLA's
    # comparator (which canonicalizes both) does
    keys = operands[:num_keys]
    if num_keys == 1:
        order = np.argsort(keys[0], axis=dimension, kind="stable")
    else:
        order = np.lexsort(keys[::-1], axis=dimension)
    return [np.take_along_axis(x, order, dimension) for x in operands]


define("sort", _sort, {"dimension": _any, "is_stable": _any, "num_keys": _any},
       refuse=lambda p, avals: not p["is_stable"] and len(avals) > 1)


# --- linear algebra and indexing (in _numpy_eval_indexing) --------------------------------------

define("dot_general", _ix.dot_general,
       {"dimension_numbers": _any, "precision": _any, "preferred_element_type": _dtype_or_none,
        "out_sharding": _none},
       refuse=lambda p, avals: any(a.dtype == np.bool_ for a in avals))
define("conv_general_dilated", _ix.conv_general_dilated,
       {"window_strides": _any, "padding": lambda v: not isinstance(v, str),
        "lhs_dilation": _any, "rhs_dilation": _any, "dimension_numbers": _any,
        "feature_group_count": _any, "batch_group_count": _any, "precision": _any,
        "preferred_element_type": _dtype_or_none, "out_sharding": _none},
       refuse=lambda p, avals: any(a.dtype == np.bool_ for a in avals))
define("gather", _ix.gather,
       {"dimension_numbers": _any, "slice_sizes": _any, "unique_indices": _any,
        "indices_are_sorted": _any, "mode": _ix.known_mode, "fill_value": _any})
_SCATTER = {"dimension_numbers": _any, "indices_are_sorted": _any, "unique_indices": _any,
            "mode": _ix.known_mode, "update_jaxpr": _any, "update_consts": _any}
for _name, _ufunc in {"scatter-add": np.add, "scatter_add": np.add, "scatter-mul": np.multiply,
                      "scatter_mul": np.multiply, "scatter-min": np.minimum,
                      "scatter_min": np.minimum, "scatter-max": np.maximum,
                      "scatter_max": np.maximum, "scatter-sub": np.subtract,
                      "scatter_sub": np.subtract}.items():
    define(_name, _ix.scatter_rule(_ufunc), _SCATTER)
# scatter with an update_jaxpr is lax.scatter_apply (a function of the old value): refused
define("scatter", _ix.scatter_rule(None), _SCATTER,
       refuse=lambda p, avals: not p["unique_indices"] or p["update_jaxpr"] is not None)


# --- calls: run the sub-jaxpr --------------------------------------------------------------------

def _parts(j):
    """(open jaxpr, consts) of a ClosedJaxpr or an open Jaxpr."""
    return (j.jaxpr, j.consts) if hasattr(j, "consts") else (j, ())


def _call(key):
    def rule(*args, **params):
        jaxpr, consts = _parts(params[key])
        return _eval(jaxpr, consts, args)
    return rule


define("jit pjit", _call("jaxpr"),
       {"jaxpr": _any, "in_shardings": _unspecified, "out_shardings": _unspecified,
        "in_layouts": _all_none, "out_layouts": _all_none, "donated_invars": _any,
        "ctx_mesh": _any, "name": _any, "keep_unused": _any, "inline": _any,
        "compiler_options_kvs": _any, "resource_env": _none},
       subs=lambda p: [p["jaxpr"]])
define("closed_call core_call call", _call("call_jaxpr"), {"call_jaxpr": _any},
       subs=lambda p: [p["call_jaxpr"]])
define("remat2 checkpoint remat", _call("jaxpr"),
       {"jaxpr": _any, "prevent_cse": _any, "differentiated": _any, "policy": _any},
       subs=lambda p: [p["jaxpr"]])
define("custom_jvp_call", _call("call_jaxpr"),
       {"call_jaxpr": _any, "jvp_jaxpr_fun": _any, "jvp_jaxpr_thunk": _any, "num_consts": _any,
        "symbolic_zeros": _any},
       subs=lambda p: [p["call_jaxpr"]])
define("custom_vjp_call", _call("call_jaxpr"),
       {"call_jaxpr": _any, "fwd_jaxpr_thunk": _any, "bwd": _any, "num_consts": _any,
        "out_trees": _any, "symbolic_zeros": _any},
       subs=lambda p: [p["call_jaxpr"]])
define("custom_vjp_call_jaxpr", _call("fun_jaxpr"),
       {"fun_jaxpr": _any, "fwd_jaxpr_thunk": _any, "bwd": _any, "num_consts": _any,
        "out_trees": _any, "symbolic_zeros": _any},
       subs=lambda p: [p["fun_jaxpr"]])
define("optimization_barrier", lambda *xs: list(xs))


def _cond(index, *args, branches):
    # XLA clamps the branch index into range
    jaxpr, consts = _parts(branches[min(max(int(index), 0), len(branches) - 1)])
    return _eval(jaxpr, consts, args)


define("cond", _cond, {"branches": _any}, subs=lambda p: list(p["branches"]))


# --- the interpreter ---------------------------------------------------------------------------

def _aval_ok(aval):
    return (type(aval).__name__ == "ShapedArray" and getattr(aval, "dtype", None) in _DTYPES
            and all(isinstance(d, (int, np.integer)) for d in aval.shape))


def _jaxpr_ok(jaxpr):
    if jaxpr.effects:
        return False
    if not all(_aval_ok(v.aval) for v in (*jaxpr.constvars, *jaxpr.invars, *jaxpr.outvars)):
        return False
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        checks = PARAMS.get(name)
        if checks is None or eqn.effects:
            return False
        for key, value in eqn.params.items():
            check = checks.get(key)
            if check is None or not check(value):
                return False
        if not all(_aval_ok(v.aval) for v in (*eqn.invars, *eqn.outvars)):
            return False
        refuse = REFUSE.get(name)
        if refuse is not None and refuse(eqn.params, [v.aval for v in eqn.invars]):
            return False
        subs = SUBS.get(name)
        if subs is not None and not all(_jaxpr_ok(_parts(j)[0]) for j in subs(eqn.params)):
            return False
    return True


def supported(closed_jaxpr) -> bool:
    """Whether eval_jaxpr can run this ClosedJaxpr: every equation, recursively through
    sub-jaxprs, has a NumPy rule for its primitive, its params and its dtypes."""
    try:
        return _jaxpr_ok(closed_jaxpr.jaxpr)
    except Exception:  # a param of a shape no check foresaw: refusing is always safe
        return False


def _plan(jaxpr):
    """How to run ``jaxpr`` (an open Jaxpr), worked out once: a list of slots (constants
    and literals converted ahead, the rest filled per call) and the equations that lead to
    an output, each with the slots it reads and writes. NOTE: the first tier runs a
    program's jaxpr on every call until XLA's compile is ready, each call a few microseconds
    of NumPy; walking the jaxpr per call (a dict of variables, a type test per read) cost
    more than that. An equation whose every result is unused (a vjp's recomputed forward,
    a zeros broadcast nobody reads) is left out: the outputs do not depend on it."""
    live = {v for v in jaxpr.outvars if not isinstance(v, _Literal)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.outvars if not isinstance(v, _DropVar)):
            kept.append(eqn)
            live.update(v for v in eqn.invars if not isinstance(v, _Literal))
    slots = {}
    init = []

    def place(v):  # the slot of a variable (made on first sight), or of a literal's value
        if isinstance(v, _Literal):  # read-only: every call reads this one array
            value = np.array(v.val, v.aval.dtype)
            value.flags.writeable = False
            init.append(value)
            return len(init) - 1
        if v not in slots:
            slots[v] = len(init)
            init.append(None)
        return slots[v]

    def target(v):  # (slot, dtype, shape) a result is checked against; slot None: dropped
        return (None if isinstance(v, _DropVar) else place(v), v.aval.dtype, v.aval.shape)

    given = [target(v) for v in (*jaxpr.constvars, *jaxpr.invars)]
    steps = [(RULES[eqn.primitive.name], [place(v) for v in eqn.invars], eqn.params,
              [target(v) for v in eqn.outvars], eqn.primitive.multiple_results)
             for eqn in reversed(kept)]
    return init, given, steps, [place(v) for v in jaxpr.outvars]


def _write(vals, target, value):
    slot, dtype, shape = target
    if slot is None:
        return
    value = np.asarray(value, dtype)  # NumPy promotes differently; the aval decides
    if value.shape != shape:
        raise RuntimeError(f"numpy_eval: {value.shape} computed for a value of "
                           f"{np.dtype(dtype).name}{list(shape)}")
    vals[slot] = value


_plans = weakref.WeakKeyDictionary()  # Jaxpr -> its _plan (a program lives as long as it)


def _eval(jaxpr, consts, args):
    plan = _plans.get(jaxpr)
    if plan is None:
        plan = _plans[jaxpr] = _plan(jaxpr)
    init, given, steps, outs = plan
    vals = init.copy()
    for target, x in zip(given, (*consts, *args)):
        _write(vals, target, x)
    for rule, reads, params, targets, multiple in steps:
        out = rule(*[vals[i] for i in reads], **params)
        if multiple:
            for target, x in zip(targets, out):
                _write(vals, target, x)
        else:
            _write(vals, targets[0], out)
    return [vals[i] for i in outs]


def eval_jaxpr(closed_jaxpr, *args) -> list:
    """Run it with NumPy: ``args`` are NumPy arrays (or numpy scalars) for the jaxpr's invars,
    flat, in order; returns a list of NumPy arrays, one per outvar, each with exactly the
    outvar aval's shape and dtype (np.ndarray, not a 0-d numpy scalar)."""
    with np.errstate(all="ignore"):  # XLA does not warn on 0/0 or overflow
        out = _eval(closed_jaxpr.jaxpr, closed_jaxpr.consts, args)
    # a broadcast (broadcast_in_dim, iota) or a literal is a read-only array: hand back
    # arrays of their own
    return [x if x.flags.writeable else x.copy() for x in out]
