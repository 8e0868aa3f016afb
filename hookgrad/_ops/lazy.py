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
on, it is one jitted program (the tiering ``_engine/fusion.py`` uses for backward chains;
``lazy_segment.py`` runs segments). From its second sighting, a segment's sequence of ops
is remembered (``lazy_memo.py``): the next trace follows it, checking each op against it
instead of walking the op's arguments.
"""
import collections
import threading

from jax._src.random.prng import PRNGKeyArray  # NOTE: private, as ArrayImpl

from .._host_value import Host
from .._tensor import FORCE, Pending, Tensor
from . import lazy_layout as _layout, lazy_memo as _memo, lazy_picks as _picks, \
    lazy_segment as _segment, tiered
from .lazy_args import ARRAY, SCALARS, BIG as _BIG, pending_args as _pending_args, \
    put_held as _put_held, waits as _waits
from .lazy_segment import COMPILE_AT, CACHE_SIZE  # noqa: F401 (their names here too)
from .setting import Setting

# NOTE: 128, not 64: a decode step of a small transformer (embeddings, two blocks of ~30
# ops in a row each, the head, then generate's argmax and stop check) is ~100 deep, and
# a cut in it ran each step as two programs (an XLA call and its fixed cost, ~40 us, and
# the first part's values out and in again); MAX_OPS still bounds a segment's size
MAX_DEPTH = 128   # pending ops in a row; the next op runs them first: bounds compile time
MAX_OPS = 256     # pending ops in all (a trace of many short chains): bounds it too
_state = {"enabled": True}
_gen = [0]        # bumped by a new default dtype: older pendings keep their own programs
_lock = threading.RLock()
HOST = object()   # ``defer``'s answer when the host stage (``stages/host.py``) is due first
_new = object.__new__


class Site:
    """One op on one signature (statics, argument shapes and dtypes, number types): what
    ``defer`` learned there (``op._avals``' value). ``aval``: the output's abstract value
    (a tuple of them for an op of several); ``node``: what the record stage worked out
    for the last node it recorded there, to use again (``stages/record.py``), or None."""

    __slots__ = ("aval", "node")

    def __init__(self, aval):
        self.aval, self.node = aval, None


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
    ran without returning it.

    A trace following a sequence seen before (``_Trace.memo``, a ``lazy_memo.Memo``)
    checks each op against the sequence's next one: the same op and statics, and each
    argument what it was there; the op then takes the sequence's wiring and site, and the
    walk (``_walk``) runs only from the first op that differs (the trace so far is what
    it would have built)."""
    tr = _local.trace
    while tr is not None and (m := tr.memo) is not None:
        n = tr.n
        made = q is None
        # (past its ops: NEVER's; ``efn``: the op's forward for ``ekey``, ``fn``'s where
        # given, at positions looked up here; ``nk``: the number of its arguments)
        eop, ekey, kinds, site, d, nl, pend, many, efn, nk = m.ops[n]
        if eop is op and len(args) == nk and (ekey == key or ekey.__class__ is _At and (
                where := ekey.where(efn := fn or forward(op, key))) is not None):
            index = tr.index
            leaves = tr.leaves
            arrs = []
            keep = arrs.append
            req = False
            try:  # (a TypeError: an array is no key of ``index``)
                for v, w in zip(args, kinds):  # (NOTE: not ``strict``: slower, by keyword)
                    c = w.__class__
                    if c is int:  # the pending output of the segment's op ``w``
                        if made:  # a Tensor (an AttributeError where it is none)
                            if v._requires_grad:
                                req = True
                            v = v._arr
                        if index.get(v) != w or v.value is not None:
                            break
                    elif c is type:  # a Python number of class ``w``
                        if v.__class__ is not w or w is int and not -_BIG <= v < _BIG:
                            break
                        leaves.append(v)
                    elif c is _KeyLeaf:  # a PRNG key of this shape and implementation
                        if v.__class__ is not PRNGKeyArray or v.shape != w.shape or \
                                v._impl is not w.impl:
                            break
                        leaves.append(v)
                    else:  # an array (a pending value computed: its array)
                        if made:
                            if v._requires_grad:
                                req = True
                            v = v._arr
                        x = v.value if v.__class__ is Pending else v
                        if c is tuple:  # among the leaves already
                            if x is not leaves[w[0]]:
                                break
                        elif x.__class__ is not ARRAY or x._committed or x.aval != w:
                            break  # (else a new leaf of aval ``w``)
                        else:
                            leaves.append(x)
                    keep(v)
                else:
                    if not made:
                        q.depth = d
                        index[q] = n
                        tr.n = n + 1
                        if many:  # (at positions)
                            leaves.extend(where)
                        return q, False
                    if site is not None:  # (None: a memo's op made elsewhere)
                        if forms is not None and not (req or pend) and op.name in forms \
                                and Pending not in map(type, arrs):
                            del leaves[nl:]
                            return HOST, req  # (the walk's answer: the host stage first)
                        p = _new(Pending)
                        p.op, p.key, p.fn, p.args, p.aval = op, key, efn, arrs, site.aval
                        p.value, p.ref, p.saved, p.gen, p.depth = None, None, False, tr.gen, d
                        index[p] = n
                        tr.n = n + 1
                        if not many:
                            return p, req and site
            except (AttributeError, TypeError):
                pass
            if tr.n > n:  # (an op at positions, or of several outputs: out of the ``try``)
                if many is _AT:
                    leaves.extend(where)
                    return p, req and site
                return _outputs(p), req and site
        got = _missed(tr, n, op, key, fn, args, q, forms)
        if got is not None:
            return got
        tr = _local.trace
    return _walk(op, key, fn, args, q, forms)


def forward(op, key):
    """``op``'s forward for the statics ``key`` (``Op.forward_fn``, its cache read first)."""
    f = op._fwd_cache.get(key)
    return f if f is not None else op.forward_fn(key)


def _walk(op, key, fn, args, q, forms):
    """``defer``'s walk over the arguments: what it decides, and the trace's wiring."""
    if fn is None:  # (``apply`` gives none: ``defer``)
        fn = forward(op, key)
    while True:
        if q is not None and q.value is not None:
            return q, False  # a pick its op computed, run with a trace past the bounds
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
    tr.sites.append(site if made else None)
    tr.nl = k
    q.depth = depth + 1
    index[q] = n = tr.n  # (in order: the segment's ops are ``index``'s keys)
    tr.n = n + 1
    if made and av.__class__ is tuple:
        return _outputs(q), req and site
    return q, made and req and site  # (a ``Pending`` made elsewhere: its maker reads none)


def join(p, arr):
    """``p``, a ``Pending`` that reads ``arr`` only (an index read's), joins this thread's
    trace now where ``arr`` is one of its ops, not when an op's walk misses it (a late
    argument: Llama's rotary ``x[..., :h]`` cost 40 such misses a ``generate``)."""
    tr = _local.trace
    if tr is not None and tr.gen == p.gen and arr in tr.index:
        defer(p.op, p.key, p.fn, p.args, p)


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
    position in leaves,)``; ``n``: the ops; ``gen``: the default dtype's generation;
    ``sites``: per op, its ``Site`` (None for a ``Pending`` made elsewhere).

    ``memo``: the sequence (``lazy_memo.Memo``) this trace follows while its ops match
    it (then ``struct``, ``given``, ``nl`` and ``sites`` wait: ``lazy_memo.restore``
    fills them in from it where an op differs), else None; ``alts``: weak references to
    the other sequences that ran after the last segment's, to follow instead where
    ``memo`` differs (``lazy_memo.switch``); ``offered``: the weak references it was
    given."""

    __slots__ = ("index", "struct", "leaves", "given", "n", "nl", "gen", "sites", "memo",
                 "alts", "offered", "resumed")

    def __init__(self):
        # (``given``'s ids stay valid: ``leaves`` holds their arrays)
        self.index, self.struct, self.leaves, self.given = {}, [], [], {}
        self.n, self.nl, self.gen = 0, 0, _gen[0]  # ``nl``: the leaves
        self.sites, self.memo, self.alts, self.offered = [], None, None, None
        self.resumed = -1  # where the walk added nothing and ``memo`` was followed again


def _missed(tr, n, op, key, fn, args, q, forms):
    """``defer`` where the op at ``n`` is not ``tr``'s memo's: None to follow another
    sequence (``lazy_memo.switch``), or, past the memo's end with an argument at the
    depth bound, the next trace's (the walk would run the trace here, past the bound or
    reading that argument: it runs as followed); else the walk's answer, from the trace
    as the walk would have built it (``lazy_memo.restore``). Where what the walk did
    leaves the trace as following would have (an op it runs eagerly, such as one on a
    value held on the host; the memo's next ops, such as a pending argument not in the
    trace joining it first), the trace follows its memo again."""
    m = tr.memo
    if tr.gen != _gen[0]:  # (a new default dtype: the walk starts a new trace)
        tr.memo = None
        return _walk(op, key, fn, args, q, forms)
    del tr.leaves[m.ops[n][5]:]  # (what the op's arguments added)
    if q is None and not all(map(_waits, args)):
        if _put_held(op, args, forms):
            return None  # the op follows on, its values held on the host put
        return None, False  # the walk's answer, the trace unchanged: it follows on
    arrs, late, depth = _pending_args(tr, args, q is None)
    if late:  # the walk's first step, to follow on: whether or not the op then waits,
        # its late arguments join the trace (or it runs, the bounds passed), and values
        # held on the host go to the device (an op run eagerly reads them likewise)
        _ready(tr, arrs, depth < MAX_DEPTH and n < MAX_OPS)
        return None
    if n == m.n and depth >= MAX_DEPTH:
        with _lock:
            _flush()
        return None
    if _memo.switch(tr, n):
        return None
    _memo.restore(tr, n)  # the walk from this op on
    got = _walk(op, key, fn, args, q, forms)
    n2 = tr.n
    if _local.trace is tr and (n2 > n or tr.resumed != n) and n2 <= m.n and \
            len(tr.leaves) == m.ops[n2][5] and tr.struct[n:] == list(m.struct[n:n2]) and \
            tr.sites[n:] == [e[3] for e in m.ops[n:n2]]:
        tr.memo = m
        if n2 == n:  # (at most once at an op where the walk added nothing)
            tr.resumed = n
    return got


class _Local(threading.local):
    # NOTE: a trace per thread: a thread's defer touches no other's, so it takes no
    # lock; what reads another thread's pending ops (``_ready``) or runs a trace does
    trace = None
    last = None  # the memo of the segment this thread ran last (``lazy_memo.Memo.nexts``)


_local = _Local()


def pending_depth(arrs):
    """The longest chain of ops not run yet behind ``arrs`` (0 when none is pending)."""
    tr = _local.trace
    index = {} if tr is None else tr.index
    return max((v.depth for v in arrs if v.__class__ is Pending and v.value is None
                and v in index), default=0)


def _outputs(p):
    """The outputs of ``p``, a deferred multi-output op, each a ``Pending`` picking its
    item (``lazy_picks``), joined to the trace after it."""
    outs = _picks.picks(p)
    for q in outs:
        if q.value is None:
            defer(_picks.PICK, q.key, q.fn, q.args, q)
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
                _segment.run_nodes(_segment.behind(p), None)
            else:
                if tr is None or tr.gen != p.gen:
                    tr = _local.trace = _Trace()
                if p not in tr.index:  # another thread's, an index read's, or one a
                    defer(p.op, p.key, p.fn, p.args, p)  # segment ran without returning it
                _flush(p)
        x = p.value
        if x.__class__ is Host:
            x = p.value = tiered.device(x)
        elif x.__class__ is tuple:  # a multi-output op's (never read by a Tensor)
            x = p.value = tuple(map(tiered.device, x))
        return x


def _flush(read=None):
    """Run this thread's trace as one segment, a new trace taking its place (first: should
    running them fail, they are pending still, and join the next trace when read). The
    caller holds ``_lock``; ``read``: the ``Pending`` it reads, which the segment gives out."""
    tr = _local.trace
    n = tr.n
    if not n:
        return
    new = _local.trace = _Trace()
    if n == 1:  # (no segment: the sequence to follow is still ahead, where one was)
        if tr.memo is None and tr.offered:
            _memo.offer(new, tr.offered, (MAX_DEPTH, MAX_OPS))
        _segment.run_nodes(list(tr.index), None)
        return
    run_taken((tr, list(tr.index), new), read)


def run_taken(taken, read=None):
    """Run a trace of two or more ops taken off its thread (``_flush``, ``take``) as one
    segment."""
    tr, nodes, new = taken
    n = tr.n
    with _lock:  # (``_flush``'s caller holds it already)
        # NOTE: only values something may read leave the program, less saved layout
        # values (``lazy_layout``); XLA fuses the rest away (a later read runs an op alone)
        outs = _layout.leave_out(nodes, tuple([k for k, q in enumerate(nodes) if (
            r := q.ref) is None or q.saved or r() is not None]), read)
        m = tr.memo
        if m is not None and n != m.n:  # followed, but only a part of it
            _memo.restore(tr, n)
            m = None
        _ran(_segment.run_nodes(nodes, (tuple(tr.struct) if m is None else m.struct,
                                        tr.leaves, outs, m, tr.sites if m is None else None,
                                        (MAX_DEPTH, MAX_OPS))), new)


def _ran(seg, new):
    """After a segment ran (its ``Memo``; None: a first sighting), ``new`` follows what
    ran after it before."""
    last = _local.last
    if last is not None and seg is not None:
        _memo.link(last, seg)
    _local.last = seg
    if seg is not None and new.n == 0 and seg.nexts:
        _memo.offer(new, seg.nexts, (MAX_DEPTH, MAX_OPS))


def take(pendings):
    """This thread's trace, taken off it for a backward region's program to run
    (``_engine/fusion_forward.py``): ``(trace, its ops, the new trace)``, or None unless
    it holds all ``pendings`` and followed a memo all through (which stands for its ops)."""
    with _lock:
        tr = _local.trace
        if tr is None or tr.gen != _gen[0] or (m := tr.memo) is None or tr.n != m.n or \
                m.n < 2 or not all(map(tr.index.__contains__, pendings)):
            return None
        new = _local.trace = _Trace()
        return tr, list(tr.index), new


def settle_taken(taken, outs, values):
    """A taken trace run elsewhere: its ops at ``outs`` computed as ``values`` (the rest
    stay pending), as after its segment ran."""
    tr, nodes, new = taken
    with _lock:
        for k, v in zip(outs, values):
            _segment.settle(nodes[k], v)
        _ran(tr.memo, new)


# a PRNG key leaf's part of a segment's key (not a plain tuple: ``(an earlier leaf's
# position,)`` is one). NOTE: signed by its implementation (``_impl``, private), not its
# dtype: the key's lookup then compares the same object (identity, in C) where a dtype
# compared through ``prng.KeyTy.__eq__``, a Python call per key leaf per segment
_KeyLeaf = collections.namedtuple("_KeyLeaf", "cls shape impl")
_UNPLACED, _At, _AT = _memo.UNPLACED, _memo.At, _memo.AT


def forget():
    """A new default dtype: drop the compiled segments; values deferred before it run
    through their ops' own programs, traced with the old one (dispatch forgets the rest)."""
    with _lock:
        _gen[0] += 1
        _segment.forget()
        _memo.forget()
        # (each thread's trace is replaced at its next op: ``_Trace.gen``; the ops in it
        # keep their generation, and ``force`` runs them apart)


FORCE[0] = force
