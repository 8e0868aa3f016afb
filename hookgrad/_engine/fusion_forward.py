"""The pending forward inside a fused backward region's program.

A training step's forward is deferred (``_ops/lazy.py``): at ``backward()`` the last
segment of it has not run yet, and the region the backward starts with reads what it
saved. Run apart, the segment's program returns every saved value (each an array out of
one XLA program and into the next) and the region's program takes them back. Here one
program does both: the segment's ops, then the region's vjps on the values they computed,
returning only the region's gradients and the values something else may still read (a
Tensor alive, such as the loss; a value another node saved). XLA then fuses across the
two and materializes no saved value the backward alone reads.

What a user can see stays eager's. The forward's values are the segment's own ops on the
same arguments; a value the program does not return stays pending, keeping its op and
arguments, so that a later read computes it (as for a segment's values nobody could
read). Only a repeated step fuses: a region replayed exactly from its plan
(``fusion._Plan``) and a segment that followed a sequence seen before all through
(``lazy.take``), without ``retain_graph`` (whose saved values must stay readable); the
program compiles in the background (``tiered``) while the segment and the region run
apart as before.
"""
from .._tensor import Pending as _PENDING
from .._ops import lazy as _lazy, lazy_segment as _segment, tiered
from .._ops.lazy_layout import LEFT as _LEFT

ON = [True]       # whether regions take the pending forward in (off: it runs apart first)
PER_PLAN = 4      # fused programs kept per region plan (the segments met before it)
MAX_MADE = 16     # fused programs a plan makes at most (then its steps run apart)
_MADE = object()  # a plan's ``fused`` entry counting the programs it made
# NOTE: from a plan's 4th replay on, as a segment compiles at its 4th sighting
# (``lazy_segment.COMPILE_AT``): a step's first programs compile first, in the first
# second, and this one, which takes over from two of them, after
AFTER = _segment.COMPILE_AT


class Slot:
    """Stands in ``flat`` for a saved value the taken segment computes (``take``)."""

    __slots__ = ()


SLOT = Slot()


def pending(flat, repeats):
    """For the region whose saved values are ``flat``, where some are still pending
    (``fusion._unpacked``): the thread's trace that computes them, taken for the region's
    program (``repeats``: its plan replays exactly, often enough), as ``(taken, slots)``,
    with each such value replaced in ``flat`` by ``SLOT`` (``slots``: ``(position,
    Pending)``); else None, each computed in ``flat`` (running the trace, as reading it
    would), but for a layout value its segment left out (``fusion_layout`` rebuilds it)."""
    if _PENDING not in map(type, flat):
        return None
    pend = [k for k, v in enumerate(flat) if v.__class__ is _PENDING and v.value is None
            and v.saved != _LEFT]
    if not pend:
        return None
    slots = [(k, flat[k]) for k in pend]
    taken = _lazy.take([p for _, p in slots]) if repeats and ON[0] else None
    if taken is None:
        _computed(flat, slots, True)
        return None
    for k in pend:
        flat[k] = SLOT
    return taken, slots


def _computed(flat, slots, keep_left):
    """Each pending value of ``slots`` computed into its place in ``flat`` (the first runs
    its trace, the others with it), but with ``keep_left`` a layout value its segment left
    out, which stays pending for the region to rebuild (``fusion_layout``)."""
    for k, v in slots:
        if v.value is None and not (keep_left and v.saved == _LEFT):
            _lazy.value(v)
        flat[k] = v if v.value is None else v.value


def run(plan, lays, region_fn, g, ext, flat, taken, slots):
    """The region's gradients (the program's first result) with the taken segment run in
    the same program, or None where that program is not compiled yet or ``region_fn`` is
    None (the region's parts are not its plan's): the segment has then run apart
    (``lazy.run_taken``) and ``flat``'s slots hold its values. ``lays``: the saved layout
    values ``region_fn`` rebuilds (with ``plan``, what fixes it)."""
    tr, nodes, _ = taken
    if region_fn is None:
        return _apart(flat, taken, slots)
    index = tr.index
    mine = {p for _, p in slots}
    # what leaves the program: values something may read once the region's nodes let go
    # of what they saved (a live Tensor, a value another node saved, a multi-output op)
    outs = tuple([k for k, q in enumerate(nodes) if (r := q.ref) is None or
                  r() is not None or q.saved and q not in mine])
    need = sorted({index[p] for _, p in slots}.difference(outs))
    at = {k: j for j, k in enumerate(outs + tuple(need))}
    subs = tuple([(k, at[index[p]]) for k, p in slots])
    key = (tr.memo, outs, subs, lays)
    fused = plan.fused
    got = fused.get(key)
    if got is None:
        made = fused[_MADE] = fused.get(_MADE, 0) + 1
        if made > MAX_MADE:  # keys that do not repeat (a new memo each step): apart
            return _apart(flat, taken, slots)
        seg = _segment.program(tr.memo.struct, outs + tuple(need))
        got = fused[key] = tiered.jit(_program(seg, len(tr.leaves), region_fn, len(ext),
                                               subs, len(outs)))
        if len(fused) > PER_PLAN + 1:  # (the oldest program; ``_MADE`` stays first)
            del fused[next(k for k in fused if k is not _MADE)]
    args = (g, *ext, *[v for v in flat if v is not SLOT], *tr.leaves)
    # NOTE: the key fixes the signature: the plan's own sites (``exact``) fix its saved
    # values' and gradients' types, the memo its leaves'. (Where a weak type differs,
    # jax.jit compiles in this thread: never another result)
    res = got.call_ready(*args, sig=())
    if res is None:
        return _apart(flat, taken, slots)
    _lazy.settle_taken(taken, outs, res[1])
    return res[0]


def _apart(flat, taken, slots):
    """The taken segment run as ``backward()`` would have run it, its values in ``flat``'s
    slots (a layout value it left out computed alone: the region's layout values are
    worked out already); None."""
    _lazy.run_taken(taken)
    _computed(flat, slots, False)


def _program(seg, nleaves, region_fn, nx, subs, nout):
    """``(g, *earlier gradients, *saved values not computed here, *the segment's leaves)
    -> (the region's gradients, the segment's values at its outputs)``."""
    def run(g, *args):
        ext, rest = args[:nx], list(args[nx:])
        nrest = len(rest) - nleaves
        vals = seg(*rest[nrest:])
        flat = rest[:nrest]
        for k, j in subs:  # (in increasing ``k``: each lands where its slot was)
            flat.insert(k, vals[j])
        return region_fn(g, *ext, *flat), vals[:nout]
    return run
