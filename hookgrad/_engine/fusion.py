"""Fused backward: a chain of hook-free op nodes runs as one jitted XLA program.

Node by node, the backward of a chain of N ops is N JAX dispatches and N small kernels.
When nothing can observe the nodes in between (no hooks of any kind on them, no
saved-tensor hooks, not ``create_graph``), the engine hands the chain to ``run``, which
calls the composition of their vjps once; XLA then also fuses the elementwise kernels.
The first sighting of a chain runs node by node, through its nodes' own programs, so a
graph built once compiles no chain; from the second sighting on, the chain is jit-compiled
and cached. Except when node by node would itself compile two or more programs (vjps never
run before: a fresh process's first backward): compiling the chain at once then costs
fewer compilations (as much XLA work for the ops, less per program), and no node programs
that later backwards would not use.

What a user can see stays PyTorch's: hooked nodes never join a chain; a chain only grows
to a node that the ready queue would run next anyway (nothing ready with a higher
sequence number); gradients leaving the chain are delivered afterwards in the order
node-by-node execution would deliver them, and only leaves' ``AccumulateGrad`` may
receive them from inside the chain (it runs right after in either case, before any
other node).
"""
import collections
import threading

from .._tensor import Tensor
from .._autograd import hooks as _hooks
from .._autograd.graph import AccumulateGrad
from .._ops.op_node import OpNode, vjp_op
from .._ops import tiered
from .._ops.setting import Setting

MAX_LEN = 32      # nodes per fused program: bounds compile time and cache size
CACHE_SIZE = 256  # compiled chains kept (least recently used dropped)
_state = {"enabled": True}
_seen = {}        # chain keys run once, node by node
_compiled = collections.OrderedDict()  # chain key -> its jitted program
_lock = threading.Lock()


class set_backward_fusion(Setting):
    """Turn fused backward of hook-free node chains on or off (on by default).

    Takes effect at once; as a context manager it restores the previous setting on exit.
    Fusion changes no gradient beyond float rounding and no hook order; turn it off to
    time or debug node-by-node execution::

        >>> with hookgrad.autograd.set_backward_fusion(False):
        ...     loss.backward()
    """

    _state = _state


def is_backward_fusion_enabled():
    return _state["enabled"]


def _holding(fused):
    """Whether a node holds hooks of the kinds a chain's node may carry as ``fused`` says
    (``_autograd.hooks.KINDS``)."""
    attrs = tuple(k.node_attr for k in _hooks.KINDS if k.fused == fused)

    def holds(node):  # NOTE: twice per node of every backward: a loop, not a generator
        for a in attrs:
            if getattr(node, a) is not None:
                return True
        return False
    return holds


_never_fused, _first_only = _holding(_hooks.NEVER), _holding(_hooks.FIRST_ONLY)


def _plain(node, first):
    """Whether ``node`` may run inside a chain. Checked at backward: hooks come any time.
    The chain's first node may have had pre-hooks (they have run); none may have post-hooks."""
    if node.__class__.__base__ is not OpNode or node._freed or _never_fused(node):
        return False
    if not first and _first_only(node):
        return False
    return node._has_saved != 2 and node._op.jit and node._meta.__class__ is not tuple


def run(node, grad, deps, buffers, heap, exec_info, captures, keep_graph):
    """Run the ready ``node`` on ``grad`` (its output's gradient) together with the chain
    of hook-free nodes behind it. Returns the ``(edge, gradient)`` pairs leaving the chain,
    in node-by-node delivery order, or None when ``node`` itself cannot run here."""
    if not _plain(node, True):
        return None
    top = -heap[0][0] if heap else -1  # priority of the next ready node
    n = 0
    sides = []  # edges leaving the chain, in delivery order
    parts = []  # per node: (vjp op, number of leading arguments, route)
    flat = []
    cur = node
    while True:
        if cur._want is None:
            cur._keys()
        vop = cur._op._vjp_cache.get(cur._vkey) or vjp_op(cur)
        vals = cur._unpack(False)
        if not keep_graph:  # what it saved now lives in ``flat``
            cur._release()
        n += 1
        first = len(sides)
        nxt = None
        route = -1  # which of cur's gradients feeds the next node of the chain
        k = 0
        for e in cur._next:
            if e is not None:
                if e[0].__class__ is not AccumulateGrad:
                    # a second non-leaf edge is a fork: the chain ends here
                    nxt, route = (e[0], k) if route < 0 else (None, route)
                sides.append(e)
                k += 1
        if (nxt is None or n == MAX_LEN or deps.get(nxt) != 1 or nxt in buffers
                or nxt._seq < top or not _plain(nxt, False)
                or (exec_info is not None and (nxt not in exec_info
                                               or (captures and nxt in captures)))):
            route = -1
        else:
            del sides[first + route]  # the edge the chain continues on
        parts.append((vop, len(vals), route))
        flat.extend(vals)
        if route < 0:
            break
        cur = nxt
    g = grad._data
    fn = None
    if n > 1:
        key = (g.shape, g.dtype, tuple(parts))
        with _lock:  # backward may run in several threads at once
            fn = _compiled.get(key)
            if fn is not None:
                _compiled.move_to_end(key)
            elif key in _seen or not tiered.is_tiered_execution_enabled() and \
                    _cold(parts) >= 2:
                # its second sighting, or a first one where node by node would compile
                # programs of nodes never run: one compile of the chain is cheaper (with
                # tiered execution, nodes never run cost a trace, not a compile)
                _seen.pop(key, None)
                raw = [(v.fwd, nv, r) for v, nv, r in parts]
                fn = _compiled[key] = tiered.jit(lambda g, *flat: _walk(raw, g, flat))
                if len(_compiled) > CACHE_SIZE:
                    _compiled.popitem(last=False)
            else:
                if len(_seen) > 16 * CACHE_SIZE:
                    _seen.clear()
                _seen[key] = True
    if fn is not None and not fn.ready(g, *flat):
        # NOTE: tracing a long chain costs more than running its nodes one by one: it
        # is traced and compiled in the background, node by node meanwhile
        fn = None
    if fn is not None:
        outs = fn(g, *flat)
    else:  # each vjp its own jitted call, as node-by-node execution makes them
        outs = _walk([(v._fwd_cache.get(()) or v.forward_fn(()), nv, r) for v, nv, r in parts],
                     g, flat)
    return list(zip(sides, map(Tensor._wrap, outs)))


def _cold(parts):
    """How many programs running the chain node by node would compile: its distinct vjps
    with no compiled program yet (for any shape)."""
    return len({v for v, _, _ in parts if not _compiled_once(v.forward_fn(()))})


def _compiled_once(fn):
    size = getattr(fn, "_cache_size", None)  # NOTE: private; without it, assume compiled
    return size is None or size() > 0


def _walk(parts, g, flat):
    """The chain's composition: each vjp's continuing gradient feeds the next; the others
    are collected. ``parts``: (vjp function, number of leading arguments, route)."""
    outs = []
    pos = 0
    for f, nv, r in parts:
        res = f(*flat[pos:pos + nv], g)
        pos += nv
        for k, x in enumerate(res):
            if k == r:
                g = x
            else:
                outs.append(x)
    return outs
