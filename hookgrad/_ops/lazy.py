"""Deferred forward: an op output that nobody has read yet is recorded, not run; the first
read runs the pending ops behind it together, as one XLA call once that segment repeats.

Eagerly, each op is one JAX dispatch (a few microseconds of runtime on a CPU, more than
PyTorch spends on the whole op). Here ``apply`` returns a Tensor holding a ``Pending``
(what to run, and the output's shape and dtype), and records its node as usual: nodes,
hooks, ``_version`` and ``requires_grad`` never wait. Reading the array (``t._data``:
printing, ``.item()``, an in-place write, a non-deferred op, the backward unpacking what
a node saved) runs every pending op it depends on.

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
from .._tensor import FORCE, Pending
from . import tiered
from .setting import Setting

MAX_DEPTH = 64    # pending ops in a row; the next op runs them first: bounds compile time
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
_seen = {}        # segment keys run op by op, with their counts
_compiled = collections.OrderedDict()  # segment key -> its jitted program
_lock = threading.RLock()
_new = object.__new__
_BIG = 2 ** 63

_clean = _jax_trace.no_trace


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


def defer(op, key, fn, arrs):
    """A ``Pending`` for ``op`` on ``arrs`` (concrete arrays, Pendings, Python numbers), a
    list of them for an op of several outputs, or the signature to ``learn`` after running
    it eagerly, or None when it cannot wait."""
    sig = [key if op.positions is None else _placed(fn, arrs, key)]
    depth = 0
    for v in arrs:
        c = v.__class__
        if c is Pending:
            sig.append(v.aval)
            if v.value is None and v.depth > depth:
                depth = v.depth
        elif c is ARRAY:
            if v._committed:  # placed on a device by the user: eager keeps its checks
                return None
            sig.append(v.aval)
        else:
            if c is int and not -_BIG <= v < _BIG:  # JAX refuses it: let the call raise
                return None
            sig.append(c)
    sig = tuple(sig)
    av = op._avals.get(sig)
    if av is None:
        return sig
    if av is False:  # its output cannot wait
        return None
    if depth >= MAX_DEPTH:
        with _lock:  # the chain is walked once: to plan it, recounting its depth, then
            # to run it
            nodes = _behind([v for v in arrs if v.__class__ is Pending and v.value is None])
            plan = _plan(nodes) if len(nodes) > 1 else None
            depth = _recount(nodes) if plan is None else plan[4]
            if depth >= MAX_DEPTH:
                # the chains so far run, as one segment (each argument's would be one XLA
                # call of its own); this op starts the next
                _run_nodes(nodes, plan)
        if depth >= MAX_DEPTH:
            arrs[:] = [value(v) for v in arrs]
            depth = 0
    p = _new(Pending)
    p.op, p.key, p.fn, p.args, p.aval = op, key, fn, arrs, av
    p.depth, p.value, p.ref, p.saved, p.gen = depth + 1, None, None, False, _gen[0]
    return p if av.__class__ is not tuple else _outputs(p)


def pending_depth(arrs):
    """The longest chain of ops not run yet behind ``arrs``. A ``Pending``'s ``depth``
    counts the ops pending when it was made; a segment run since (a read, the bound met on
    another branch) leaves it too high, and a short chain would be cut in two (one more
    XLA call). The depths of the ops behind ``arrs`` are set right here, so the ops made
    from them count right too."""
    return _recount(_behind([v for v in arrs if v.__class__ is Pending and v.value is None]))


def _recount(nodes):
    """The depths of ``nodes`` (``_behind``'s list) set right; returns the deepest (as
    ``_plan`` does, planning them)."""
    top = 0
    for q in nodes:
        d = 0
        for a in q.args:  # an argument still pending came earlier: its depth is set right
            if a.__class__ is Pending and a.value is None and a.depth > d:
                d = a.depth
        q.depth = d = d + 1
        if d > top:
            top = d
    return top


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
    item; ``p`` itself is never read by a Tensor, so a segment always gives it out."""
    outs = []
    for k, av in enumerate(p.aval):
        q = _new(Pending)
        q.op, q.key, q.args, q.aval = _PICK, (("k", k),), (p,), av
        q.fn = _PICKERS[k] if k < len(_PICKERS) else operator.itemgetter(k)
        q.depth, q.value, q.ref, q.saved, q.gen = p.depth + 1, None, None, False, p.gen
        outs.append(q)
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
        op._avals[sig] = tuple(r.aval for r in res) if ok else False
        return
    op._avals[sig] = res.aval if res.__class__ is ARRAY and not res._committed else False


def value(v):
    """``v``'s array: computed if it is a ``Pending``."""
    if v.__class__ is not Pending:
        return v
    x = v.value
    return x if x is not None and x.__class__ is not Host else force(v)


def force(p):
    """Run ``p`` and every pending op behind it; returns ``p``'s array (a value the first
    tier kept in NumPy is put on the device now, once)."""
    with _lock:
        if p.value is None:
            _run([p])
        x = p.value
        if x.__class__ is Host:
            x = p.value = tiered.device(x)
        elif x.__class__ is tuple:  # a multi-output op's (never read by a Tensor)
            x = p.value = tuple(map(tiered.device, x))
        return x


def _run(roots):
    """Run the pending ops ``roots`` (not computed yet) and every pending op behind them,
    as one segment. The caller holds ``_lock``."""
    if roots:
        _run_nodes(_behind(roots))


def _run_nodes(nodes, plan=None):
    """Run ``nodes`` (``_behind``'s list, not empty) as one segment; ``plan``: theirs, if
    planned already."""
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
        _run_segment(nodes)
    else:
        _run_segment(nodes, plan)


def _behind(roots):
    """The pending ops ``roots`` need, ``roots`` among them (once each), each after its
    arguments (an op is deeper than each pending argument it had when made, so sorting by
    depth orders them)."""
    found = list(dict.fromkeys(roots)) if len(roots) > 1 else list(roots)  # in order,
    seen = set(found)  # once each (``a * a``)
    # NOTE: per op of every segment. A list iterated while it grows visits what is
    # appended too: ``found`` is its own work list
    for q in found:
        for a in q.args:
            if a.__class__ is Pending and a.value is None and a not in seen:
                seen.add(a)
                found.append(a)
    found.sort(key=_depth)
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


def _run_segment(nodes, plan=None):
    if plan is None:
        plan = _plan(nodes)
    if plan is None:  # traced under an older default dtype
        _run_apart(nodes)
        return
    key, struct, leaves, outs, _ = plan
    fn = _compiled.get(key)
    if fn is not None:
        _compiled.move_to_end(key)
    else:
        n = _seen.get(key, 0) + 1
        if n < COMPILE_AT:
            if len(_seen) > 16 * CACHE_SIZE:
                _seen.clear()
            _seen[key] = n
            fn = None
        else:
            _seen.pop(key, None)
            fn = _compiled[key] = tiered.jit(_program(struct, outs))
            if len(_compiled) > CACHE_SIZE:
                _compiled.popitem(last=False)
    # NOTE: a segment's trace costs more than running its ops: with tiered execution it
    # is traced and compiled in the background, op by op meanwhile
    res = None if fn is None else fn.call_ready(*leaves)
    if res is None:  # each op's own jitted program, as eagerly
        _run_apart(nodes)
        return
    for k, v in zip(outs, res):
        q = nodes[k]
        if q.aval.__class__ is tuple:
            _settle(q, v)
        else:  # ``_settle``, inlined: a call per value read out of every segment
            q.value = v
            q.args = q.fn = None


def _run_apart(nodes):
    """Run ``nodes`` one by one, each op through its own jitted program."""
    for q in nodes:
        if q.value is None:  # (an output of a multi-output op is computed with it)
            _run_one(q)


def _plan(nodes):
    """``(key, struct, leaves, outs, depth)`` of the segment ``nodes`` (in ``_behind``'s
    order: an op after its pending arguments), or None when one was deferred under an
    older default dtype. ``struct``: per op, its forward, statics and where each argument
    comes from (an earlier op's position, ``(an earlier leaf's position,)`` or the type of
    a new leaf); ``outs``: the positions of the values something may read; ``depth``: the
    longest chain of them, their depths set right on the way (``_recount``). One pass over
    the ops and their arguments: a segment is planned at every read, so this is the part
    of a read that Python pays per op."""
    gen = _gen[0]
    index = {}
    leaves = []
    given = {}  # id of an array argument -> ``(its position in leaves,)``
    struct = []
    outs = []
    push = leaves.append
    top = 0
    for k, q in enumerate(nodes):
        if q.gen != gen:
            return None
        spec = []
        add = spec.append
        d = 0
        for a in q.args:
            c = a.__class__
            if c is Pending:
                x = a.value
                if x is None:  # not run: an earlier op of the segment (``_behind``), its
                    add(index[a])  # depth set already (a subscript: no method call)
                    if a.depth > d:
                        d = a.depth
                    continue
                if x.__class__ is Host:  # the program reads it: put on the device, once
                    x = a.value = tiered.device(x)
                a = x
                c = ARRAY
            if c is ARRAY:
                # NOTE: an array read by several ops (a weight, a constant) is one argument
                # of the program: each argument costs its dispatch, and the ops share it
                i = given.get(id(a))
                if i is not None:
                    add(i)  # ``(an earlier leaf's position,)``, made once per leaf
                    continue
                given[id(a)] = (len(leaves),)
                add(a.aval)
            else:
                add(c)
            push(a)
        fn = q.fn
        place = None if fn.__class__ in _UNPLACED else getattr(fn, "place", None)
        found = place(q.args[0].shape) if place is not None else None
        if found is None:
            struct.append((q.op.fwd, q.key, tuple(spec)))
        else:  # its positions are arguments here too (an op at positions)
            fwd, fixed, where = found
            spec += [int] * len(where)
            leaves.extend(where)
            struct.append((fwd, tuple(fixed.items()), tuple(spec)))
        index[q] = k
        q.depth = d = d + 1
        if d > top:
            top = d
        # NOTE: only values something may read leave the program: XLA fuses the rest away
        # (a pending op nobody reads keeps its arguments, so a later read can still run it)
        r = q.ref
        if r is None or q.saved or r() is not None:
            outs.append(k)
    outs = tuple(outs)
    return (tuple(struct), outs), struct, leaves, outs, top


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


FORCE[0] = force
