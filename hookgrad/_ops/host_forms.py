"""The NumPy forms of op rows: what the host stage (``stages/host.py``) runs for a Tensor
whose values are held on the host.

``FORMS`` maps a row's name (``registry.OPS``) to ``form(values, result, **statics)``: the
row's forward written with NumPy's function of the same name, on NumPy arrays and Python
numbers, giving an array of dtype ``result``, the row's result dtype by PyTorch's rules,
which the row's rule in ``RULES`` gives. A form gives PyTorch's values: bitwise for
``+ - * /``, casts, comparisons and integer ops, as NumPy's ufuncs round once in the result
dtype as PyTorch's CPU kernels do; a float32 transcendental function is evaluated in
float64 and rounded once, so it is within one float32 rounding of PyTorch's (NumPy's own
float32 ``exp`` and ``log`` are 2-3 ulp off, XLA's 1). A form raises (any exception) for
what it does not handle the way PyTorch does; the stage then runs the row on the XLA path,
which raises PyTorch's error for bad input. A form returns memory of its own, never a view
of an argument.

A row with no form here runs in XLA: its arguments' host values are copied in first.
"""
import functools
import operator

import numpy as np

from .. import _dtype
from .promotion import lift as _lift, pair as _pair

__all__ = ["FORMS", "RULES", "promoted", "stacked"]


def _cast(v, dtype):
    """``v`` (an array or a Python number) as ``dtype``, as PyTorch casts an operand to
    the computation's dtype. A number stays a Python number: NumPy's ufuncs cast it to
    the other operand's dtype (NEP 50), which is ``dtype`` here, and raise OverflowError
    for an int out of an integer dtype's range (PyTorch raises: the XLA path decides)."""
    if v.__class__ is np.ndarray:
        return v if v.dtype is dtype else v.astype(dtype, copy=False)
    if dtype.kind in "iu" and not isinstance(v, (bool, int)):
        raise TypeError("a float operand of an integer computation")
    return v


def _arith(ufunc, bools=True):
    """``+ - * /`` and their kin: every operand cast to the result dtype, one ufunc.
    ``bools`` False (``-``): PyTorch raises for a bool operand (the XLA path raises it)."""
    def form(vals, result):
        if len(vals) == 2:  # the common case, without building a list
            a, b = vals
            if a.__class__ is _ND and a.dtype is result and result.kind != "b" and (
                    b.__class__ is _ND and b.dtype is result or b.__class__ is int or
                    b.__class__ is float and result.kind == "f"):
                return ufunc(a, b)  # nothing to cast (``_cast`` would return both), no bool
            if not bools and _has_bool(vals):
                raise TypeError("a bool operand")
            return ufunc(_cast(a, result), _cast(b, result))
        if not bools and _has_bool(vals):
            raise TypeError("a bool operand")
        return ufunc(*[_cast(v, result) for v in vals])
    return form


_ND = np.ndarray


def _has_bool(vals):
    return any(v.__class__ is bool or v.__class__ is _ND and v.dtype.kind == "b"
               for v in vals)


_subtract = _arith(np.subtract, bools=False)
_true_divide = _arith(np.divide)


def _tensors_only(ufunc):
    """``maximum``/``minimum``: PyTorch takes Tensors only (the XLA path decides numbers),
    and no complex ones (the XLA path raises its error)."""
    def form(vals, result):
        if result.kind == "c" or any(v.__class__ is not np.ndarray for v in vals):
            raise TypeError("a number operand, or complex ones")
        return ufunc(*[v.astype(result, copy=False) for v in vals])
    return form


def _divide(vals, result):
    if result.kind != "f":  # integer division rounds: PyTorch's modes are other rows
        raise TypeError("an integer true division")
    return _true_divide(vals, result)


def _compare(ufunc, ordered=True):
    """Comparisons run in the operands' common dtype: arrays of one dtype, and numbers of
    no higher kind (a float number against an integer Tensor promotes: left to XLA).
    ``ordered`` (``<``, ``>=``...): PyTorch refuses complex operands (the XLA path raises
    its error)."""
    def form(vals, result):
        if len(vals) == 2 and vals[0].__class__ is np.ndarray:  # ``x == y``, ``x > 0``
            x, y = vals
            common = x.dtype
            if ordered and common.kind == "c":
                raise TypeError("complex operands of an ordering")
            if y.__class__ is np.ndarray:
                if y.dtype is not common and y.dtype != common:
                    raise TypeError("operands of different dtypes")
                return ufunc(x, y)
            if _KIND_RANK[_NUMBER_KIND[y.__class__]] > _KIND_RANK[common.kind]:
                raise TypeError("a number of a higher kind")
            return ufunc(x, common.type(y))
        arrays = [v for v in vals if v.__class__ is np.ndarray]
        common = arrays[0].dtype
        if any(a.dtype != common for a in arrays) or ordered and common.kind == "c":
            raise TypeError("operands of different dtypes")
        rank = _KIND_RANK[common.kind]
        if any(_KIND_RANK[_NUMBER_KIND[v.__class__]] > rank for v in vals
               if v.__class__ is not np.ndarray):
            raise TypeError("a number of a higher kind")
        # NOTE: a number is made ``common`` first: NumPy compares an int out of an
        # integer dtype's range exactly, where PyTorch does not (the XLA path decides)
        return ufunc(*[v if v.__class__ is np.ndarray else common.type(v) for v in vals])
    return form


_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2}
_NUMBER_KIND = {bool: "b", int: "i", float: "f"}
_NUMBER_RANK = {bool: 0, int: 1, float: 2}


def _transcendental(ufunc):
    """A float function, evaluated in float64 for float32 (then rounded once); an integer
    argument becomes the result's float dtype first, as PyTorch's does."""
    def form(vals, result):
        x, = vals
        if result.kind != "f":
            raise TypeError("not a float result")
        return ufunc(x.astype(np.float64)).astype(result)
    return form


def _to_dtype(vals, result, dtype):
    x, = vals
    if x.dtype.kind == "f" and result.kind in "iu":
        # PyTorch truncates toward zero in range; elsewhere its result is undefined and
        # XLA's saturates: left to XLA
        info = np.iinfo(result)
        if x.size and not (np.isfinite(x).all() and info.min <= x.min() and
                           x.max() <= info.max):
            raise ValueError("a float outside the integer dtype's range")
    return x.astype(result)


def _reduce(mean=False):
    """``sum``/``mean`` over ``dim`` (None: all), computed in the result dtype (the ufunc's
    reduce, as np.sum and np.mean compute it, without their Python wrappers)."""
    def form(vals, result, dim, keepdim, dtype):
        x, = vals
        if mean and result.kind != "f":  # PyTorch's mean of integers raises
            raise TypeError("not a float result")
        # (positional: the ufunc's keyword parsing costs more than a 32-element sum)
        total = np.add.reduce(x if x.dtype is result else x.astype(result), dim, None, None,
                              keepdim)
        if mean:  # the sum divided by the count, in the result dtype, as np.mean divides
            count = x.size // total.size if total.size else 1
            if total.__class__ is result.type:  # a whole reduction's scalar: its own
                total = total / result.type(count)  # arithmetic, no ufunc call (one
            else:  # rounding in the result dtype either way)
                total = np.true_divide(total, count, dtype=result)
        return np.asarray(total)
    return form


def _pick(fn, bools=True):
    """``amax``/``amin``/``argmax``/``argmin``: NumPy's NaN rules are PyTorch's (a NaN is
    the largest and the smallest; the first index of the extreme value)."""
    def form(vals, result, dim, keepdim):
        x, = vals
        kind = x.dtype.kind
        if x.size == 0 or kind == "c" or not bools and kind == "b":  # PyTorch raises for
            raise ValueError("an empty reduction, a complex one, or a bool argmax")  # these
        # the ufuncs' reduce and the array's methods: np.max's and np.argmax's wrappers
        # cost more than the work here
        return np.asarray(fn(x, dim, keepdims=keepdim))
    return form


def _logsumexp(vals, result, dim, keepdim):
    x, = vals
    if result.kind != "f" or x.size == 0:
        raise TypeError("not a float result, or empty")
    # the ufuncs themselves, each result written over the one before: NumPy's function
    # wrappers (np.max, np.sum, np.where) cost more than the arithmetic at these sizes
    m = _MAX(x, dim, keepdims=True)  # exact in any float dtype: no float64 copy first
    m[np.isinf(m)] = 0.0  # as PyTorch: an infinite maximum is not subtracted
    t = np.subtract(x, m, dtype=np.float64)
    out = np.log(np.add.reduce(np.exp(t, out=t), dim, keepdims=True))
    out += m
    if not keepdim:
        out = out.squeeze(dim) if dim is not None else out.reshape(())
    return out.astype(result)


def _gather(vals, result, dim):
    """Also the whole of ``gather`` for small host values (``gather.gather`` tries it
    first): every check PyTorch makes is made here, and anything else refused."""
    x, idx = vals
    if idx.__class__ is not np.ndarray or idx.dtype is not _INDEX or x.ndim != idx.ndim or \
            not 0 <= dim < x.ndim:
        raise TypeError("not PyTorch's gather of an int64 index")
    if idx.size and _out_of_range(idx, x.shape[dim]):
        # (as the index below raises for one past the end) the XLA path raises PyTorch's
        # error
        raise IndexError("an index out of range")
    # as the row's forward: PyTorch reads only the leading ``idx.shape[d]`` of other dims;
    # out[i, j] = x[i, idx[i, j]] (dim 1) as one fancy index, each other dim an arange
    # broadcast along its own axis (np.take_along_axis builds the same, with more checks)
    other = _aranges(idx.shape, x.shape, dim)
    return x[(*other[:dim], idx, *other[dim + 1:])]


_MIN, _MAX = np.minimum.reduce, np.maximum.reduce


def _out_of_range(idx, n):
    """Whether an entry of the int64 array ``idx`` (not empty) is outside ``[0, n)``, or,
    for a short one, negative: NumPy's index raises IndexError for one past the end, but
    wraps a negative one."""
    if idx.size <= 64:  # a loop's index of a batch: Python's min of its list costs half a
        # ufunc reduce's fixed cost
        return min(idx.ravel().tolist()) < 0
    # one reduce for both bounds: a negative int64 read as uint64 is past any size
    return _MAX(idx.view(np.uint64), None) >= n


@functools.lru_cache(maxsize=256)
def _aranges(shape, xshape, dim):
    """Per dim of a gather's index (of ``shape``; ``xshape``, the input's), an arange
    broadcast along its own axis (None at ``dim``); an index larger than the input apart
    from ``dim`` raises."""
    if any(i > s for d, (i, s) in enumerate(zip(shape, xshape)) if d != dim):
        raise IndexError("an index larger than the input")
    n = len(shape)
    return tuple(None if d == dim else np.arange(s).reshape((1,) * d + (s,) + (1,) * (n - d - 1))
                 for d, s in enumerate(shape))


def _join(fn):
    """``stack``/``cat``: every part cast to the result dtype (PyTorch promotes)."""
    def form(vals, result, dim):
        if _one_dtype(vals) is not result:
            if any(v.__class__ is not np.ndarray for v in vals):
                raise TypeError("a part that is not a Tensor")
            vals = [v.astype(result) for v in vals]
        return fn(vals, axis=dim)
    return form


def _stack(parts, axis):
    """np.stack of ``parts`` (one dtype); raises unless they have one shape (PyTorch's
    check: the full path raises its error)."""
    if len(set(map(_shape_of, parts))) != 1:
        raise ValueError("parts of different shapes")
    return joined(parts, axis)


def stacked(parts, axis):
    """``parts`` (NumPy arrays) stacked along a new ``axis`` (>= 0) when all have one dtype
    and one shape and ``axis`` is in range, else None (the op path decides, and raises
    PyTorch's errors): a collate's samples, stacked with no cast (``stacking.stack``
    tries it before the op path)."""
    if len(set(map(_dtype_of, parts))) != 1 or len(set(map(_shape_of, parts))) != 1 or \
            axis > parts[0].ndim:
        return None
    return joined(parts, axis)


def joined(parts, axis):
    """np.stack of ``parts``, of one dtype and one shape."""
    first = parts[0]
    if axis:
        return np.stack(parts, axis=axis)
    try:  # parts one after another: C-contiguous ones' bytes joined in one C loop, which
        # costs less than np.concatenate's per-part checks (a read-only result, as the
        # host stage's results are)
        data = b"".join(parts)
    except (BufferError, TypeError):  # a part that is not C-contiguous
        return np.concatenate(parts).reshape((len(parts), *first.shape))
    return np.frombuffer(data, first.dtype).reshape((len(parts), *first.shape))


_shape_of = operator.attrgetter("shape")


def _flip(vals, result, dims):
    x, = vals
    return x[_reversing(x.ndim, dims)].copy()


def _clone(vals, result):
    return vals[0].copy()  # C order: a host view's ``contiguous()`` is a copy in C order


def _pad(vals, result, value, pads=None, pairs=None, pad=None):
    """``F.pad``'s constant mode (``pads``: (before, after) per trailing dim) and
    ``constant_pad_nd`` (``pairs``: per dim, crops made already). A crop, or a value the
    dtype does not hold exactly (2.5 into integers, -1 into uint8), is the XLA path's."""
    x, = vals
    if pairs is None:
        pairs = ((0, 0),) * (x.ndim - len(pads)) + tuple(pads)
    if min(map(min, pairs), default=0) < 0:
        raise TypeError("a crop")
    return np.pad(x, pairs, constant_values=_fill(value, result))


def _fill(value, result):
    """The Python number ``value`` as a 0-d array of dtype ``result``; raises for another
    value, or one the dtype does not hold exactly (2.5 into integers, -1 into uint8,
    0.1 into float32): the XLA path's."""
    if value.__class__ not in _NUMBER_DTYPES and value.__class__ is not float:
        raise TypeError("a value that is not a Python number")
    fill = np.array(value).astype(result)  # NOTE: bool(value) for bools, as PyTorch casts
    if result.kind != "b" and fill != value or result.kind == "f" and np.isinf(fill) and \
            not np.isinf(value):  # (a float rounds; one past the dtype's range overflows)
        raise TypeError("a value the dtype does not hold")
    return fill


def _masked_fill(vals, result):
    """``masked_fill(x, mask, value)``: a bool ``mask`` (the op checked it) broadcast to
    ``x``'s shape, never beyond (PyTorch raises: the XLA path's)."""
    x, mask, value = vals
    if mask.__class__ is not _ND or x.__class__ is not _ND:
        raise TypeError("a number for the input or the mask")
    out = np.where(mask, _fill(value, result), x)
    if out.shape != x.shape:
        raise ValueError("a mask that broadcasts the input")
    return out


def _truth(method):
    """``any``/``all`` over ``dim`` (None: all): bool, but uint8 for uint8 in PyTorch (the
    rule ``truth``)."""
    def form(vals, result, dim, keepdim):  # (cast to ``result`` by the stage: 0 or 1)
        return np.asarray(method(vals[0], dim, keepdims=keepdim))
    return form


def _isin(vals, result, invert):
    """``isin``: values compared exactly, so both of integer dtypes or of one float dtype
    (PyTorch compares in the promoted dtype, which can round an integer; it refuses bool:
    the XLA path raises its error)."""
    e, t = vals
    if e.__class__ is not _ND or t.__class__ is not _ND or not (
            e.dtype.kind in "iu" and t.dtype.kind in "iu" or
            e.dtype is t.dtype and e.dtype.kind == "f"):
        raise TypeError("operands compared after a rounding")
    if t.size == 1 and t.dtype is e.dtype:
        # one test value of the same dtype (``generate``'s pad and eos ids): one comparison,
        # not np.isin's Python (a few hundred bytecodes, a sort), with its result
        v = t.reshape(())
        return e != v if invert else e == v
    return np.isin(e, t, invert=invert)


def _cumsum(vals, result, dim):
    """An integer or bool running sum (the op made it int64 already, as PyTorch does),
    exact in any order; a float one is the XLA path's (PyTorch's CPU kernel accumulates
    float32 in double, NumPy in float32)."""
    x, = vals
    if x.dtype.kind not in "iub":
        raise TypeError("a floating-point running sum")
    return np.cumsum(x, axis=dim, dtype=result) if x.ndim else x.copy()


@functools.lru_cache(maxsize=256)
def _reversing(ndim, dims):
    """The basic index reversing ``dims`` (each in ``[0, ndim)``, once: else raises, and
    the XLA path raises PyTorch's error), as np.flip builds it, without its checks."""
    if len(set(dims)) != len(dims) or not all(0 <= d < ndim for d in dims):
        raise ValueError("a dim repeated or out of range")
    return tuple(slice(None, None, -1) if d in dims else slice(None) for d in range(ndim))


# --------------------------------------------------------------------------- result dtypes
# PyTorch's promotion on the dtypes the host holds (``type_queries.result_type``'s rules;
# that module sits above the op path): dimensioned Tensors decide within a kind, 0-d
# Tensors and then Python numbers only lift the kind (``promotion.pair``/``lift``, the rule
# the XLA path's rows apply too). Asking JAX (``jax.eval_shape``) costs milliseconds a
# signature, more than a whole cold loop in PyTorch.

def _one_dtype(vals):
    """The dtype of ``vals`` when all are arrays of that one dtype, else None (in C loops:
    a collate stacks dozens of parts)."""
    if set(map(type, vals)) == _ARRAYS and len(dtypes := set(map(_dtype_of, vals))) == 1:
        return dtypes.pop()
    return None


_ARRAYS = {np.ndarray}
_dtype_of = operator.attrgetter("dtype")


def promoted(vals):
    """The dtype PyTorch computes ``vals`` (arrays and Python numbers) in."""
    first = vals[0]
    d = first.dtype if first.__class__ is np.ndarray else None
    if d is not None and len(vals) == 1:
        return d  # a unary op's one array
    if d is not None and len(vals) == 2:  # ``x * 3``, ``x + y``: decided here, at once
        other = vals[1]
        if other.__class__ is np.ndarray:
            if other.dtype is d:
                return d
        elif _NUMBER_RANK.get(other.__class__, 3) <= _KIND_RANK.get(d.kind, -1):
            return d  # a number of no higher kind does not lift the Tensor's dtype
    if d is not None and _one_dtype(vals) is d:
        return d  # one dtype (a stack's parts): the common case, decided at once
    if len(vals) == 2:  # an array and a number, or two dtypes: remembered per signature
        key = (*map(_signature, vals), _dtype.get_default_dtype())
        found = _PROMOTED.get(key)
        if found is None:
            found = _PROMOTED[key] = _promoted(vals)
        return found
    return _promoted(vals)


def _signature(v):
    return (v.dtype, v.ndim > 0) if v.__class__ is np.ndarray else v.__class__


_PROMOTED = {}  # (operand signatures, default dtype) -> result dtype: a few dozen at most


def _promoted(vals):
    groups = [None, None, None]  # numbers, 0-d arrays, dimensioned arrays
    for v in vals:
        if v.__class__ is np.ndarray:
            prio, d = (2 if v.ndim else 1), v.dtype
        else:
            prio = 0
            d = _default_float() if v.__class__ is float else _NUMBER_DTYPES[v.__class__]
        groups[prio] = d if groups[prio] is None else _pair(groups[prio], d)
    return _lift(groups[2], _lift(groups[1], groups[0]))


def _default_float():
    return np.dtype(_dtype.get_default_dtype().np)


_BOOL = np.dtype(np.bool_)
_NUMBER_DTYPES = {bool: _BOOL, int: np.dtype(np.int64)}
_INDEX = np.dtype(np.int64)


def _floating(vals, statics):
    d = promoted(vals)
    return d if d.kind == "f" else _default_float()


def _reduced(vals, statics):
    asked = statics.get("dtype")
    if asked is not None:
        return np.dtype(asked)
    d = vals[0].dtype
    return _INDEX if d.kind in "biu" else d


RULES = {  # (values, statics) -> the result dtype
    "promote": lambda vals, statics: promoted(vals),
    "float": _floating,
    "bool": lambda vals, statics: _BOOL,
    "truth": lambda vals, statics: vals[0].dtype if vals[0].dtype == np.uint8 else _BOOL,
    "index": lambda vals, statics: _INDEX,
    "same": lambda vals, statics: vals[0].dtype,
    "sum": _reduced,
    "mean": lambda vals, statics: np.dtype(statics.get("dtype") or vals[0].dtype),
    "to": lambda vals, statics: np.dtype(statics["dtype"]),
}

FORMS = {  # row name -> (its result dtype's rule in RULES, its form)
    "add": ("promote", _arith(np.add)), "sub": ("promote", _subtract),
    "mul": ("promote", _arith(np.multiply)), "div": ("float", _divide),
    "neg": ("promote", _arith(np.negative)), "abs": ("promote", _arith(np.abs)),
    "maximum": ("promote", _tensors_only(np.maximum)),
    "minimum": ("promote", _tensors_only(np.minimum)),
    "eq": ("bool", _compare(np.equal, False)), "ne": ("bool", _compare(np.not_equal, False)),
    "lt": ("bool", _compare(np.less)), "le": ("bool", _compare(np.less_equal)),
    "gt": ("bool", _compare(np.greater)), "ge": ("bool", _compare(np.greater_equal)),
    "exp": ("float", _transcendental(np.exp)), "log": ("float", _transcendental(np.log)),
    "sqrt": ("float", _transcendental(np.sqrt)), "tanh": ("float", _transcendental(np.tanh)),
    "to_dtype": ("to", _to_dtype),
    "sum": ("sum", _reduce()), "sum_dim": ("sum", _reduce()),
    "mean": ("mean", _reduce(mean=True)), "mean_dim": ("mean", _reduce(mean=True)),
    "amax": ("same", _pick(_MAX)), "amin": ("same", _pick(_MIN)),
    "argmax": ("index", _pick(np.ndarray.argmax, False)),
    "argmin": ("index", _pick(np.ndarray.argmin, False)),
    "logsumexp": ("float", _logsumexp), "gather": ("same", _gather),
    "flip": ("same", _flip), "clone": ("same", _clone), "constant_pad_nd": ("same", _pad),
    "stack": ("promote", _join(_stack)), "cat": ("promote", _join(np.concatenate)),
    # ``generate``'s stopping criteria: ``full(False) | MaxLengthCriteria's full``; a float
    # operand makes NumPy raise (PyTorch raises too: the XLA path gives its error)
    # generate's position ids: ``attention_mask.long().cumsum(-1) - 1``, then masked_fill
    "cumsum": ("same", _cumsum), "masked_fill": ("same", _masked_fill),
    # generate's default attention mask: ``isin(ids, pad).any()``, ``~``, ``*``
    "isin": ("bool", _isin), "any": ("truth", _truth(np.ndarray.any)),
    "all": ("truth", _truth(np.ndarray.all)),
    "logical_not": ("bool", lambda vals, result: np.logical_not(vals[0])),
    "bitwise_not": ("same", lambda vals, result: np.invert(vals[0])),
    "bitwise_and": ("promote", _arith(np.bitwise_and)),
    "bitwise_or": ("promote", _arith(np.bitwise_or)),
    "bitwise_xor": ("promote", _arith(np.bitwise_xor)),
}
