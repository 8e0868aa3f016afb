"""Engine introspection under the names PyTorch code reaches through ``torch._C``."""
import types
import weakref

from ._engine.engine import current_autograd_node as _current_autograd_node
from ._engine.engine import current_graph_task_id as _current_graph_task_id
from ._engine.engine import will_engine_execute_node as _engine_will_execute
from ._autograd.grad_mode import (_is_multithreading_enabled, _is_view_replay_enabled,
                                  _set_multithreading_enabled, _set_view_replay_enabled,
                                  is_grad_enabled)
from ._autograd.grad_mode import set_grad_enabled as _set_grad_enabled_cls
from ._autograd.error_node import _MetaNode
from ._autograd.graph import AccumulateGrad, Node, _InputMetadata, _Node
from ._ops.saved_names import SavedTensor
from ._torch_function import (DisableTorchFunction, DisableTorchFunctionSubclass,  # noqa: F401
                              _disabled_torch_function_impl)
from ._dispatch_key import DispatchKey, DispatchKeySet, _ExcludeDispatchKeyGuard  # noqa: F401


def _set_grad_enabled(mode):
    _set_grad_enabled_cls(mode)


def _log_api_usage_once(event):
    """Report one use of the API ``event`` to PyTorch's usage logger; hookgrad, like
    PyTorch with no logger installed, records nothing."""
    if not isinstance(event, str):
        raise TypeError(f"_log_api_usage_once(): argument 'event' must be str, not "
                        f"{type(event).__name__}")


def _get_tracing_state():
    return None


def _will_engine_execute_node(node):
    """Whether the running backward will execute ``node`` (a Node)."""
    if not isinstance(node, Node):
        raise RuntimeError("_will_engine_execute_node expects an grad_fn, but got "
                           f"{type(node).__name__}")
    return _engine_will_execute(node)


def _check_tensor(t, what):
    from ._tensor import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f"{what}: expected a Tensor, but got {type(t).__name__}")


class _WeakTensorRef:
    """A weak reference to a Tensor: ``expired()`` tells whether it was freed."""

    __slots__ = ("_ref",)

    def __init__(self, tensor):
        _check_tensor(tensor, "_WeakTensorRef")
        self._ref = weakref.ref(tensor)

    def expired(self):
        return self._ref() is None


def _current_graph_task_execution_order():
    """The nodes the running backward executes, in the order it runs them (a replay of the
    ready queue from the task's start: highest sequence number first, ``AccumulateGrad``
    before all). Needs ``set_multithreading_enabled(False)``, as in PyTorch.

    NOTE: PyTorch replays from the task's current counts, which equals this when asked
    from the first node's hooks (its usual use); later it may assert."""
    import heapq
    import itertools

    from ._engine.engine import _discover, running_task
    task = running_task()
    if task is None:
        raise RuntimeError("_current_graph_task_execution_order should only be called during "
                           "the backward pass")
    if _is_multithreading_enabled():
        raise RuntimeError(
            "get_current_graph_task_execution_order expects the current backward to be "
            "executed with multithreading disabled, e.g. by running:\n\n>>> with "
            "torch.autograd.set_multithreading_enabled(False):\n...     "
            "torch.autograd.grad(...)\n")
    deps, _ = _discover(task.roots)
    runs = None if task.exec_info is None else set(task.exec_info) | set(task.captured_nodes)
    counter = itertools.count()
    heap = []
    for node in dict.fromkeys(e[0] for e in task.roots):
        heapq.heappush(heap, (-node._priority, next(counter), node))
    order = []
    while heap:
        node = heapq.heappop(heap)[2]
        order.append(node)
        for e in node._next:
            if e is None or (runs is not None and e[0] not in runs):
                continue
            deps[e[0]] -= 1
            if deps[e[0]] == 0:
                heapq.heappush(heap, (-e[0]._priority, next(counter), e[0]))
    return order


# --------------------------------------------------------------------------- _C._autograd


def _saved_tensors_hooks_is_enabled():
    """False inside ``disable_saved_tensors_hooks``."""
    from ._autograd.saved import hook_state
    return hook_state.disabled_message is None


def _get_current_graph_task_keep_graph():
    """Whether the running backward keeps its graph (``retain_graph``); True outside one."""
    from ._engine.engine import running_task
    task = running_task()
    return task.keep_graph if task is not None else True


def _make_saved_tensor(tensor, is_output):
    """A ``SavedTensor`` of ``tensor``, saved as a node saves it (pack hooks run now,
    unpack hooks at each ``unpack()``)."""
    from ._autograd.saved import SavedTensor as _Saved
    _check_tensor(tensor, "_make_saved_tensor")
    if is_output:
        # NOTE: an output is saved by the node that made it; there is none here
        raise RuntimeError("_make_saved_tensor: is_output=True needs the node that produced "
                           "the tensor; save it from that node instead")
    box = [_Saved(tensor, False)]
    return SavedTensor._make(None, lambda: box[0], lambda s: box.__setitem__(0, s))


def _unsafe_set_version_counter(tensors, versions):
    from ._autograd.grad_mode import _set_version_counters
    _set_version_counters(tensors, versions)


_autograd = types.ModuleType("hookgrad._C._autograd", "``torch._C._autograd``'s names.")
for _fn in (_saved_tensors_hooks_is_enabled, _get_current_graph_task_keep_graph,
            _make_saved_tensor, _unsafe_set_version_counter):
    setattr(_autograd, _fn.__name__, _fn)
_autograd._InputMetadata = _InputMetadata
_autograd.SavedTensor = SavedTensor


# --------------------------------------------------------------------------- _C._functions


def _forward_node(make_node, inputs, want):
    """Call a forward-like node: aliases of ``inputs`` whose grad_fn is ``make_node(meta)``."""
    from ._tensor import Tensor
    if len(inputs) != want:
        raise TypeError(f"expected {want} arguments, got {len(inputs)} instead")
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"argument {i} is not a Variable")
    if not is_grad_enabled() or not any(t._requires_grad for t in inputs):
        outs = tuple(Tensor._wrap(t._data) for t in inputs)
    else:
        node = make_node(tuple((tuple(t._data.shape), t._data.dtype) for t in inputs))
        node._next = tuple(t._edge() for t in inputs)
        outs = tuple(Tensor._wrap(t._data, node, i) for i, t in enumerate(inputs))
    return outs[0] if len(outs) == 1 else outs


class _ForwardNode(_Node):
    """A node class PyTorch exposes to be called in forward: calling one returns its
    inputs again, joined to the graph through the node class it names."""

    __slots__ = ()

    def _out_meta(self):
        return ()

    def _apply(self, grads, create_graph):
        raise RuntimeError(f"{type(self).__name__} runs in forward only")


class DelayedError(_ForwardNode):
    """``DelayedError(msg, num_inputs)(*tensors)``: the tensors again, whose backward
    raises ``RuntimeError(msg)`` when it reaches them.

    Example::

        >>> y = hookgrad._C._functions.DelayedError("no gradient here", 1)(x)
        >>> y.sum().backward()   # RuntimeError: no gradient here
    """

    __slots__ = ("_msg", "_n")

    def __init__(self, msg, num_inputs):
        super().__init__(())
        self._msg, self._n = str(msg), int(num_inputs)

    def name(self):
        return "torch::autograd::DelayedError"

    def __call__(self, *inputs):
        from ._autograd.error_node import _DelayedError
        return _forward_node(lambda meta: _DelayedError(self._msg, meta), inputs, self._n)


class UndefinedGradBackward(_MetaNode):
    """Passes undefined (None) gradients on to its inputs."""

    __slots__ = ()

    def name(self):
        return "torch::autograd::UndefinedGradBackward"

    def _apply(self, grads, create_graph):
        return [None] * len(self._next)


class UndefinedGrad(_ForwardNode):
    """``UndefinedGrad()(tensor)``: the tensor again, whose gradient in backward is
    undefined (None) from there on."""

    __slots__ = ()

    def __init__(self):
        super().__init__(())

    def name(self):
        return "torch::autograd::UndefinedGrad"

    def __call__(self, *inputs):
        return _forward_node(UndefinedGradBackward, inputs, 1)


_functions = types.ModuleType("hookgrad._C._functions", "``torch._C._functions``'s node classes.")
_functions.AccumulateGrad = AccumulateGrad
_functions.DelayedError = DelayedError
_functions.UndefinedGrad = UndefinedGrad
_functions.UndefinedGradBackward = UndefinedGradBackward

__all__ = ["_current_graph_task_id", "_will_engine_execute_node", "_current_autograd_node",
           "is_grad_enabled", "_set_grad_enabled", "_get_tracing_state", "_WeakTensorRef",
           "_autograd", "_functions", "_is_multithreading_enabled", "_set_multithreading_enabled",
           "_is_view_replay_enabled", "_set_view_replay_enabled",
           "_current_graph_task_execution_order", "DisableTorchFunction",
           "DisableTorchFunctionSubclass", "_disabled_torch_function_impl"]
