"""The backward engine: graph tasks, PyTorch's node order, hook calls, callbacks.

A graph task counts, for every node reachable from the roots, how many edges lead into
it (an iterative walk: no recursion, so 100k-deep graphs are fine). A node is ready when
all of them have delivered; ready nodes run highest sequence number first, with
``AccumulateGrad`` nodes first of all, as in PyTorch's ready queue. For each node:

    tensor pre-hooks -> retain_grad hooks -> node pre-hooks -> backward -> node post-hooks

and the results are summed into the input buffers of the next nodes. A leaf's
``AccumulateGrad`` runs the leaf's tensor hooks, adds into ``.grad``, then its
post-accumulate-grad hooks (what each hook gets and may return: ``hooks.py``, shared with
functional mode). Callbacks queued during the task run when it ends. ``run_backward`` is
``_plan`` (the task), ``_execute`` (the ready queue), ``_run_node`` (one node, in the order
above), ``_deliver`` (into the next nodes' buffers) and ``_finish`` (captured gradients).
"""
import heapq
from heapq import heappush
import itertools
import logging
import threading

import jax.numpy as jnp

from .. import _mode
from . import fusion
from .._ops.op_node import DISPATCH_MODES, OpNode
from .._ops import derivatives, tiered
from .._tensor import Tensor
from .._autograd import anomaly_mode, graph
from .._autograd import grad_mode
from .._autograd import hooks
from .._autograd.graph import AccumulateGrad, GradientEdge, log

_task_ids = itertools.count()


class _Local(threading.local):
    def __init__(self):
        self.tasks = []      # stack of running GraphTasks (reentrant backward)
        self.node = None     # the node being executed


_local = _Local()


class GraphTask:
    __slots__ = ("id", "callbacks", "cleanups", "exec_info", "found", "_nodes", "keep_graph",
                 "captured_nodes", "roots")

    def __init__(self, keep_graph):
        self.id = next(_task_ids)
        self.callbacks = []
        self.cleanups = []
        self.exec_info = None  # None: run everything; else set of nodes to run
        self.found = ()        # the nodes the roots reach (``_discover``'s list)
        self._nodes = None
        self.keep_graph = keep_graph
        self.captured_nodes = ()
        self.roots = ()

    @property
    def nodes(self):
        """The set of the nodes the roots reach, made when first asked (``inputs=``,
        ``will_engine_execute_node``): a plain backward never asks."""
        if self._nodes is None:
            self._nodes = set(self.found)
        return self._nodes


class graph_task:
    """The running graph task of this thread, for a backward that hookgrad's engine runs
    or one that JAX runs (functional mode)::

        with graph_task() as task:   # current_graph_task_id(), queue_callback see it
            ...                      # on a normal exit its queued callbacks run

    ``open()``/``close(ok)`` do the same for a backward whose start and end are two
    callbacks (a ``jax.custom_vjp`` at each end). Cleanups run on every exit.
    """

    def __init__(self, keep_graph=True, task=None):
        self.task = task if task is not None else GraphTask(keep_graph)

    def open(self):
        _local.tasks.append(self.task)
        return self.task

    def close(self, ok=True):
        task = self.task
        try:
            if ok:
                i = 0
                while i < len(task.callbacks):  # callbacks may queue callbacks
                    task.callbacks[i]()
                    i += 1
        finally:
            tasks = _local.tasks
            if tasks and tasks[-1] is task:
                tasks.pop()
            elif task in tasks:
                tasks.remove(task)
            for fn in task.cleanups:
                fn()

    __enter__ = open

    def __exit__(self, exc_type, *_):
        self.close(exc_type is None)


def running_task():
    """The graph task running in this thread, or None."""
    return _local.tasks[-1] if _local.tasks else None


# --------------------------------------------------------------------------- introspection


def current_graph_task_id():
    """Id of the graph task running in this thread, -1 outside backward."""
    return _local.tasks[-1].id if _local.tasks else -1


def current_autograd_node():
    return _local.node


def will_engine_execute_node(node):
    """Whether the running backward will execute ``node`` (a Node)."""
    if not _local.tasks:
        raise RuntimeError("_get_should_execute_nodes should only be called during the backward "
                           "pass")
    task = _local.tasks[-1]
    if len(task.roots) == 1 and task.roots[0][0] is node:
        # PyTorch runs a backward of one root from that root's node itself, with no graph
        # root before it, and does not count it among the nodes the task executes
        return False
    if task.exec_info is None:  # backward() without inputs: every node of the graph
        return node in task.nodes
    # NOTE: a captured input the roots do not reach is not executed (PyTorch's exec_info
    # lacks it): False, not the leaf error
    if node in task.captured_nodes and node in task.nodes:
        if not any(e is not None for e in node._next):
            raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are "
                               "currently running autograd.grad(). This is currently not "
                               "supported.")
        return True
    return node in task.exec_info


def queue_callback(fn):
    """Run ``fn()`` when the current backward finishes (Variable._execution_engine)."""
    if not _local.tasks:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _local.tasks[-1].callbacks.append(fn)


def queue_cleanup(fn):
    """Internal: run ``fn()`` when the current graph task ends, even after an error."""
    if _local.tasks:
        _local.tasks[-1].cleanups.append(fn)


class _ExecutionEngine:
    def queue_callback(self, fn):
        queue_callback(fn)


execution_engine = _ExecutionEngine()


# --------------------------------------------------------------------------- leaves


def accumulate_grad(node, grads, create_graph):
    """AccumulateGrad's work: add ``grads[0]`` into ``variable.grad``, then post-acc hooks.

    When it sets a missing ``.grad``, ``grads[0]`` becomes that ``.grad``: PyTorch's
    ``.grad`` then shares the incoming gradient's storage, so the node's post-hooks see
    what the post-accumulate-grad hooks did to it."""
    var = node._var()
    grad = grads[0]
    if var is None or grad is None:
        return
    old = var._grad
    if DISPATCH_MODES and not create_graph and (old is None or not old._requires_grad):
        # as PyTorch's, ops the modes see: the gradient detached or copied, or added in place
        if old is None:
            var._grad = grads[0] = derivatives.accumulated(grad, var)
        else:
            old.add_(grad)
    elif old is None:
        if create_graph and grad._requires_grad:
            # as PyTorch: .grad is a copy of the gradient, recorded (CopyBackwards)
            new = Tensor._wrap(grad._data).copy_(grad)
        elif create_graph:
            new = grad
        else:
            new = grads[0] = Tensor._wrap(grad._data)
        var._grad = new
    elif create_graph or old._requires_grad:
        var._grad = old + grad
    else:
        # in place, as PyTorch: references to .grad (optimizers, users) see the sum
        old._data = old._data + grad._data
        old._version += 1
    for kind in hooks.FIRES_ACCUMULATED:
        if getattr(var, kind.tensor_attr):
            kind.rule(var)


# --------------------------------------------------------------------------- the task


def _root_edge(t, i):
    if isinstance(t, GradientEdge):
        return (t.node, t.output_nr)
    e = t._edge()
    if e is None:
        why = (" (it is an output of a hookgrad.compile step, and a compiled step's outputs "
               "are detached: call backward() inside the step, or compile the model "
               "instead of the step)") if getattr(t, "_compiled_out", False) else ""
        raise RuntimeError(f"element {i} of tensors does not require grad and does not have a "
                           f"grad_fn{why}")
    return e


def _discover(roots):
    """Dependency counts of every node reachable from ``roots`` (iterative), and the list
    of those nodes."""
    deps = {}
    found = list(dict.fromkeys(node for node, _ in roots))
    first = set(found)
    # NOTE: per node of every backward. A node is new when it has no count yet (or is a
    # root); ``found``, iterated while it grows, is the work list. (``in`` and
    # subscripts: no method call per edge)
    for node in found:
        for e in node._next:
            if e is not None:
                child = e[0]
                if child in deps:
                    deps[child] += 1
                else:
                    deps[child] = 1
                    if child not in first:
                        found.append(child)
    return deps, found


def _needed(seen, targets):
    """Nodes on a path from a root to one of ``targets`` (iterative post-order); a target
    the roots do not reach is not run (PyTorch's exec_info)."""
    needed = {t for t in targets if t in seen}
    # repeat relaxation in reverse topological order: children before parents
    order = _topo(seen)
    for node in reversed(order):
        if node in needed:
            continue
        for e in node._next:
            if e is not None and e[0] in needed:
                needed.add(node)
                break
    return needed


def _topo(nodes):
    """Nodes in topological order (parents before children), iteratively."""
    indeg = {n: 0 for n in nodes}
    for n in nodes:
        for e in n._next:
            if e is not None and e[0] in indeg:
                indeg[e[0]] += 1
    ready = [n for n, d in indeg.items() if d == 0]
    order = []
    while ready:
        n = ready.pop()
        order.append(n)
        for e in n._next:
            if e is not None and e[0] in indeg:
                indeg[e[0]] -= 1
                if indeg[e[0]] == 0:
                    ready.append(e[0])
    return order


class _Run:
    """The state of one backward while it runs: what each node still waits for, the
    gradients buffered for it, the ready queue, and what ``autograd.grad`` captures."""

    __slots__ = ("task", "deps", "buffers", "heap", "counter", "captures", "captured",
                 "keep_graph", "create_graph", "fuse", "debug", "nan_check", "node", "prev_node",
                 "plain_sum")


def run_backward(roots, grad_roots, keep_graph, create_graph, inputs=None, accumulate=True,
                 allow_unused=False):
    """Run one graph task. Returns the captured gradients of ``inputs`` when
    ``accumulate`` is False (``autograd.grad``)."""
    run = _plan(roots, grad_roots, keep_graph, create_graph, inputs, accumulate)
    prev_grad = grad_mode._state.enabled
    grad_mode._state.enabled = create_graph
    try:
        with graph_task(task=run.task):
            try:
                _execute(run)
            except Exception:
                if anomaly_mode._state.enabled and run.node is not None:
                    anomaly_mode.warn_forward_trace(run.node)  # PyTorch names the failing node
                raise
    finally:
        _local.node = run.prev_node
        grad_mode._state.enabled = prev_grad
    return _finish(run, accumulate, allow_unused)


def _plan(roots, grad_roots, keep_graph, create_graph, inputs, accumulate):
    """The graph task of a backward from ``roots``: dependency counts, which nodes run
    (all, or those leading to ``inputs``), what is captured, the roots' buffers."""
    root_edges = [_root_edge(t, i) for i, t in enumerate(roots)]
    task = GraphTask(keep_graph)
    task.roots = root_edges
    run = _Run()
    run.task = task
    run.deps, task.found = _discover(root_edges)
    run.captures = None
    input_edges = None
    if inputs is not None:
        input_edges = [_input_edge(t, accumulate) for t in inputs]
        targets = [e[0] for e in input_edges]
        run.captures = captures = {}
        if accumulate:
            # backward(inputs=...): run what leads to the inputs; a non-leaf input retains
            # its gradient (_input_edge), which its node's tensor hooks have then seen
            task.exec_info = _needed(task.nodes, targets)
        else:
            task.exec_info = _needed(task.nodes, targets) - {
                e[0] for e in input_edges if not _feeds_other(e[0], targets)}
            for k, e in enumerate(input_edges):
                captures.setdefault(e[0], []).append((e[1], k))
            task.captured_nodes = set(captures)
    run.captured = [None] * (len(input_edges) if input_edges is not None else 0)
    run.buffers = buffers = {}
    for (node, nr), g in zip(root_edges, grad_roots):
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * _num_outputs(node)
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    run.counter = itertools.count()
    run.heap = [(-node._priority, next(run.counter), node) for node in buffers
                if run.deps.get(node, 0) == 0]
    heapq.heapify(run.heap)
    run.keep_graph, run.create_graph = keep_graph, create_graph
    run.debug = log.isEnabledFor(logging.DEBUG)
    anomaly = anomaly_mode._state.enabled
    run.nan_check = anomaly and anomaly_mode._state.check_nan
    # anomaly mode checks every node on its own; dispatch modes see every node's op
    run.fuse = fusion._state["enabled"] and not create_graph and not run.debug \
        and not _mode.state.compiling and not anomaly and not DISPATCH_MODES
    # gradients meeting are summed unseen (no graph recorded, no mode sees the add)
    run.plain_sum = not create_graph and not DISPATCH_MODES and not _mode.state.compiling
    run.node = None
    run.prev_node = _local.node
    return run


def _input_edge(t, accumulate):
    if isinstance(t, GradientEdge):
        return (t.node, t.output_nr)
    if accumulate:
        t.retain_grad()  # as PyTorch, for good: ``retains_grad`` stays True
    if not t.requires_grad:
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    return t._edge()


def _execute(run):
    """Ready nodes, highest priority first, until none is left."""
    heap, buffers, prev_node = run.heap, run.buffers, run.prev_node
    while heap:
        _, _, node = heapq.heappop(heap)
        run.node = node
        pairs = _run_node(run, node, buffers.pop(node))
        if pairs is not None:  # gradients meeting are summed under the node, as PyTorch's
            _deliver(run, pairs)
        _local.node = prev_node
    run.node = None  # an error in a callback is no node's


_NONE_AFTER = (False,) * len(hooks.FIRES_AFTER)


def _run_node(run, node, grads):
    """One node in the documented order: tensor pre-hooks, retain_grad hooks, node
    pre-hooks, backward, node post-hooks. Returns its ``(edge, gradient)`` pairs, or
    None for a node that is only captured (``autograd.grad``'s inputs) or has no edges."""
    exec_info = run.task.exec_info
    captures = run.captures
    if exec_info is not None and node not in exec_info:
        # only captured: its tensor hooks still run, as in PyTorch
        grads = hooks.run_before(node, grads, hooks.CAPTURED)
        for nr, k in captures.get(node, ()):
            run.captured[k] = grads[nr]
        return None
    if captures and node in captures:
        for nr, k in captures[node]:
            run.captured[k] = grads[nr]
    _local.node = node
    if run.debug:
        log.debug("Executing: %s with grad_outputs: [%s]", node.name(), ",".join(
            "None" if g is None else f"{g.dtype.name}{list(g.shape)}" for g in grads))
    held = node._hooks is not None   # most nodes: none of any kind, one slot read
    if held:
        grads = hooks.run_before(node, grads)
        had_post = [bool(getattr(node, kind.node_attr)) for kind in hooks.FIRES_AFTER]
    else:
        had_post = _NONE_AFTER
    no_grad_in = grads[0] is None if len(grads) == 1 else all(g is None for g in grads)
    if run.fuse and not no_grad_in and node.__class__.__base__ is OpNode:
        # an op node and the hook-free nodes behind it: one XLA call (a leaf's
        # AccumulateGrad, a Function's node: no call, fusion would refuse them)
        pairs = fusion.run(node, grads[0], run.deps, run.buffers, run.heap, exec_info,
                           captures, run.keep_graph)
        if pairs is not None:
            return pairs
    if no_grad_in and not isinstance(node, AccumulateGrad) \
            and not getattr(node, "_apply_undefined", False):  # Functions run
        grad_inputs = [None] * len(node._next)
    else:
        grad_inputs = node._apply(grads, run.create_graph)
    # NOTE: a pre-hook, or an unpack hook while the node ran, may have registered one
    if held or node._hooks is not None:
        grad_inputs = _run_after(run, node, grad_inputs, grads, had_post)
    if not run.keep_graph:
        node._release()
    if run.nan_check:
        anomaly_mode.check_nan(node, grad_inputs)
    # a leaf's AccumulateGrad has no edges: nothing to deliver
    return zip(node._next, grad_inputs) if node._next else None


def _run_after(run, node, grad_inputs, grads, had_post):
    """The node's hooks of the rows that fire after its backward, on ``grad_inputs``;
    ``had_post`` says, per row, whether the node held it before it ran."""
    for kind, had in zip(hooks.FIRES_AFTER, had_post):
        if getattr(node, kind.node_attr):
            if run.task.exec_info is not None:
                grad_inputs = _needed_only(run, node, grad_inputs)
            # NOTE: as PyTorch, post-hooks first registered while the node ran (an unpack
            # hook) get no grad_outputs: the node consumed them
            grad_inputs = kind.rule(node, grad_inputs, grads if had else ())
    return grad_inputs


# nodes whose one derivative formula serves a list of inputs: they compute all or none
_ALL_OR_NONE = frozenset({"CatBackward0", "StackBackward0"})


def _needed_only(run, node, grad_inputs):
    """What PyTorch's op node hands its post-hooks under ``inputs=``/``autograd.grad``: a
    gradient only for the inputs the graph task needs (None for the others), as it
    computes only those."""
    if not isinstance(node, OpNode) or node.name() in _ALL_OR_NONE:
        return grad_inputs
    exec_info, captures = run.task.exec_info, run.captures
    return [g if e is None or e[0] in exec_info or e[0] in captures else None
            for e, g in zip(node._next, grad_inputs)]


def _deliver(run, pairs):
    """Add a node's gradients into the buffers of the nodes they flow to; queue those
    that have now heard from every edge."""
    exec_info, captures, buffers, deps = run.task.exec_info, run.captures, run.buffers, run.deps
    for e, g in pairs:
        if e is None:
            continue
        child, nr = e
        if exec_info is not None and child not in exec_info and child not in captures:
            continue
        buf = buffers.get(child)
        if buf is None:
            # (a leaf's AccumulateGrad has one input: no look at its variable's array)
            buf = buffers[child] = [None] if child.__class__ is AccumulateGrad else \
                [None] * (len(child._out_meta()) or 1)
        if g is not None:
            old = buf[nr]
            buf[nr] = g if old is None else _sum(run, old, g)
        d = deps[child] - 1
        deps[child] = d
        if d == 0:
            heappush(run.heap, (-child._priority, next(run.counter), child))


_ADD = tiered.jit(jnp.add)


def _sum(run, old, g):
    """Two gradients meeting in a node's input buffer, summed. As a recorded, dispatched
    op (``+``) where that can be seen (``create_graph``, dispatch modes) or where the two
    differ in shape or dtype (PyTorch's promotion) or one is a Tensor subclass (its own
    ``__torch_function__``/``__torch_dispatch__`` keeps it); else one jitted add of their
    arrays: the op path would read XLA results back into NumPy for its host stage (a copy
    each), several times the add's own cost on a small model's backward."""
    if run.plain_sum and old.__class__ is Tensor and g.__class__ is Tensor:
        a, b = old._data, g._data
        if a.dtype == b.dtype and a.shape == b.shape:
            return Tensor._wrap(_ADD(a, b))
    return old + g


def _finish(run, accumulate, allow_unused):
    """``autograd.grad`` returns the captured gradients."""
    if accumulate:
        return None
    captured = run.captured
    if not allow_unused:
        for k, g in enumerate(captured):
            if g is None:
                raise RuntimeError(f"The differentiated Tensor at index {k} appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is "
                                   "the desired behavior.")
    return tuple(captured)


def _feeds_other(node, targets):
    """Whether an input's node must run because another input lies behind it."""
    stack = [e[0] for e in node._next if e is not None]
    seen = set()
    tset = set(targets)
    while stack:
        n = stack.pop()
        if n in tset:
            return True
        if n in seen:
            continue
        seen.add(n)
        stack.extend(e[0] for e in n._next if e is not None)
    return False


def _num_outputs(node):
    return len(node._out_meta()) or 1


# the graph reaches the engine through its slot (the graph sits below the engine)
graph.ENGINE.accumulate_grad = accumulate_grad
graph.ENGINE.current_graph_task_id = current_graph_task_id
graph.ENGINE.queue_cleanup = queue_cleanup
graph.ENGINE.will_engine_execute_node = will_engine_execute_node
