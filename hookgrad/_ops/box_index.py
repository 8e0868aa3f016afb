"""Basic indices in Python loops: ``x[i, 0, r:r + 8]`` read lazily, written as one box.

A loop statement such as ``imgs[i, 0, r:r + 8, c:c + 8] += 2.0`` is an index read, an
in-place op on the view and a write back. Taken op by op it is three XLA programs and
tens of microseconds of Python; PyTorch does it in about ten. Here, for an index of Python
ints and unit-step slices on a Tensor nothing records or intercepts:

- ``parse``: the index's template (``_ops/indexing.py``'s form), the result's shape and its
  box (region and starts) in the Tensor's array, worked out in one pass;
- ``read``: the view's array is a ``Pending`` (``_ops/lazy.py``) that reads the box at its
  starts, passed as arguments: nothing runs until something reads it, and a forward
  segment takes it in as any deferred op;
- ``read_modify_write``: an in-place op on such a view whose base is unchanged since the
  read runs as one program, read, op and ``dynamic_update_slice`` of the base (donated when
  nothing else holds it: the write costs the region);
- ``write``: ``x[index] = value`` is one ``dynamic_update_slice`` at the starts.

Every position of a box shares one program (tiered: NumPy first, compiled in the
background). What a user sees is the slow path's: values, versions, the aliases kept
current, PyTorch's errors (bounds are checked before anything runs; anything unusual,
such as a shape that does not broadcast, goes the slow way, which raises).
"""
import functools
import sys

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype, _views
from .._memo import keep
from .._tensor import Pending
from . import lazy, tiered

_new = object.__new__
_NEW, _ELLIPSIS = ("N",), ("E",)  # as ``_ops/indexing.py``'s templates spell them
_refcount = sys.getrefcount
_ARRAY = lazy.ARRAY
_INT32 = 2 ** 31
_INT64 = 2 ** 63


def parse(shape, idx):
    """``(template, size, region, starts)`` of ``x[idx]`` for ``x`` of ``shape``, when
    ``idx`` is a Python int, a slice of ints with step 1 (or None), None, Ellipsis, or a
    tuple of them indexing at most ``len(shape)`` dimensions; else None. Out-of-range
    ints raise PyTorch's IndexError."""
    if idx.__class__ is not tuple:
        idx = (idx,)
    template, size, region, starts = [], [], [], []
    d = 0
    for k in idx:
        if k is None:
            template.append(_NEW)
            size.append(1)
            continue
        if k is Ellipsis:
            if _ELLIPSIS in template:
                return None  # the slow path raises PyTorch's error
            rest = len(shape) - sum(j is not None and j is not Ellipsis for j in idx)
            if rest < 0:
                return None
            template.append(_ELLIPSIS)
            size += shape[d:d + rest]
            region += shape[d:d + rest]
            starts += (0,) * rest
            d += rest
            continue
        if d == len(shape):
            return None  # too many indices: the slow path raises PyTorch's error
        n = shape[d]
        if k.__class__ is int:
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for dimension {d} with size {n}")
            template.append(("I", k))
            region.append(1)
            starts.append(k + n if k < 0 else k)
        elif k.__class__ is slice:
            a, b, st = k.start, k.stop, k.step
            if not ((a is None or a.__class__ is int) and (b is None or b.__class__ is int)
                    and (st is None or st.__class__ is int and st == 1)):
                return None
            start, stop, _ = k.indices(n)
            m = stop - start if stop > start else 0
            template.append(("S", a, b, st))
            region.append(m)
            size.append(m)
            starts.append(start)
        else:
            return None
        d += 1
    rest = shape[d:]
    return (tuple(template), (*size, *rest), (*region, *rest),
            (*starts, *(0,) * len(rest)))


def _read_box(x, *starts, region, size):
    return _views._gather_box(x, starts, region, size)


# NOTE: the starts come as one array (``at``): a call transfers each argument (3 us for 4
# ints); the reads of a forward segment take them as ints (``BoxRead.place``)
def _write_box(x, v, at, region, size):
    v = jnp.asarray(v)
    k = 0
    while k < v.ndim and v.shape[k] == 1:  # as PyTorch: leading size-1 dimensions dropped
        k += 1
    return _views._scatter_box(x, jnp.broadcast_to(v.reshape(v.shape[k:]), size), at, region)


@functools.lru_cache(maxsize=1024)
def _program(body, donate, **fixed):
    """The program of ``body`` with the statics ``fixed`` that every position shares."""
    return tiered.jit(functools.partial(body, **fixed), **({"donate_argnums": 0} if donate
                                                         else {}))


class BoxRead:
    """A ``Pending``'s forward: the box ``region`` of its argument at ``starts``, reshaped
    to ``size``. ``place`` gives it to a forward segment as an op at positions."""

    __slots__ = ("region", "starts", "size")

    def __init__(self, region, starts, size):
        self.region, self.starts, self.size = region, starts, size

    def __call__(self, x):
        return _program(_views._gather_box, False, region=self.region, size=self.size)(
            x, _views._positions(self.starts))

    def place(self, shape):
        return _read_box, {"region": self.region, "size": self.size}, self.starts


_AVALS = {}
# (region, starts, size, dtype, weak type) -> the read of a pending value's box: its
# BoxRead (nothing in it changes: Pendings share it), aval, and whether its starts fit int32
# (a model reads the same boxes each step)
_READS = {}
_OP = None  # a Pending's op; a BoxRead's segment reads ``place``, never the op's forward


def read(arr, region, starts, size):
    """The box of ``arr`` (a concrete array, or a ``Pending`` one) as a ``Pending``
    nothing has run yet (its Tensor sets ``ref``); a small CPU array is cut on the host at
    once (no program)."""
    if arr.__class__ is Pending:
        aval = arr.aval
        key = (region, starts, size, aval.dtype, aval.weak_type)
        found = _READS.get(key)
        if found is None:
            found = keep(_READS, key, (BoxRead(region, starts, size),
                                       _aval(size, aval.dtype, aval.weak_type),
                                       max(starts, default=0) < _INT32))
        if arr.value is None and lazy._state["enabled"] and found[2] \
                and (arr.depth < lazy.MAX_DEPTH or lazy.pending_depth([arr]) < lazy.MAX_DEPTH):
            p = _pending(arr, found[0], found[1])
            p.depth = arr.depth + 1
            lazy.join(p, arr)
            return p
        arr = lazy.value(arr)
    if not lazy._state["enabled"] or arr._committed or max(starts, default=0) >= _INT32:
        return _views.gather_box(arr, region, starts, size)
    if arr.size <= _views._host_transfer.HOST_MAX and \
            _views._host_transfer.host_copy(arr) is not None:
        return _views.gather_box(arr, region, starts, size)
    return _pending(arr, BoxRead(region, starts, size), _aval(size, arr.dtype, arr.weak_type))


def _aval(size, dtype, weak):
    key = (size, dtype, weak)
    aval = _AVALS.get(key)
    if aval is None:
        aval = _AVALS[key] = jax.core.ShapedArray(size, dtype, weak_type=weak)
    return aval


def _pending(arr, reader, aval):
    p = _new(Pending)
    p.op, p.key, p.fn, p.args, p.aval = _OP, (), reader, (arr,), aval
    p.depth, p.value, p.ref, p.saved, p.gen = 1, None, None, False, lazy._gen[0]
    return p


# ----------------------------------------------------------------- read, op, write back

def _rmw(b, at, *others, fwd, region, size):
    # NOTE: only the base comes out: XLA's CPU backend copies the whole base to return
    # the region's old or new value beside it (10x the time of the write)
    return _views._scatter_box(b, fwd(_views._gather_box(b, at, region, size), *others), at,
                               region)


@functools.lru_cache(maxsize=1024)
def _rmw_program(op, key, region, size, donate):
    fwd = functools.partial(op.fwd, **dict(key))
    return _program(_rmw, donate, fwd=fwd, region=region, size=size)


def _forget():
    """A new default dtype: programs trace again (``op._forget_programs``)."""
    _rmw_program.cache_clear()
    _program.cache_clear()
    _FITS.clear()


_FITS = {}  # (op, key, view aval, the others' types) -> whether the op keeps the view's type


def _fits(op, key, aval, others):
    sig = (op, key, aval, *[a.aval if a.__class__ is _ARRAY else a.__class__
                            for a in others])
    ok = _FITS.get(sig)
    if ok is None:
        try:
            res = jax.eval_shape(functools.partial(op.fwd, **dict(key)),
                                 jax.ShapeDtypeStruct(aval.shape, aval.dtype,
                                                      weak_type=aval.weak_type), *others)
            ok = getattr(res, "shape", None) == aval.shape and res.dtype == aval.dtype
        except Exception:  # noqa: BLE001 - the slow path raises PyTorch's error for it
            ok = False
        keep(_FITS, sig, ok)
    return ok


# the base's slot, this function's local and getrefcount's argument; NOTE: from Python
# 3.14 on, references the interpreter borrows are not counted: no donation there (-1)
_HELD_BY_RMW = 3 if sys.version_info < (3, 14) else -1
# the view's slot, apply's list and local, this function's local, getrefcount's argument
_HELD_P = 5 if sys.version_info < (3, 14) else -1


def read_modify_write(op, key, arrs, out):
    """``op`` in place on ``out``, a view whose array is a ``read`` of its root base not
    run yet, as one program, when the base is unchanged since and nothing records:
    returns ``out``, or None (the caller takes the slow path)."""
    p = arrs[0]
    info = out._view
    if info is None or not op.jit or p.value is not None:
        return None
    base, grad_base = info.base, info.grad_base
    b = base._arr
    # NOTE: a base still deferred itself (a clone not run yet) is computed by the slow path
    if b.__class__ is Pending or p.args[0] is not b or info.gen != base._gen or base._requires_grad or \
            grad_base._requires_grad or grad_base.grad_fn is not None or not info.diff:
        return None
    others = []
    for a in arrs[1:]:
        c = a.__class__
        if c is Pending:
            a = lazy.value(a)
        elif c is _ARRAY:
            if a._committed:
                return None
        elif c not in lazy.SCALARS or c is int and not -_INT64 <= a < _INT64:
            return None
        others.append(a)
    # an op deferred on the view before this write holds the read: it would need the
    # view's old value, which the program does not give back
    if _refcount(p) > _HELD_P or not _fits(op, key, p.aval, others):
        return None
    rd = p.fn
    p.args = p.fn = None  # read below, by the program: this Pending no longer holds b
    sole = _refcount(b) <= _HELD_BY_RMW
    try:
        new = _rmw_program(op, key, rd.region, rd.size, sole)(
            b, _views._positions(rd.starts), *others)
    except BaseException:
        p.args, p.fn = (b,), rd
        raise
    del b
    out._data = _pending(new, rd, p.aval)  # the view's new value, when read
    out._version += 1
    base._data = new
    if info.shared:
        base._version = out._version
    _views.refresh(base, out, info.shared)
    return out


def write(x, value, region, starts, size):
    """``x[index] = value`` for the box of ``parse``: ``x`` a root with a concrete array,
    ``value`` a concrete array of a shape that broadcasts to ``size`` (leading size-1
    dimensions dropped) or a Python number. Its buffer is donated when nothing else holds
    it."""
    b = x._arr
    sole = _refcount(b) <= _HELD_BY_WRITE
    prog = _program(_write_box, sole, region=region, size=size)
    new = prog(b, value, _views._positions(starts))
    del b
    x._data = new
    x._version += 1
    if x._views is not None:
        _views.refresh(x, x, True)


_BROADCASTS = {}


def broadcasts(shape, target, dtype, to):
    """Whether a value of ``shape`` (leading size-1 dimensions dropped) broadcasts to
    ``target`` and its ``dtype`` casts to ``to`` quietly (complex into real warns)."""
    key = (shape, target, dtype, to)
    ok = _BROADCASTS.get(key)
    if ok is None:
        k = 0
        while k < len(shape) and shape[k] == 1:
            k += 1
        try:
            ok = np.broadcast_shapes(shape[k:], target) == tuple(target)
        except ValueError:
            ok = False
        ok = ok and not (jnp.issubdtype(dtype, jnp.complexfloating)
                         and not jnp.issubdtype(to, jnp.complexfloating))
        keep(_BROADCASTS, key, ok)
    return ok


_HELD_BY_WRITE = 3 if sys.version_info < (3, 14) else -1
_dtype.ON_DEFAULT_CHANGE.append(_forget)
