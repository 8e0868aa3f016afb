"""The per-step trace cache of the deferred forward (``lazy.py``): a segment's sequence of
ops (``Memo``), remembered from its second sighting, which the next trace follows.

In steady state a training step or a ``generate`` step defers the same ops each time: the
same op sites, each argument the same weight, a pending output of a known earlier op of
the segment, or a new array of the same aval (the batch). A trace that follows a memo
checks each op against the memo's next one, one comparison per argument, and takes the
memo's wiring and site instead of signing the op, looking its site up and building its
part of the segment's key (``lazy.defer``); a trace that followed a memo to its end runs
the memo's program, looked up by identity (``lazy_segment``). At the first op that differs
the trace is what the walk would have built up to it (``restore``), and the walk goes on.
Which memo a trace follows: the one whose segment ran after the last segment before
(``Memo.nexts``); a chain cut at the depth bound may have several (``switch``).
"""
import operator
import weakref

from jax._src.array import ArrayImpl  # NOTE: private, as in lazy.py

from . import tiered

NEXTS = 4  # the sequences a segment remembers having run after it
NEVER = object()  # the op of a memo's entry that no op matches (``sequence``)
AT = 2  # a memo entry's ``many`` for an op at positions
# the classes of op forwards that are never at positions (no ``place``): a segment plans
# them without asking (a multi-output op's pick; ``tiered.jit``'s programs)
UNPLACED = frozenset((operator.itemgetter, tiered.Program))
_MEMOS = weakref.WeakSet()  # every ``Memo``, emptied by a new default dtype (``forget``)
_weakref = weakref.ref


class Memo:
    """A segment's sequence of ops, for the next trace to follow (``lazy.defer``): per op
    ``(op, statics, kinds, site, depth, leaves, pend, many, fn, len(kinds))``: ``kinds``
    says what each argument was (the segment's wiring: an earlier op's position, ``(an
    earlier leaf's position,)``, the aval of a new leaf array, the class of a number, a
    PRNG key's ``lazy._KeyLeaf``), ``site`` is None for a ``Pending`` made elsewhere,
    ``leaves`` counts the leaves before the op, ``pend`` says whether an argument is
    pending, ``many`` whether the op has several outputs, ``fn`` is its forward for
    ``statics`` (what ``Op.forward_fn`` gives: a followed op takes it; None at positions,
    whose statics vary); an op at positions, and the end (``ops[n]``),
    have ``NEVER`` for op; ``struct`` and ``key``: the segment's,
    and ``h`` the key's hash (a trace that followed it all looks its program up by
    them); ``nexts``: weak references to the memos of the segments that ran after it
    (the last ``NEXTS``, the latest first), the sequences the next trace follows (one
    segment may follow it where another did last time: a chain cut at the depth bound
    runs the same segment, then the chain's last one); ``bounds``: MAX_DEPTH and
    MAX_OPS when made (a memo's ops are within them)."""

    __slots__ = ("ops", "n", "struct", "key", "h", "nexts", "bounds", "__weakref__")

    def __init__(self, ops, struct, key, h, bounds):
        self.ops, self.n, self.struct, self.key, self.h = ops, len(ops) - 1, struct, key, h
        self.nexts, self.bounds = [], bounds
        _MEMOS.add(self)


class At:
    """A memo entry's statics for an op at positions (``Op.positions``): the ones every
    position shares, for a first argument of ``shape``; a call with any positions whose
    forward places them so follows it."""

    __slots__ = ("shape", "fwd", "fixed")

    def __init__(self, shape, fwd, fixed):
        self.shape, self.fwd, self.fixed = shape, fwd, fixed

    def where(self, fn):
        """The positions of the call of forward ``fn``, or None where it is not this."""
        place = None if fn.__class__ in UNPLACED else getattr(fn, "place", None)
        found = None if place is None else place(self.shape)
        return None if found is None or found[0] is not self.fwd or \
            found[1] != self.fixed else found[2]


def sequence(nodes, struct, sites):
    """The ``Memo.ops`` of a segment of ``nodes`` (their arguments not run yet), and
    an entry no op matches (``NEVER``) after them."""
    ops = []
    nl = 0  # the leaves before each op (a memo is followed up to its first op at positions)
    for q, (fwd, fixed, spec), site in zip(nodes, struct, sites):
        args = q.args
        many = site is not None and site.aval.__class__ is tuple
        if args is None or many and len(spec) != len(args):  # (run meanwhile)
            ops.append((NEVER, None, (), None, 0, nl, False, False, None, 0))
            continue
        kinds = spec[:len(args)]
        at = len(spec) != len(args)  # its positions are leaves after its arguments
        ops.append((q.op, At(args[0].shape, fwd, dict(fixed)) if at else q.key, kinds,
                    site, q.depth, nl, any(w.__class__ is int for w in kinds),
                    AT if at else many, None if at else q.fn, len(kinds)))
        nl += len(spec) - sum(1 for w in kinds if w.__class__ is int or w.__class__ is tuple)
    ops.append((NEVER, None, (), None, 0, nl, False, False, None, 0))
    return ops


def switch(tr, n):
    """Follow another sequence seen after the same one (``tr.alts``, in turn) whose first
    ``n`` ops are those ``tr`` followed; False when none is left."""
    m, alts = tr.memo, tr.alts
    while alts:
        alt = alts.pop(0)()
        if alt is not None and alt is not m and alt.n > n and \
                alt.bounds == m.bounds and \
                alt.ops[:n] == m.ops[:n] and alt.struct[:n] == m.struct[:n]:
            tr.memo = alt
            return True
    return False


def restore(tr, n):
    """``tr``, which followed its memo for its first ``n`` ops, as the walk would have
    built it, to go on walking (an array that the memo took as a new leaf where the
    walk would have found it among the leaves stays a leaf twice: the same values).
    What a restore or the walk made before stays: only the ops followed since are added."""
    m = tr.memo
    tr.memo = None
    r = len(tr.struct)
    if r < n:
        tr.struct += m.struct[r:n]
        tr.sites += [e[3] for e in m.ops[r:n]]
    given, leaves = tr.given, tr.leaves
    for k in range(tr.nl, len(leaves)):
        a = leaves[k]
        if a.__class__ is ArrayImpl and id(a) not in given:
            given[id(a)] = (k,)
    tr.nl = len(leaves)


def offer(tr, nexts, bounds):
    """``tr`` (new) to follow the first of ``nexts`` (weak references to memos) still
    alive and made under ``bounds`` (its), the rest its alternatives (``switch``)."""
    tr.offered = nexts
    alts = tr.alts = list(nexts)
    while alts:
        m = alts.pop(0)()
        if m is not None and m.bounds == bounds:
            tr.memo = m
            return


def link(last, seg):
    """``seg`` ran after ``last`` (memos): the first of ``last.nexts``."""
    nexts = last.nexts
    if nexts and nexts[0]() is seg:
        return
    r = _weakref(seg)  # (the same object each time: a reference without a callback)
    if r in nexts:
        nexts.remove(r)
    nexts.insert(0, r)
    del nexts[NEXTS:]


def forget():
    """A new default dtype: the memos' sites are the old one's; no trace follows them."""
    for m in list(_MEMOS):
        m.ops = [(NEVER, None, (), None, 0, 0, False, False, None, 0)] * (m.n + 1)
