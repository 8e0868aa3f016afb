"""The backward engine: graph tasks, PyTorch's node order, hook dispatch, callbacks.

A graph task counts, for every node reachable from the roots, how many edges lead into
it (an iterative walk: no recursion, so 100k-deep graphs are fine). A node is ready when
all of them have delivered; ready nodes run highest sequence number first, with
``AccumulateGrad`` nodes first of all, as in PyTorch's ready queue. For each node:

    tensor pre-hooks -> retain_grad hooks -> node pre-hooks -> backward -> node post-hooks

and the results are summed into the input buffers of the next nodes. A leaf's
``AccumulateGrad`` runs the leaf's tensor hooks, adds into ``.grad``, then its
post-accumulate-grad hooks. Callbacks queued during the task run when it ends.
"""
import heapq
from heapq import heappush
import itertools
import logging
import threading

from .. import _dtype, _mode
from .._tensor import Tensor
from . import anomaly_mode
from . import grad_mode
from .graph import AccumulateGrad, GradientEdge, log

_task_ids = itertools.count()


class _Local(threading.local):
    def __init__(self):
        self.tasks = []      # stack of running GraphTasks (reentrant backward)
        self.node = None     # the node being executed


_local = _Local()


class GraphTask:
    __slots__ = ("id", "callbacks", "cleanups", "exec_info", "nodes", "keep_graph",
                 "captured_nodes", "roots")

    def __init__(self, keep_graph):
        self.id = next(_task_ids)
        self.callbacks = []
        self.cleanups = []
        self.exec_info = None  # None: run everything; else set of nodes to run
        self.nodes = set()
        self.keep_graph = keep_graph


# --------------------------------------------------------------------------- introspection


def current_graph_task_id():
    """Id of the graph task running in this thread, -1 outside backward."""
    return _local.tasks[-1].id if _local.tasks else -1


def current_autograd_node():
    return _local.node


def will_engine_execute_node(node):
    """Whether the running backward will execute ``node`` (or a GradientEdge's node)."""
    if not _local.tasks:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward "
                           "pass")
    if isinstance(node, GradientEdge):
        node = node.node
    task = _local.tasks[-1]
    if task.captured_nodes and isinstance(node, AccumulateGrad):
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are "
                           "currently running autograd.grad(). This is currently not supported.")
    if task.exec_info is not None:
        return node in task.exec_info or node in task.captured_nodes
    return node in task.nodes


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


# --------------------------------------------------------------------------- hook helpers


def _hook_name(hook):
    return getattr(hook, "__name__", None) or type(hook).__name__


def _check_single(orig, new, hook):
    if new is None:
        return orig
    if orig is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(new, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    if new is orig:
        return new
    if new._data.dtype != orig._data.dtype:
        raise RuntimeError(
            f"hook '{_hook_name(hook)}' has changed the type of value (was "
            f"{_type_str(orig)} got {_type_str(new)})")
    if new._data.shape != orig._data.shape:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")
    return new


def _type_str(t):
    return _dtype.legacy_type_name(t._data.dtype, "hookgrad")


def _check_tuple(orig, new, hook):
    if not isinstance(new, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(new).__name__}'")
    if len(new) != len(orig):
        raise RuntimeError(f"hook '{_hook_name(hook)}' has returned an incorrect number of "
                           f"values (got {len(new)}, but expected {len(orig)})")
    # in a returned tuple, None replaces the gradient (PyTorch: an undefined gradient)
    return [None if n is None else _check_single(o, n, hook) for o, n in zip(orig, new)]


def _call_tensor_pre_hooks(node, grads):
    tph = node._tensor_pre_hooks
    if tph:
        for nr, hooks in tph.items():
            for hook in tuple(hooks.values()):  # a snapshot: removal takes effect next time
                g = grads[nr]  # may be None (an unused output of a multi-output node)
                grads[nr] = _check_single(g, hook(g), hook)
    rh = node._retain_hooks
    if rh:
        for nr, hook in rh.items():
            hook(grads[nr])
    return grads


def _call_pre_hooks(node, grads):
    hooks = node._pre_hooks
    if hooks:
        for hook in tuple(hooks.values()):
            res = hook(tuple(grads))
            if res is not None:
                grads = _check_tuple(grads, res, hook)
    return grads


def _call_post_hooks(node, grad_inputs, grad_outputs):
    hooks = node._post_hooks
    if hooks:
        go = tuple(grad_outputs)
        for hook in tuple(hooks.values()):
            res = hook(tuple(grad_inputs), go)
            if res is not None:
                grad_inputs = _check_tuple(grad_inputs, res, hook)
    return grad_inputs


def accumulate_grad(node, grad, create_graph):
    """AccumulateGrad's work: add ``grad`` into ``variable.grad``, then post-acc hooks."""
    var = node._var()
    if var is None or grad is None:
        return
    old = var._grad
    if old is None:
        if create_graph:
            new = grad
        else:
            new = Tensor._wrap(grad._data)
        var._grad = new
    elif create_graph or old._requires_grad:
        var._grad = old + grad
    else:
        # in place, as PyTorch: references to .grad (optimizers, users) see the sum
        old._data = old._data + grad._data
        old._version += 1
    hooks = var._post_acc_hooks
    if hooks:
        for hook in tuple(hooks.values()):
            if hook(var) is not None:
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")


# --------------------------------------------------------------------------- the task


def _root_edge(t, i):
    if isinstance(t, GradientEdge):
        return (t.node, t.output_nr)
    e = t._edge()
    if e is None:
        raise RuntimeError(f"element {i} of tensors does not require grad and does not have a "
                           "grad_fn")
    return e


def _discover(roots):
    """Dependency counts of every node reachable from ``roots`` (iterative)."""
    deps = {}
    seen = set()
    stack = []
    for node, _ in roots:
        if node not in seen:
            seen.add(node)
            stack.append(node)
    while stack:
        node = stack.pop()
        for e in node._next:
            if e is None:
                continue
            child = e[0]
            deps[child] = deps.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return deps, seen


def _needed(seen, targets):
    """Nodes on a path from a root to one of ``targets`` (iterative post-order)."""
    needed = set(targets)
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


def run_backward(roots, grad_roots, keep_graph, create_graph, inputs=None, accumulate=True,
                 allow_unused=False):
    """Run one graph task. Returns the captured gradients of ``inputs`` when
    ``accumulate`` is False (``autograd.grad``)."""
    root_edges = [_root_edge(t, i) for i, t in enumerate(roots)]
    task = GraphTask(keep_graph)
    task.roots = root_edges
    deps, seen = _discover(root_edges)
    task.nodes = seen
    task.captured_nodes = ()
    captures = None
    input_edges = None
    if inputs is not None:
        input_edges = []
        for t in inputs:
            if isinstance(t, GradientEdge):
                input_edges.append((t.node, t.output_nr))
            else:
                if not t.requires_grad:
                    raise RuntimeError("One of the differentiated Tensors does not require grad")
                input_edges.append(t._edge())
        if accumulate:
            # backward(inputs=...): run what leads to the inputs' accumulators; capture the
            # gradients of non-leaf inputs to store into their .grad afterwards
            targets = [e[0] for e in input_edges]
            task.exec_info = _needed(seen, targets)
            captures = {}
            for k, (t, e) in enumerate(zip(inputs, input_edges)):
                if not isinstance(e[0], AccumulateGrad):
                    captures.setdefault(e[0], []).append((e[1], k))
        else:
            targets = [e[0] for e in input_edges]
            task.exec_info = _needed(seen, targets) - {e[0] for e in input_edges
                                                      if not _feeds_other(e[0], targets)}
            captures = {}
            for k, e in enumerate(input_edges):
                captures.setdefault(e[0], []).append((e[1], k))
            task.captured_nodes = set(captures)
    captured = [None] * (len(input_edges) if input_edges is not None else 0)

    buffers = {}
    for (node, nr), g in zip(root_edges, grad_roots):
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * _num_outputs(node)
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    counter = itertools.count()
    heap = []
    for node in buffers:
        if deps.get(node, 0) == 0:
            heapq.heappush(heap, (-node._priority, next(counter), node))

    _local.tasks.append(task)
    prev_grad = grad_mode._state.enabled
    grad_mode._state.enabled = create_graph
    prev_node = _local.node
    debug = log.isEnabledFor(logging.DEBUG)
    anomaly = anomaly_mode._state.enabled
    nan_check = anomaly and anomaly_mode._state.check_nan
    from .._ops import fusion
    # anomaly mode checks every node on its own
    fuse = fusion._state["enabled"] and not create_graph and not debug \
        and not _mode.state.compiling and not anomaly
    node = None
    try:
        while heap:
            _, _, node = heapq.heappop(heap)
            grads = buffers.pop(node)
            exec_info = task.exec_info
            if exec_info is not None and node not in exec_info:
                # only captured: its tensor hooks still run, as in PyTorch
                grads = _call_tensor_pre_hooks(node, grads)
                for nr, k in captures.get(node, ()):
                    captured[k] = grads[nr]
                continue
            if captures and node in captures:
                for nr, k in captures[node]:
                    captured[k] = grads[nr]
            _local.node = node
            if debug:
                log.debug("Executing: %s with grad_outputs: [%s]", node.name(), ",".join(
                    "None" if g is None else f"{g.dtype.name}{list(g.shape)}" for g in grads))
            if node._tensor_pre_hooks or node._retain_hooks:
                grads = _call_tensor_pre_hooks(node, grads)
            if node._pre_hooks:
                grads = _call_pre_hooks(node, grads)
            no_grad_in = grads[0] is None if len(grads) == 1 else all(g is None for g in grads)
            # an op node and the hook-free nodes behind it: one XLA call
            pairs = None
            if fuse and not no_grad_in:
                pairs = fusion.run(node, grads[0], deps, buffers, heap, exec_info, captures,
                                   keep_graph)
            if pairs is None:
                if no_grad_in and not isinstance(node, AccumulateGrad) \
                        and not getattr(node, "_apply_undefined", False):  # Functions run
                    grad_inputs = [None] * len(node._next)
                else:
                    grad_inputs = node._apply(grads, create_graph)
                if node._post_hooks:
                    grad_inputs = _call_post_hooks(node, grad_inputs, grads)
                if not keep_graph:
                    node._release()
                if nan_check:
                    anomaly_mode.check_nan(node, grad_inputs)
                pairs = zip(node._next, grad_inputs)
            _local.node = prev_node
            for e, g in pairs:
                if e is None:
                    continue
                child, nr = e
                if exec_info is not None and child not in exec_info and child not in captures:
                    continue
                buf = buffers.get(child)
                if buf is None:
                    buf = buffers[child] = [None] * (len(child._out_meta()) or 1)
                if g is not None:
                    buf[nr] = g if buf[nr] is None else buf[nr] + g
                d = deps[child] - 1
                deps[child] = d
                if d == 0:
                    heappush(heap, (-child._priority, next(counter), child))
        node = None  # an error in a callback is no node's
        i = 0
        while i < len(task.callbacks):  # callbacks may queue callbacks
            task.callbacks[i]()
            i += 1
    except Exception:
        if anomaly and node is not None:  # PyTorch warns with the failing node's forward
            anomaly_mode.warn_forward_trace(node)
        raise
    finally:
        _local.node = prev_node
        grad_mode._state.enabled = prev_grad
        _local.tasks.pop()
        for fn in task.cleanups:
            fn()

    if input_edges is not None and accumulate:
        for k, t in enumerate(inputs):
            g = captured[k]
            if g is not None and isinstance(t, Tensor) and t.grad_fn is not None:
                t._grad = g if t._grad is None else t._grad + g
    if not accumulate:
        for k, g in enumerate(captured):
            if g is None and not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been "
                                   "used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
        return tuple(captured)
    return None


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
