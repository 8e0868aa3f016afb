"""Deferred forward: an op output that nobody has read yet is recorded, not run; the first
read runs the thread's pending ops together (its trace: ``_Trace``, wired as the ops were
deferred), as one XLA call once that segment repeats.

Eagerly, each op is one JAX dispatch (a few microseconds of runtime on a CPU, more than
PyTorch spends on the whole op). Here ``apply`` returns a Tensor holding a ``Pending``
(what to run, and the output's shape and dtype), and records its node as usual: nodes,
hooks, ``_version`` and ``requires_grad`` never wait. Reading the array (``t._data``:
printing, ``.item()``, an in-place write, a non-deferred op, the backward unpacking what
a node saved) runs every pending op of the thread, those it depends on among them.

What a user can see stays eager's: an op is deferred only for argument shapes and dtypes
it has already run with (its first call runs eagerly and raises any error then), only on
concrete single-device arrays (never on tracers, so the compiled and functional modes see
no change), and only ops without data-dependent shapes (``Op.jit``). An op of several
outputs (``split``) defers as one ``Pending`` whose outputs pick their items
(``_outputs``): reading one computes them all. A segment's first
sightings run op by op through the ops' own jitted programs; from the ``COMPILE_AT``-th
on, it is one jitted program (the tiering ``_engine/fusion.py`` uses for backward chains).
"""
import collections
import operator
import threading
from weakref import ref as _weakref

import jax
from jax._src.array import ArrayImpl  # NOTE: private; JAX has no public name for it
from jax._src.random.prng import PRNGKeyArray  # NOTE: private, as ArrayImpl

from .. import _jax_trace
from .._host_value import Host
from .._tensor import FORCE, Pending, Tensor
from . import tiered
from .setting import Setting

MAX_DEPTH = 64    # pending ops in a row; the next op runs them first: bounds compile time
MAX_OPS = 256     # pending ops in all (a trace of many short chains): bounds it too
COMPILE_AT = 4    # sightings of a segment before it is compiled as one program
CACHE_SIZE = 256  # compiled segments kept (least recently used dropped)
# operands a deferred op may take besides arrays: Python numbers, None (an optional operand
# left out, such as attention's mask) and a concrete PRNG key (dropout's, drawn when called)
SCALARS = frozenset((int, float, bool, complex, type(None), PRNGKeyArray))
# a concrete array's class (jaxlib's ArrayImpl), named without making one: hookgrad's import
# starts no JAX backend, so jax.distributed can still be initialized after it
ARRAY = ArrayImpl
_state = {"enabled": True}
_gen = [0]        # bumped by a new default dtype: older pendings keep their own programs
_seen = {}        # hash of a segment key run op by op -> (the key, its count)
_compiled = collections.OrderedDict()  # hash of a segment key -> (the key, its program)
_lock = threading.RLock()
HOST = object()   # ``defer``'s answer when the host stage (``stages/host.py``) is due first
_new = object.__new__
_BIG = 2 ** 63

_clean = _jax_trace.no_trace


class Site:
    """One op on one signature (statics, argument shapes and dtypes, number types): what
    ``defer`` learned there (``op._avals``' value). ``aval``: the output's abstract value
    (a tuple of them for an op of several); ``node``: what the record stage worked out
    for the last node it recorded there, to use again (``stages/record.py``), or None."""

    __slots__ = ("aval", "node")

    def __init__(self, aval):
        self.aval = aval
        self.node = None


class set_lazy_forward(Setting):
    """Defer op outputs until read (on by default); as a context manager it restores the
    previous setting on exit. Off, every op runs when called: to time single ops, or when
    JAX's configuration (default device, matmul precision) changes between ops::

        >>> with hookgrad.autograd.set_lazy_forward(False):
        ...     y = model(x)
    """

    _state = _state


def is_lazy_forward_enabled():
    return _state["enabled"]


def defer(op, key, fn, args, q=None, forms=None):
    """``(res, req)``: ``res`` is a ``Pending`` for ``op`` on ``args``, a list of them for
    an op of several outputs, the signature to ``learn`` after running it eagerly, None
    when it cannot wait, or ``HOST`` when the host stage is due first (no argument requires
    grad or is pending, and ``forms``, the NumPy forms, has one for ``op``); ``req``:
    whether a Tensor argument requires grad: for a ``Pending`` made here, the op's
    ``Site`` in True's place, for the record stage. The ``Pending`` joins this thread's trace
    (``_Trace``) in the same walk: apply's walk over its arguments is this one (each
    Tensor read once, for the path and for its wiring).

    ``args``: apply's, Tensors and Python numbers (anything else, or a Tensor held on the
    host, a tracer, a meta array, is apply's general path: None); or, with ``q``, a
    ``Pending`` made elsewhere that joins the trace instead (returned), its own arguments
    (arrays, Pendings, numbers): a multi-output op's pick, an index read's, one a segment
    ran without returning it."""
    while True:
        tr = _local.trace
        if tr is None or tr.gen != _gen[0]:  # (a new default dtype: ``forget``)
            tr = _local.trace = _Trace()
        index = tr.index  # (``given`` and ``leaves``: read where a leaf is met)
        sig = [key]
        spec = []
        add = spec.append
        arrs = []
        keep = arrs.append
        depth = 0
        k = tr.nl
        late = False  # a pending argument not in the trace, or a value held on the host
        req = pend = False
        for v in args:
            c = v.__class__
            if c is Tensor or c not in SCALARS and q is None and isinstance(v, Tensor):
                if v._requires_grad:  # (no call for a plain Tensor)
                    req = True
                v = v._arr
                c = v.__class__
                if c is Pending:
                    pend = True
                elif c is not ARRAY:  # held on the host, a tracer, on the meta device
                    return _undo(tr, None), req
            elif q is None and c not in SCALARS:  # a constant not a number: run eagerly
                return _undo(tr, None), req
            keep(v)
            if c is Pending:
                sig.append(v.aval)
                x = v.value
                if x is None:
                    if v in index:
                        add(index[v])  # an earlier op of the segment (a subscript)
                        if (d := v.depth) > depth:
                            depth = d
                    else:
                        late = True
                    continue
                if x.__class__ is Host:
                    late = True
                    continue
                v = x
            elif c is ARRAY:
                if v._committed:  # placed on a device by the user: eager keeps its checks
                    return _undo(tr, None), req
                sig.append(v.aval)
            else:
                if c is int and not -_BIG <= v < _BIG:  # JAX refuses it: let the call raise
                    return _undo(tr, None), req
                sig.append(c)
                # (a PRNG key's shape and implementation too: the segment's key is its
                # program's signature, ``_run_segment``)
                add(c if c is not PRNGKeyArray else _KeyLeaf(c, v.shape, v._impl))
                tr.leaves.append(v)
                k += 1
                continue
            # NOTE: an array read by several ops (a weight, a constant) is one argument of
            # the program: each argument costs its dispatch, and the ops share it
            i = tr.given.get(id(v))
            if i is not None:
                add(i)  # ``(an earlier leaf's position,)``, made once per leaf
                continue
            tr.given[id(v)] = (k,)
            add(v.aval)
            tr.leaves.append(v)
            k += 1
        if forms is not None and not (req or pend) and op.name in forms:
            return _undo(tr, HOST), req  # (a pending argument leaves it to this path)
        if q is None:
            if op.positions is not None:
                sig[0] = _placed(fn, arrs, key)
            sig = tuple(sig)
            try:  # (no call once the op has run with these argument types: nearly always)
                site = op._avals[sig]
            except KeyError:
                return _undo(tr, sig), req
            if site is False:  # its output cannot wait
                return _undo(tr, None), req
            av = site.aval
        if not late and depth < MAX_DEPTH and tr.n < MAX_OPS:
            break
        _undo(tr, None)
        _ready(tr, arrs, depth < MAX_DEPTH and tr.n < MAX_OPS)
    made = q is None
    if made:
        q = _new(Pending)
        q.op, q.key, q.fn, q.args, q.aval = op, key, fn, arrs, av
        q.value, q.ref, q.saved, q.gen = None, None, False, tr.gen
    # (an op's own forward has a ``place`` only for an op at positions)
    if made and op.positions is None or (place := None if fn.__class__ in _UNPLACED else
                                         getattr(fn, "place", None)) is None or \
            (found := place(arrs[0].shape)) is None:
        tr.struct.append((op.fwd, key, tuple(spec)))
    else:  # its positions are arguments here too (an op at positions)
        fwd, fixed, where = found
        spec += [int] * len(where)
        tr.leaves.extend(where)
        k += len(where)
        tr.struct.append((fwd, tuple(fixed.items()), tuple(spec)))
    tr.nl = k
    q.depth = depth + 1
    index[q] = n = tr.n  # (in order: the segment's ops are ``index``'s keys)
    tr.n = n + 1
    if made and av.__class__ is tuple:
        return _outputs(q), req and site
    return q, made and req and site  # (a ``Pending`` made elsewhere: its maker reads none)


def _undo(tr, res):
    """``tr`` without the leaves a walk of ``defer`` added; returns ``res``."""
    new = tr.leaves[tr.nl:]
    if new:
        for a in new:
            if a.__class__ is ARRAY:
                del tr.given[id(a)]
        del tr.leaves[tr.nl:]
    return res


def _ready(tr, arrs, within):
    """What kept an op out of ``tr`` done: past the bounds (not ``within``), every pending
    op runs, as one segment (the op starts the next); a pending argument not in ``tr``
    joins it first (the program takes its new leaves in the order of its ops); a value
    the first tier kept in NumPy is put on the device (the program reads it), once."""
    if not within:
        with _lock:
            _flush()
        return
    index = tr.index
    for a in arrs:
        if a.__class__ is Pending:
            x = a.value
            if x is None and a not in index:
                with _lock:  # (another thread's, which its reads may run meanwhile)
                    if a.value is not None:
                        pass
                    elif a.gen == tr.gen:
                        defer(a.op, a.key, a.fn, a.args, a)
                    else:  # deferred under an older default dtype: its own programs
                        force(a)
            elif x.__class__ is Host:
                a.value = tiered.device(x)


class _Trace:
    """The ops a thread deferred since its last segment ran, in order, wired as they were
    deferred: a read, or an op past the bounds, runs them all as one segment without
    walking them again. ``index``: each op's position; ``struct``: per op, its forward,
    statics and where each argument comes from (an earlier op's position, ``(an earlier
    leaf's position,)`` or the type of a new leaf), the segment's program and key;
    ``leaves``: the program's arguments; ``given``: id of an array argument -> ``(its
    position in leaves,)``; ``n``: the ops; ``gen``: the default dtype's generation."""

    __slots__ = ("index", "struct", "leaves", "given", "n", "nl", "gen")

    def __init__(self):
        # (``given``'s ids stay valid: ``leaves`` holds their arrays)
        self.index, self.struct, self.leaves, self.given = {}, [], [], {}
        self.n, self.nl, self.gen = 0, 0, _gen[0]  # ``nl``: the leaves


class _Local(threading.local):
    # NOTE: a trace per thread: a thread's defer touches no other's, so it takes no
    # lock; what reads another thread's pending ops (``_ready``) or runs a trace does
    trace = None


_local = _Local()


def pending_depth(arrs):
    """The longest chain of ops not run yet behind ``arrs`` (0 when none is pending)."""
    tr = _local.trace
    index = {} if tr is None else tr.index
    return max((v.depth for v in arrs if v.__class__ is Pending and v.value is None
                and v in index), default=0)


def _item(outs, k):
    return outs[k]


class _Pick:
    """The op of output ``k`` of a deferred multi-output op: its item of the op's tuple
    (in a segment, the ops' outputs come out of one program)."""
    fwd = staticmethod(_item)


_PICK = _Pick()
_PICKERS = [operator.itemgetter(k) for k in range(64)]


def _outputs(p):
    """The outputs of ``p``, a deferred multi-output op, each a ``Pending`` picking its
    item, joined to the trace after it; ``p`` itself is never read by a Tensor, so a
    segment always gives it out."""
    outs = []
    for k, av in enumerate(p.aval):
        q = _new(Pending)
        q.op, q.key, q.args, q.aval = _PICK, (("k", k),), (p,), av
        q.fn = _PICKERS[k] if k < len(_PICKERS) else operator.itemgetter(k)
        q.value, q.ref, q.saved, q.gen = None, None, False, p.gen
        outs.append(defer(_PICK, q.key, q.fn, q.args, q)[0])
    p.outs = [_weakref(q) for q in outs]
    return outs


def _placed(fn, arrs, key):
    """The key of an op at positions (``Op.positions``) without its positions: its
    output's type does not depend on them, so a loop's new positions defer too."""
    place = getattr(fn, "place", None)
    found = None if place is None or not arrs or not hasattr(arrs[0], "shape") else \
        place(arrs[0].shape)
    return key if found is None else (found[0], *found[1].items())


def learn(op, sig, res):
    """Remember the output's abstract value of ``op`` on ``sig`` (after an eager run); a
    tuple of them for a tuple of outputs."""
    if res.__class__ is tuple:
        ok = res and all(r.__class__ is ARRAY and not r._committed for r in res)
        op._avals[sig] = Site(tuple(r.aval for r in res)) if ok else False
        return
    op._avals[sig] = Site(res.aval) if res.__class__ is ARRAY and not res._committed else False


def value(v):
    """``v``'s array: computed if it is a ``Pending``."""
    if v.__class__ is not Pending:
        return v
    x = v.value
    return x if x is not None and x.__class__ is not Host else force(v)


def force(p):
    """Run ``p`` and every pending op of the trace (``_Trace``) with it; returns ``p``'s
    array (a value the first tier kept in NumPy is put on the device now, once)."""
    with _lock:
        if p.value is None:
            tr = _local.trace
            if p.gen != _gen[0]:  # deferred under an older default dtype: its own programs
                _run_nodes(_behind(p), None)
            else:
                if tr is None or tr.gen != p.gen:
                    tr = _local.trace = _Trace()
                if p not in tr.index:  # another thread's, an index read's, or one a
                    defer(p.op, p.key, p.fn, p.args, p)  # segment ran without returning it
                _flush()
        x = p.value
        if x.__class__ is Host:
            x = p.value = tiered.device(x)
        elif x.__class__ is tuple:  # a multi-output op's (never read by a Tensor)
            x = p.value = tuple(map(tiered.device, x))
        return x


def _flush():
    """Run this thread's trace as one segment, a new trace taking its place (first: should
    running them fail, they are pending still, and join the next trace when read). The
    caller holds ``_lock``."""
    tr = _local.trace
    if not tr.n:
        return
    _local.trace = _Trace()
    nodes = list(tr.index)
    if tr.n == 1:
        _run_nodes(nodes, None)
        return
    # NOTE: only values something may read leave the program: XLA fuses the rest away
    # (a pending op nobody reads keeps its arguments, so a later read can still run it)
    outs = tuple([k for k, q in enumerate(nodes)
                  if (r := q.ref) is None or q.saved or r() is not None])
    struct = tr.struct
    _run_nodes(nodes, ((tuple(struct), outs), struct, tr.leaves, outs))


def _run_nodes(nodes, plan):
    """Run ``nodes`` (not empty; each after its pending arguments) as one segment by
    ``plan`` (``_flush``'s), or op by op when it is None."""
    # NOTE: read inside a JAX trace (a hookgrad.compile step, jax.jit), a pending value
    # made outside it is still computed concretely: never a leaked tracer. Outside one
    # (every eager read), no context manager: three Python calls fewer per read
    if _clean():
        _run_planned(nodes, plan)
    else:
        with jax.ensure_compile_time_eval():
            _run_planned(nodes, plan)


def _run_planned(nodes, plan):
    if len(nodes) == 1:
        _run_one(nodes[0])
    elif plan is None:
        _run_apart(nodes)
    else:
        _run_segment(nodes, plan)


def _behind(p):
    """The pending ops ``p`` needs, ``p`` among them (once each), each after its arguments
    (for the ops of an older default dtype, which no trace holds: ``forget``)."""
    found = [p]
    seen = {p}
    for q in found:  # a list iterated while it grows visits what is appended too
        for a in q.args:
            if a.__class__ is Pending and a.value is None and a not in seen:
                seen.add(a)
                found.append(a)
    found.sort(key=_depth)  # an op is deeper than each pending argument it joined after
    return found


_depth = operator.attrgetter("depth")


def _run_one(q):
    fn = q.fn
    args = [a.value if a.__class__ is Pending else a for a in q.args]
    # NOTE: a program's first tier keeps its results in NumPy (``Host``) for the ops that
    # read them next (``tiered.Program.host``); any other forward gets arrays
    _settle(q, fn.host(*args) if fn.__class__ is _PROGRAM else
            fn(*args) if fn.__class__ is operator.itemgetter else  # a pick takes its item
            fn(*[tiered.device(a) for a in args]))


def _settle(q, v):
    """``q`` computed as ``v``; a multi-output op's outputs are known with it (never a
    computed op with an output pending, which a segment could not take as an argument)."""
    q.value = v
    q.args = q.fn = None
    if q.aval.__class__ is tuple:
        for r, x in zip(q.outs, v):
            o = r()
            if o is not None and o.value is None:
                o.value = x
                o.args = o.fn = None


def _run_segment(nodes, plan):
    key, struct, leaves, outs = plan
    # NOTE: the caches are keyed by the key's hash, each entry holding its key: a lookup
    # hashes the key once and compares it once. (A tuple does not keep its hash: by the key
    # itself, ``get`` then ``move_to_end`` hashed and compared it twice, each time walking
    # every op of the segment.) Another key of the same hash takes the entry's place.
    h = hash(key)
    got = _compiled.get(h)
    if got is not None and got[0] == key:
        fn = got[1]
        _compiled.move_to_end(h)
    else:
        got = _seen.get(h)
        n = got[1] + 1 if got is not None and got[0] == key else 1
        if n < COMPILE_AT:
            if len(_seen) > 16 * CACHE_SIZE:
                _seen.clear()
            _seen[h] = (key, n)
            fn = None
        else:
            _seen.pop(h, None)
            fn = tiered.jit(_program(struct, outs))
            _compiled[h] = (key, fn)
            _compiled.move_to_end(h)  # (a colliding key's place: the newest)
            if len(_compiled) > CACHE_SIZE:
                _compiled.popitem(last=False)
    # NOTE: a segment's trace costs more than running its ops: with tiered execution it
    # is traced and compiled in the background, op by op meanwhile
    # (the key says each leaf's aval or type: the program's signature is the empty one)
    res = None if fn is None else fn.call_ready(*leaves, sig=())
    if res is None:  # each op's own jitted program, as eagerly
        _run_apart(_needed(nodes, outs) if len(outs) < len(nodes) else nodes)
        return
    for k, v in zip(outs, res):
        q = nodes[k]
        if q.value is not None:  # computed meanwhile (another thread's read joined it)
            continue
        if q.aval.__class__ is tuple:
            _settle(q, v)
        else:  # ``_settle``, inlined: a call per value read out of every segment
            q.value = v
            q.args = q.fn = None


def _needed(nodes, outs):
    """The segment's ``nodes`` that its values at positions ``outs`` need, in order: as in
    its program (which XLA prunes), an op whose value nobody can read stays pending (it
    keeps its arguments: a later read still runs it)."""
    need = [False] * len(nodes)
    for k in outs:
        need[k] = True
    index = {q: k for k, q in enumerate(nodes)}
    for k in range(len(nodes) - 1, -1, -1):
        if need[k] and nodes[k].value is None:  # (another trace may have run it)
            for a in nodes[k].args:
                if a.__class__ is Pending and (j := index.get(a)) is not None:
                    need[j] = True
    return [q for q, n in zip(nodes, need) if n]


def _run_apart(nodes):
    """Run ``nodes`` one by one, each op through its own jitted program."""
    for q in nodes:
        if q.value is None:  # (an output of a multi-output op is computed with it)
            _run_one(q)


# a PRNG key leaf's part of a segment's key (not a plain tuple: ``(an earlier leaf's
# position,)`` is one). NOTE: signed by its implementation (``_impl``, private), not its
# dtype: the key's lookup then compares the same object (identity, in C) where a dtype
# compared through ``prng.KeyTy.__eq__``, a Python call per key leaf per segment
_KeyLeaf = collections.namedtuple("_KeyLeaf", "cls shape impl")
_PROGRAM = tiered.Program
# the classes of op forwards that are never at positions (no ``place``): a segment plans
# them without asking (a multi-output op's pick; ``tiered.jit``'s programs)
_UNPLACED = frozenset((operator.itemgetter, tiered.Program))


def _program(struct, outs):
    """The segment as one function of its leaves: each op's forward in order; returns the
    values at positions ``outs``."""
    ops = [(fwd, dict(key), spec) for fwd, key, spec in struct]

    def run(*leaves):
        vals = []
        it = iter(leaves)
        for f, statics, spec in ops:  # spec: an earlier op's index, (an earlier leaf's
            # index,), or the next leaf's type
            vals.append(f(*[vals[s] if s.__class__ is int else leaves[s[0]]
                            if s.__class__ is tuple else next(it) for s in spec],
                          **statics))
        return [vals[k] for k in outs]
    return run


def forget():
    """A new default dtype: drop the compiled segments; values deferred before it run
    through their ops' own programs, traced with the old one (dispatch forgets the rest)."""
    with _lock:
        _gen[0] += 1
        _seen.clear()
        _compiled.clear()
        # (each thread's trace is replaced at its next op: ``_Trace.gen``; the ops in it
        # keep their generation, and ``force`` runs them apart)


FORCE[0] = force
