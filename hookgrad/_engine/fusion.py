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

from .._tensor import Tensor
from .._autograd import hooks as _hooks
from .._autograd.graph import AccumulateGrad
from .._ops.op_node import OpNode, vjp_op
from .._ops import tiered
from .._ops.setting import Setting

MAX_LEN = 32      # nodes per fused program: bounds compile time and cache size
CACHE_SIZE = 256  # compiled regions kept (least recently used dropped)
_state = {"enabled": True}
_seen = {}        # region keys run once, node by node
_compiled = collections.OrderedDict()  # region key -> its jitted program
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
    kind is None), nothing saved through saved-tensor hooks, a jittable op of one output.

    NOTE: run once per node of every backward. The test is written out from the table as
    one expression (``node.a is None and node.b is None and ...``): CPython specializes
    each slot read, where an ``operator.attrgetter`` call and the comparison of its tuple
    cost 2.5 times as much, and each further Python call per node costs its frame."""
    attrs = [k.node_attr for k in _hooks.KINDS if k.fused in fused]
    if not all(a.isidentifier() for a in attrs):  # the table's own names, never a user's
        raise ValueError(f"not attribute names: {attrs}")
    src = ("lambda node: node.__class__.__base__ is OpNode and not node._freed and "
           + "".join(f"node.{a} is None and " for a in attrs)
           + "node._has_saved != 2 and node._op.jit and node._meta.__class__ is not tuple")
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
    region = _region(node, deps, heap, exec_info, captures)
    # NOTE: per node of every fused backward: dict and list methods are avoided where an
    # operator does (``in``, subscripts), as in ``_region``
    saved = [None] * len(region)
    for i, cur in enumerate(region):
        try:
            saved[i] = cur._unpack(False, True)  # first-tier values stay in NumPy
        except Exception:  # noqa: BLE001 - raised again when the engine runs the node
            if not i:
                raise
            # a saved value changed in place (or freed): node by node, the nodes before
            # it run first (their leaves accumulate), then it raises. So they run as the
            # region, and it raises when the queue reaches it
            del region[i:]
            break
    index = {n: i for i, n in enumerate(region)}
    sides = []  # edges leaving the region, in delivery order
    parts = []  # per node: (vjp op, number of leading arguments, where each result goes,
    flat = []   # whether an earlier gradient waits in its buffer)
    ext = []    # those earlier gradients: node by node, they are summed first
    for i, cur in enumerate(region):
        try:  # (no call once the vjp is made: nearly always)
            vop = cur._op._vjp_cache[cur._vkey]
        except KeyError:
            vop = vjp_op(cur)
        vals = saved[i]
        if not keep_graph and cur._has_saved:  # what it saved now lives in ``flat``:
            # ``cur._release()``, inlined (a call per node of every fused backward)
            cur._freed = True
            cur._stored = cur._out_saved = cur._extra = None
        dests = []
        for e in cur._next:
            if e is not None:
                if e[0] in index:
                    dests.append(index[e[0]])
                else:
                    dests.append(-1)
                    sides.append(e)
        waiting = False
        if i and cur in buffers:
            buf = buffers.pop(cur)
            if buf[0] is not None:
                waiting = True
                ext.append(buf[0]._data)
        parts.append((vop, len(vals), tuple(dests), waiting))
        flat.extend(vals)
    g = grad._data
    fn = _program(g, parts) if len(region) > 1 else None
    args = ext + flat
    # NOTE: tracing a large region costs more than running its nodes one by one: it is
    # traced and compiled in the background while they run (``call_ready`` gives None)
    outs = None if fn is None else fn.call_ready(g, *args)
    if outs is None:  # each vjp its own jitted call, as node-by-node execution makes them
        outs = _walk([(v._fwd_cache.get(()) or v.forward_fn(()), nv, d, w)
                      for v, nv, d, w in parts], g, args)
    return list(zip(sides, map(Tensor._wrap, outs)))


def _program(g, parts):
    """The region's compiled program, or None while it runs node by node (its first
    sighting)."""
    key = (g.shape, g.dtype, tuple(parts))
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
            raw = [(v.fwd, nv, d, w) for v, nv, d, w in parts]
            fn = _compiled[key] = tiered.jit(lambda g, *args: _walk(raw, g, args))
            if len(_compiled) > CACHE_SIZE:
                _compiled.popitem(last=False)
        else:
            if len(_seen) > 16 * CACHE_SIZE:
                _seen.clear()
            _seen[key] = True
    return fn


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
        if cur._want is None:
            cur._keys()
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
