"""Running a segment of the deferred forward (``lazy.py``): its ops one by one through
their own programs on its first sightings, then as one jitted program (its key's hash ->
the key, its program and its ``lazy_memo.Memo``), each op's value settled in its
``Pending``."""
import collections
import operator

import jax

from .. import _jax_trace
from .._tensor import Pending
from . import tiered
from .lazy_memo import Memo, sequence

COMPILE_AT = 4    # sightings of a segment before it is compiled as one program
CACHE_SIZE = 256  # compiled segments kept (least recently used dropped)
_seen = {}        # hash of a segment key run op by op -> (the key, its count, its memo)
_compiled = collections.OrderedDict()  # hash of a segment key -> (the key, program, memo)
_clean = _jax_trace.no_trace
_PROGRAM = tiered.Program


def run_nodes(nodes, plan):
    """Run ``nodes`` (not empty; each after its pending arguments) as one segment by
    ``plan`` (``_flush``'s), or op by op when it is None."""
    # NOTE: read inside a JAX trace (a hookgrad.compile step, jax.jit), a pending value
    # made outside it is still computed concretely: never a leaked tracer. Outside one
    # (every eager read), no context manager: three Python calls fewer per read
    if _clean():
        return _run_planned(nodes, plan)
    with jax.ensure_compile_time_eval():
        return _run_planned(nodes, plan)


def _run_planned(nodes, plan):
    if len(nodes) == 1:
        _run_one(nodes[0])
    elif plan is None:
        _run_apart(nodes)
    else:
        return _run_segment(nodes, plan)
    return None


def behind(p):
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
    """Run the segment (``_flush``'s plan); returns its ``Memo`` (None on its first
    sighting)."""
    struct, leaves, outs, memo, sites, bounds = plan
    # NOTE: the caches are keyed by the key's hash, each entry holding its key: a lookup
    # hashes the key once and compares it once. (A tuple does not keep its hash: by the key
    # itself, ``get`` then ``move_to_end`` hashed and compared it twice, each time walking
    # every op of the segment.) Another key of the same hash takes the entry's place.
    # A trace that followed a memo all through has the memo's key when its outputs are
    # the memo's: its entry holds that key object, compared by identity
    if memo is not None and outs == memo.key[1]:
        key, h = memo.key, memo.h
    else:
        key = (struct, outs)
        h = hash(key)
    got = _compiled.get(h)
    if got is not None and ((k := got[0]) is key or k == key):
        fn, memo = got[1], got[2]
        _compiled.move_to_end(h)
    else:
        got = _seen.get(h)
        if got is not None and ((k := got[0]) is key or k == key):
            n, seg = got[1] + 1, got[2]
        else:
            n, seg = 1, None
        if seg is None and n > 1:  # seen before: its next sighting may follow it
            seg = Memo(memo.ops if sites is None else sequence(nodes, struct, sites),
                        struct, key, h, bounds)
        memo = seg
        if n < COMPILE_AT:
            if len(_seen) > 16 * CACHE_SIZE:
                _seen.clear()
            _seen[h] = (key, n, memo)
            fn = None
        else:
            _seen.pop(h, None)
            fn = tiered.jit(program(struct, outs))
            _compiled[h] = (key, fn, memo)
            _compiled.move_to_end(h)  # (a colliding key's place: the newest)
            if len(_compiled) > CACHE_SIZE:
                _compiled.popitem(last=False)
    # NOTE: a segment's trace costs more than running its ops: with tiered execution it
    # is traced and compiled in the background, op by op meanwhile
    # (the key says each leaf's aval or type: the program's signature is the empty one)
    res = None if fn is None else fn.call_ready(*leaves, sig=())
    if res is None:  # each op's own jitted program, as eagerly
        _run_apart(_needed(nodes, outs) if len(outs) < len(nodes) else nodes)
        return memo
    for k, v in zip(outs, res):
        q = nodes[k]
        if q.value is not None:  # computed meanwhile (another thread's read joined it)
            continue
        if q.aval.__class__ is tuple:
            _settle(q, v)
        else:  # ``_settle``, inlined: a call per value read out of every segment
            q.value = v
            q.args = q.fn = None
    return memo


def settle(q, v):
    """``q``, an op of a segment run elsewhere (``_engine/fusion_forward.py``), computed
    as ``v``, unless it was computed meanwhile."""
    if q.value is None:
        if q.aval.__class__ is tuple:
            _settle(q, v)
        else:
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


def program(struct, outs):
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


_depth = operator.attrgetter("depth")


def forget():
    """A new default dtype: drop the segments' programs (traced with the old one)."""
    _seen.clear()
    _compiled.clear()
