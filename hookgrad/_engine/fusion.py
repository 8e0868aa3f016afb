"""Fused backward: a region of hook-free op nodes runs as one jitted XLA program.

Node by node, the backward of N ops is N JAX dispatches and N small kernels. When nothing
can observe the nodes in between (no hooks of any kind on them, no saved-tensor hooks, not
``create_graph``), the engine hands the region to ``run``, which calls the composition of
their vjps once; XLA then also fuses the elementwise kernels. A region is what the ready
queue would run next anyway: the engine's own scheduling replayed on dependency counts, so
it takes forks (a tensor read by several ops) and joins (an op of several of them), not only
linear chains. The first sighting of a region runs node by node, through its nodes' own
programs, so a graph built once compiles no region; from the second sighting on, the region
is jit-compiled and cached. Except when node by node would itself compile two or more
programs (vjps never run before: a fresh process's first backward): compiling the region at
once then costs fewer compilations (as much XLA work for the ops, less per program), and no
node programs that later backwards would not use.

What a user can see stays PyTorch's: hooked nodes never join a region (the first may carry
the hooks that run before it, which have run); a region only grows to a node that the ready
queue would run next (no queued node of a higher sequence number); gradients meeting at a
node are summed in the order node-by-node execution delivers them, those leaving the region
are delivered afterwards in that order, and only leaves' ``AccumulateGrad`` may receive them
from inside the region (it runs right after in either case, before any other node).
"""
import collections
import heapq
import threading

from .. import _dtype
from .._tensor import Pending, Tensor
from .._autograd import hooks as _hooks
from .._autograd.graph import AccumulateGrad
from .._ops.op_node import KEEP, OpNode, vjp_op
from .._ops import tiered
from .._ops.setting import Setting
from . import fusion_forward as _forward, fusion_layout as _layout

# NOTE: 256, not 32: a tiny transformer's training step (2 layers, width 32) ran its
# backward as 8 programs at 32 (~50 us each to call, in situ); at 256 Llama's is 1, and
# its steady forward+backward 3.34-3.64 -> 2.68-2.77 ms (GPT-2 -5%, BERT -9%). A longer
# region compiles in one longer background job, during which its nodes run one by one:
# the first steps after a graph's second sighting pay more, the first 40 in all about the
# same (docs/modes.md)
MAX_LEN = 256     # nodes per fused program: bounds compile time and cache size
CACHE_SIZE = 256  # compiled regions kept (least recently used dropped)
_state = {"enabled": True}
_seen = {}        # region keys run once, node by node
_compiled = collections.OrderedDict()  # region key -> its jitted program
_plans = {}       # (first node's op, vjp key) -> compiled regions from it (``_replay``)
_lock = threading.Lock()


class set_backward_fusion(Setting):
    """Turn fused backward of hook-free node regions on or off (on by default).

    Takes effect at once; as a context manager it restores the previous setting on exit.
    Fusion changes no gradient beyond float rounding and no hook order; turn it off to
    time or debug node-by-node execution::

        >>> with hookgrad.autograd.set_backward_fusion(False):
        ...     loss.backward()
    """

    _state = _state


def is_backward_fusion_enabled():
    return _state["enabled"]


def _plain_test(fused):
    """A test ``node -> bool``: whether ``node`` may run inside a region. Checked at
    backward (hooks come any time): a direct ``OpNode`` subclass, not freed, holding no hook
    of the kinds whose ``fused`` (``_autograd.hooks.KINDS``) is in ``fused`` (an unset
    kind is None), nothing saved through saved-tensor hooks, a jittable op of one output
    (its ``NodeSite``'s ``fusable``).

    NOTE: run once per node of every backward. The test is written out from the table as
    one expression (``node._hooks is None``, or ``h.a is None and ...`` of the node's
    ``_NodeHooks`` where only some kinds are refused): CPython specializes
    each slot read, where an ``operator.attrgetter`` call and the comparison of its tuple
    cost 2.5 times as much, and each further Python call per node costs its frame."""
    attrs = [k.node_attr for k in _hooks.KINDS if k.fused in fused]
    if not all(a.isidentifier() for a in attrs):  # the table's own names, never a user's
        raise ValueError(f"not attribute names: {attrs}")
    # a node holding no hook has ``_hooks`` None (``_autograd.graph._NodeHooks``): one
    # slot read, the kinds read from the holder only where some are allowed
    held = "" if not attrs else "node._hooks is None and " \
        if len(attrs) == len(_hooks.NODE_ATTRS) else "((h := node._hooks) is None or " \
        + " and ".join(f"h.{a} is None" for a in attrs) + ") and "
    src = ("lambda node: node.__class__.__base__ is OpNode and not node._freed and "
           + held
           + "node._has_saved != 2 and node._site.fusable")
    # named for profiles and tracebacks by what it tests
    return eval(compile(src, f"<fusion: plain, no {' or '.join(fused)} hooks>", "eval"),
                {"OpNode": OpNode})  # noqa: S307 - built above from the table


# the region's first node may have had pre-hooks (they have run); none may have post-hooks
_plain_first = _plain_test((_hooks.NEVER,))
_plain_next = _plain_test((_hooks.NEVER, _hooks.FIRST_ONLY))


def run(node, grad, deps, buffers, heap, exec_info, captures, keep_graph):
    """Run the ready ``node`` on ``grad`` (its output's gradient) together with the region
    of hook-free nodes the ready queue would run right after it. Returns the ``(edge,
    gradient)`` pairs leaving the region, in node-by-node delivery order, or None when
    ``node`` itself cannot run here."""
    if not _plain_first(node):
        return None
    g = grad._data
    plan = region = None
    if exec_info is None:  # (``inputs=``/``autograd.grad`` take the region's own walk)
        site = node._site
        plans = _plans.get((site.op, site.vkey))
        if plans is not None:
            top = heap[0][0] if heap else 1
            for k, plan in enumerate(plans):
                region = _replay(plan, node, g, deps, top)
                if region is not None:
                    region, exact = region
                    plan.hits += 1
                    if k and plan.hits > plans[k - 1].hits:  # the most used tried first
                        _move_up(plans, k, plan)
                    break
            else:
                plan = None
    if region is None:
        region = _region(node, deps, heap, exec_info, captures)
    saved, flat, cut = _unpacked(region, keep_graph)
    if cut:
        plan = None  # its edges into the nodes cut off now leave the region
    # the forward's last segment, if pending: into this region's program where the step
    # repeats, else run now, as reading the saved values would (``fusion_forward``)
    taken = _forward.pending(flat, plan is not None and exact is not None and not keep_graph
                             and plan.hits >= _forward.AFTER)
    sig = None
    lays, left = _layout.lays(flat) if _PENDING in map(type, flat) else ((), None)
    if plan is not None:
        sides, parts, ext = _replayed_parts(plan, region, saved, buffers, exact is not None)
        if taken is not None:
            grads = _forward.run(plan, lays, _region_fn(parts, lays) if parts is plan.parts
                                 else None, g, ext, flat, *taken)
            if grads is not None:
                return list(zip(sides, map(Tensor._wrap, grads)))
        if parts is not plan.parts or (laid := plan.fn)[0] != lays:
            fn = _program(g, parts, lays, plan if parts is plan.parts else None)
        else:
            fn = laid[1]
            if exact is not None:  # every node of an op site of the plan's own (its
                # ``NodeSite``s, ``exact``): the same argument types, so the same saved
                # values' shapes and dtypes and the same signature, worked out once for
                # those sites. (Where the gradients' weak types or a value held on the host
                # differ, jax.jit compiles in this thread: never another result)
                if (known := plan.sig) is not None and known[0] is exact:
                    sig = known[1]
                else:  # (kept with the sites it is for: another thread may swap them)
                    sig = tiered.signature((g, *ext, *flat))
                    plan.sig = (exact, sig)
            else:  # nodes of other sites, of the plan's ops and vjp keys, and its counts
                # (a plan made before a site kept its memo, ``stages/record.py``): the
                # plan takes theirs, so that the next replay on them is exact
                plan.sites = [cur._site for cur in region]
    else:
        sides, parts, ext, edges = _parts(region, saved, buffers)
        fn = _program(g, parts, lays) if len(region) > 1 else None
        if fn is not None and exec_info is None and not cut:
            _remember(region, g, parts, edges, fn, lays)
    args = ext + flat
    # NOTE: tracing a large region costs more than running its nodes one by one: it is
    # traced and compiled in the background while they run (``call_ready`` gives None)
    outs = None if fn is None else fn.call_ready(g, *args, sig=sig)
    if outs is None:  # each vjp its own jitted call, as node-by-node execution makes them
        if left is not None:  # (the values left out: each its own op's program)
            _layout.unlaid(args, len(ext), left)
        outs = _walk([(v._fwd_cache.get(()) or v.forward_fn(()), nv, d, w)
                      for v, nv, d, w in parts], g, args)
    return list(zip(sides, map(Tensor._wrap, outs)))


def _unpacked(region, keep_graph):
    """``(saved, flat, cut)``: per node of ``region`` its vjp's leading arguments (first-
    tier values in NumPy, pending values pending), all of them in order, and whether the
    region was cut short (at a node whose saved value changed in place or was freed).
    Each node's saved values are released as they become the program's."""
    n = len(region)
    saved = [None] * n
    flat = []
    for i, cur in enumerate(region):
        try:
            saved[i] = vals = cur._unpack(False, KEEP)
        except Exception:  # noqa: BLE001 - raised again when the engine runs the node
            if not i:
                raise
            # node by node, the nodes before it run first (their leaves accumulate),
            # then it raises. So they run as the region, and it raises when the queue
            # reaches it
            del region[i:]
            return saved[:i], flat, True
        flat += vals
        # released (``cur._release()``, inlined), as node by node once it ran
        if not keep_graph and cur._has_saved:
            cur._freed = True
            cur._stored = cur._out_saved = cur._extra = None
    return saved, flat, False


def _parts(region, saved, buffers):
    """What the region's program takes, worked out from the nodes: the edges leaving it
    (in delivery order), per node ``(vjp op, number of leading arguments, where each
    result goes, whether an earlier gradient waits in its buffer)``, those earlier
    gradients (node by node, they are summed first); and per node, where each of its
    edges goes (a node's index, -1: out of the region, None: no edge)."""
    index = {n: i for i, n in enumerate(region)}
    # NOTE: per node of a backward not replayed (``_replay``): dict and list methods are
    # avoided where an operator does (``in``, subscripts), as in ``_region``
    sides = []
    parts = []
    ext = []
    edges = []
    for i, cur in enumerate(region):
        try:  # (no call once the vjp is made: nearly always)
            site = cur._site
            vop = site.op._vjp_cache[site.vkey]
        except KeyError:
            vop = vjp_op(cur)
        vals = saved[i]
        dests = []
        where = []
        for e in cur._next:
            if e is None:
                where.append(None)
            elif e[0] in index:
                dests.append(index[e[0]])
                where.append(dests[-1])
            else:
                dests.append(-1)
                where.append(-1)
                sides.append(e)
        waiting = _take(cur, buffers, ext) if i and cur in buffers else False
        parts.append((vop, len(vals), tuple(dests), waiting))
        edges.append(tuple(where))
    return sides, parts, ext, edges


def _take(cur, buffers, ext):
    """An earlier gradient waiting in the buffer of the region's node ``cur`` (not its
    first) goes to ``ext`` (node by node, it is summed first). Returns whether one waits.
    (Called only for a node in ``buffers``: most are not.)"""
    buf = buffers.pop(cur)
    if buf[0] is not None:
        ext.append(buf[0]._data)
        return True
    return False


class _Plan:
    """A region as it ran once, compiled, to run again without working it out: its nodes
    as paths from its first (``(earlier node, edge)``), per node its ``NodeSite``, op,
    vjp key, the edges into it from the region, where each of its edges goes, its part of
    the program; the edges leaving it; ``fn``: (the saved layout values its program
    rebuilds, ``fusion_layout.lays``; the program). ``checks``: the edges ``(node, edge,
    where it goes)`` that a replay on the plan's own sites still looks at (``_replay``);
    ``sig``: ``(sites, the program's signature)`` for the nodes of those sites, or None;
    ``waits``: the positions of its nodes an earlier gradient waited for when it was made.
    """

    __slots__ = ("shape", "dtype", "sites", "ops", "vkeys", "paths", "nin", "edges", "checks",
                 "sides", "outs", "parts", "fn", "hits", "sig", "waits", "fused")


def _remember(region, g, parts, edges, fn, lays):
    """Keep a compiled region of a backward without ``inputs=`` for ``_replay``."""
    n = len(region)
    paths = [None] * n
    nin = [0] * n
    for j, where in enumerate(edges):
        for e, d in enumerate(where):
            if d is not None and d >= 0:
                nin[d] += 1
                if paths[d] is None:
                    paths[d] = (j, e)
    plan = _Plan()
    plan.shape, plan.dtype, plan.fn, plan.hits, plan.sig = g.shape, g.dtype, (lays, fn), 0, None
    plan.fused = {}  # programs running a pending forward segment too (``_forward``)
    plan.sites = [cur._site for cur in region]
    plan.ops = [s.op for s in plan.sites]
    plan.vkeys = [s.vkey for s in plan.sites]
    plan.paths, plan.nin, plan.parts = paths, nin, parts
    plan.waits = tuple([i for i, part in enumerate(parts) if part[3]])
    plan.sides = [(i, e) for i, where in enumerate(edges) for e, d in enumerate(where)
                  if d == -1]
    # -2: an edge out of the region to a leaf's AccumulateGrad (it runs at once either
    # way; any other node the region feeds may be made ready by it)
    plan.edges = [tuple(-2 if d == -1 and nxt[e][0].__class__ is AccumulateGrad else d
                        for e, d in enumerate(where))
                  for where, nxt in zip(edges, (cur._next for cur in region))]
    # a node of the plan's own site has edges where the plan's had (the site fixes which
    # arguments are Tensors and ``want``, which have an edge; ``_replay`` checks others'),
    # and ``_replay``'s first loop followed each path: the other edges into the region and
    # those leaving it are left
    plan.checks = [(i, e, d) for i, where in enumerate(plan.edges) for e, d in enumerate(where)
                   if d is not None and (d < 0 or paths[d] != (i, e))]
    # the nodes outside that the region feeds (as the first edge to each, with the count of
    # its edges from the region): one made ready may make a fresh walk longer
    outs = {}
    for i, e in plan.sides:
        c = region[i]._next[e][0]
        if c.__class__ is not AccumulateGrad:
            outs[c] = (i, e, outs[c][2] + 1) if c in outs else (i, e, 1)
    plan.outs = list(outs.values())
    key = (region[0]._site.op, region[0]._site.vkey)
    with _lock:
        if len(_plans) > 4 * CACHE_SIZE:
            _plans.clear()
        kept = _plans.get(key)
        if kept is None:
            _plans[key] = [plan]
        else:  # regions from nodes of the same op and vjp key: a few shapes of graph
            del kept[3:]
            kept.append(plan)


def _move_up(plans, k, plan):
    """``plan``, at ``k`` in ``plans``, swapped with the plan before it: under the lock,
    as another thread's ``_remember`` may have shortened the list since ``plan`` matched
    (then it is left as it is)."""
    with _lock:
        if k < len(plans) and plans[k] is plan:
            plans[k - 1], plans[k] = plan, plans[k - 1]


def _replay(plan, node, g, deps, top):
    """``(region, exact)``: ``plan``'s nodes from ``node`` now, and ``exact``, the plan's
    ``NodeSite``s where each node holds its own (nodes of the op sites the plan was made
    from, ``lazy.Site``: the same argument types), else None; None where its region is
    not what the ready queue would run next from ``node``. The graph has the plan's shape
    there: every path leads to a hook-free node of the plan's op and vjp key, whose
    undelivered edges are all the region's own (so it is ready when its turn comes),
    sequence numbers fall along the region (each its ready nodes' highest: the queue's
    order) and stay above the queued ``top``, and no node outside it that the region
    makes ready outranks its last. A region shorter than a fresh walk would make (a hook
    gone since) is a prefix of it: the queue runs the rest next, as node by node."""
    if g.shape != plan.shape or g.dtype != plan.dtype:
        return None
    # NOTE: per node of every replayed region: one look at each slot, no dict built
    region = [node]
    sites, nin = plan.sites, plan.nin
    exact = node._site is sites[0]  # every node's site the plan's own: no compare
    last = node._seq
    try:
        for i in range(1, len(sites)):
            j, e = plan.paths[i]
            cur = region[j]._next[e][0]
            # ``_plain_next``, inlined: of the plan's op (its class, ``jit`` and output
            # count go with the op and its vjp key, checked here), the rest per node:
            # freed, any hook (a kind the table allowed after the first would only end
            # the replay early), saved through hooks; not an op node: AttributeError
            if (site := cur._site) is not sites[i]:  # another site: the same op and key?
                if site.op is not plan.ops[i] or site.vkey != plan.vkeys[i]:
                    return None
                exact = False
            if cur._freed or cur._hooks is not None or cur._has_saved == 2:
                return None
            seq = cur._seq
            if seq >= last or deps[cur] != nin[i]:
                return None
            region.append(cur)
            last = seq
    except (IndexError, TypeError, AttributeError):
        # fewer edges, no edge where the plan had one, a node of no op there
        return None
    if len(region) > 1 and -last >= top:
        return None
    if not exact:  # a node of another site: its edges where the plan's nodes had them?
        for cur, where in zip(region, plan.edges):
            nxt = cur._next
            if len(nxt) != len(where):
                return None
            for e, d in zip(nxt, where):
                if (d is None) is not (e is None):
                    return None
    # the edges the paths above did not follow (``plan.checks``): into the region, out
    risky = None
    for i, e, d in plan.checks:
        c = region[i]._next[e][0]
        if d >= 0:
            if c is not region[d]:
                return None
        elif (c.__class__ is AccumulateGrad) is not (d == -2):
            return None
        elif d == -1 and c._seq >= last:
            risky = [c] if risky is None else risky + [c]
    for c in risky or ():  # outranks the last node: only while it cannot become ready
        if deps[c] == sum(1 for cur in region for e in cur._next
                          if e is not None and e[0] is c):
            return None
    if len(region) < MAX_LEN:
        # where a fresh walk would go on (a longer chain behind the same nodes, a hook
        # gone), it is taken instead: the plan's region would be a prefix of it
        best = None
        for i, e, k in plan.outs:
            c = region[i]._next[e][0]
            if deps[c] == k and (best is None or c._seq > best._seq):
                best = c
        if best is not None and -best._seq < top and _plain_next(best):
            return None
    return region, sites if exact else None


def _replayed_parts(plan, region, saved, buffers, exact):
    """``_parts`` for a replayed ``plan``: its parts as they were, unless a node's count of
    leading arguments or whether a gradient waits for it differs now. ``exact``: every
    node holds the plan's own ``NodeSite``, so its count is the plan's (the site fixes
    what its nodes save)."""
    sides = [region[i]._next[e] for i, e in plan.sides]
    ext = []
    parts = plan.parts
    if exact:
        # then only a gradient waiting for a later node changes a part (the first node's
        # buffer was taken when it ran), as one that waited when the plan was made and
        # waits no more (``plan.waits``, their positions). NOTE: the region's nodes with
        # a buffer are found in C (most have none), not by a test per node
        found = buffers.keys() & region
        if not found and not plan.waits:
            return sides, parts, ext
        first = region[0]
        now = tuple([i for i in sorted([region.index(c) for c in found if c is not first])
                     if _take(region[i], buffers, ext)])
        if now == plan.waits:
            return sides, parts, ext
        fresh = list(parts)
        for i in set(now).symmetric_difference(plan.waits):
            part = parts[i]
            fresh[i] = (part[0], part[1], part[2], i in now)
        return sides, fresh, ext
    fresh = None
    for i, cur in enumerate(region):
        nv = len(saved[i])
        waiting = _take(cur, buffers, ext) if i and cur in buffers else False
        part = parts[i]
        if fresh is not None or waiting is not part[3] or nv != part[1]:
            if fresh is None:
                fresh = list(parts[:i])
            fresh.append((part[0], nv, part[2], waiting))
    return sides, parts if fresh is None else fresh, ext


def _program(g, parts, lays, plan=None):
    """The region's compiled program, or None while it runs node by node (its first
    sighting). ``lays``: the saved layout values it rebuilds (``fusion_layout``); ``plan``: a
    replayed plan of these ``parts`` whose program rebuilt others, which takes this one
    (the forward leaves out other values now: its segment compiled after the plan was
    made, or a read ran it)."""
    key = (g.shape, g.dtype, tuple(parts), lays)
    with _lock:  # backward may run in several threads at once
        fn = _compiled.get(key)
        if fn is not None:
            _compiled.move_to_end(key)
        elif key in _seen or not tiered.is_tiered_execution_enabled() and \
                _cold(parts) >= 2:
            # its second sighting, or a first one where node by node would compile
            # programs of nodes never run: one compile of the region is cheaper (with
            # tiered execution, nodes never run cost a trace, not a compile)
            _seen.pop(key, None)
            fn = _compiled[key] = tiered.jit(_region_fn(parts, lays))
            if len(_compiled) > CACHE_SIZE:
                _compiled.popitem(last=False)
        else:
            if len(_seen) > 16 * CACHE_SIZE:
                _seen.clear()
            _seen[key] = True
    if plan is not None and fn is not None:  # (one store: another thread reads the pair)
        plan.fn, plan.sig = (lays, fn), None
    return fn


def _region_fn(parts, lays):
    """The region's composition as one function to trace: ``(g, *earlier gradients,
    *saved values) -> its gradients``, each layout value left out (``lays``) rebuilt."""
    raw = [(v.fwd, nv, d, w) for v, nv, d, w in parts]
    if not lays:
        return lambda g, *args: _walk(raw, g, args)
    nx = sum(1 for p in parts if p[3])
    return lambda g, *args: _walk(raw, g, _layout.laid(args, nx, lays))


def _region(node, deps, heap, exec_info, captures):
    """The nodes the ready queue would run from ``node`` on while each is hook-free: the
    engine's scheduling replayed on dependency counts (a node is ready once every edge
    into it delivered; the highest sequence number runs first; an already queued node,
    ``heap``'s top, outranks a node made ready after it at the same priority). Forks and
    joins stay inside; a leaf's ``AccumulateGrad`` does not stop it (only its hooks see
    it, and they run in the same order after). At most ``MAX_LEN`` nodes."""
    top = heap[0][0] if heap else 1  # the queued node's -priority: lower runs sooner
    region = []
    left = {}   # nodes fed from the region: dependencies not yet delivered
    ready = []  # (-priority, order made ready, node) of nodes the region made ready
    # NOTE: per node of every fused backward. While one node is ready (a chain) it waits
    # in ``one``, not the heap: the heap's two calls per node are paid at forks only
    one = None
    made = n = 0
    cur = node
    while True:
        region.append(cur)
        n += 1
        for e in cur._next:
            if e is None:
                continue
            child = e[0]
            if child.__class__ is AccumulateGrad or (
                    exec_info is not None and child not in exec_info
                    and not (captures and child in captures)):
                continue  # runs at once either way, or is never run
            d = (left[child] if child in left else deps[child]) - 1
            left[child] = d
            if d == 0:
                made += 1
                # NOTE: ``_seq``, the priority of every node but AccumulateGrad (skipped above)
                entry = (-child._seq, made, child)
                if one is None and not ready:
                    one = entry
                else:
                    if one is not None:
                        heapq.heappush(ready, one)
                        one = None
                    heapq.heappush(ready, entry)
        first = one if one is not None else ready[0] if ready else None
        if first is None or n == MAX_LEN or first[0] >= top:
            return region
        cur = first[2]
        if not _plain_next(cur) or (exec_info is not None and (
                cur not in exec_info or (captures and cur in captures))):
            return region
        if one is not None:
            one = None
        else:
            heapq.heappop(ready)


def _cold(parts):
    """How many programs running the region node by node would compile: its distinct vjps
    with no compiled program yet (for any shape)."""
    return len({v for v, _, _, _ in parts if not _compiled_once(v.forward_fn(()))})


def _compiled_once(fn):
    size = getattr(fn, "_cache_size", None)  # NOTE: private; without it, assume compiled
    return size is None or size() > 0


def _walk(parts, g, args):
    """The region's composition, in run order: each node's vjp on its summed gradient;
    results for later nodes of the region are summed into theirs (in delivery order), the
    others collected. ``parts``: (vjp function, number of leading arguments, where each
    result goes: a node's index or -1, whether an earlier gradient waits);
    ``args``: the earlier gradients, then every node's leading arguments."""
    acc = [None] * len(parts)
    acc[0] = g
    pos = 0
    for i, part in enumerate(parts):
        if part[3]:
            acc[i] = args[pos]
            pos += 1
    outs = []
    for i, (f, nv, dests, _) in enumerate(parts):
        # NOTE: node by node, a vjp's first tier keeps its results in NumPy for the next
        # node (``tiered.Program.host``); what leaves the region is put on the device
        a = (*args[pos:pos + nv], acc[i])
        res = f.host(*a) if f.__class__ is _PROGRAM else f(*map(_device, a))
        pos += nv
        acc[i] = None
        for j, x in zip(dests, res):
            if j < 0:
                outs.append(_device(x))
            else:
                acc[j] = x if acc[j] is None else _device(acc[j]) + _device(x)
    return outs


_PROGRAM, _device = tiered.Program, tiered.device
_PENDING = Pending

def _forget():
    """A new default dtype: ops make their vjps again (``_ops/op.py``); plans holding the
    old ones are dropped."""
    _plans.clear()


_dtype.ON_DEFAULT_CHANGE.append(_forget)
