"""The autograd graph: ``Node``, ``AccumulateGrad``, ``GradientEdge``, multi-grad hooks.

Mirrors ``torch.autograd.graph``. A Node is one backward step: ``grad_fn`` of an op's
outputs, or ``AccumulateGrad`` for a leaf. Its ``next_functions`` are the edges to the
nodes of its inputs.
"""
import abc
import itertools
import logging
import threading
from typing import NamedTuple

from .._watch import WatchedDict, WatchedOrderedDict
from .._handle import RemovableHandle
from . import anomaly_mode

log = logging.getLogger("hookgrad.autograd.graph")  # its public path

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "increment_version",
           "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "allow_mutation_on_saved_tensors", "register_multi_grad_hook"]

_sequence = itertools.count()
ACCUMULATE_GRAD_PRIORITY = float("inf")



class _EngineSlot:
    """What the graph asks of the engine, which sits above it: filled by
    ``hookgrad._engine.engine`` when it is imported (with ``hookgrad``)."""

    accumulate_grad = current_graph_task_id = queue_cleanup = None
    will_engine_execute_node = None


ENGINE = _EngineSlot()

class Node(abc.ABC):
    """A backward step of the graph (``tensor.grad_fn``), as code reading the graph sees it.

    A virtual base, as in PyTorch: every node hookgrad makes is an instance
    (``isinstance(y.grad_fn, Node)``), while ``Node`` is not in its class's MRO (each node's
    class is named as PyTorch names it, ``MulBackward0``, ``AccumulateGrad``, ...).

    Hooks::

        node.register_prehook(hook)  # hook(grad_outputs) -> tuple or None
        node.register_hook(hook)     # hook(grad_inputs, grad_outputs) -> tuple or None

    ``grad_outputs`` are the gradients w.r.t. the forward outputs (this node's inputs in
    backward); ``grad_inputs`` those it computes for the forward inputs.
    """

    @abc.abstractmethod
    def name(self):
        """The node's name, as PyTorch names it (``MulBackward0``)."""

    @property
    @abc.abstractmethod
    def next_functions(self):
        """``(node, input_nr)`` per forward input: where this node's gradients go."""

    @property
    @abc.abstractmethod
    def metadata(self):
        """A dict kept on the node for the user's annotations."""

    @abc.abstractmethod
    def _register_hook_dict(self, tensor):
        """Run ``tensor``'s hooks (a dict of them) before this node, on its gradient."""

    @abc.abstractmethod
    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs) -> tuple | None``, after the node ran."""

    @abc.abstractmethod
    def register_prehook(self, fn):
        """``fn(grad_outputs) -> tuple | None``, before the node runs."""

    @classmethod
    def __subclasshook__(cls, subclass):
        # NOTE: PyTorch's nodes are C++ classes registered to Node, not subclasses of it;
        # hookgrad's share the implementation base ``_Node`` and are registered through it
        if cls is Node and isinstance(subclass, type) and issubclass(subclass, _Node):
            return True
        return NotImplemented


class _Node:
    """What every node hookgrad makes is built on (``Node`` is its public, virtual base).

    Subclasses set ``name()``, ``_apply`` and, where they know it, ``_out_meta``.
    """

    # ``_hooks``: None until the first hook of any kind is registered, then the node's
    # ``_NodeHooks`` (most nodes never get one: a node is made with one store for all
    # its kinds, and the engine and fusion test one slot per node)
    __slots__ = ("_next", "_seq", "_hooks", "_metadata", "__weakref__")

    def __init__(self, next_edges=()):
        self._next = next_edges
        self._seq = next(_sequence)
        self._hooks = self._metadata = None
        if anomaly_mode._state.enabled:  # detect_anomaly: keep where the forward ran
            anomaly_mode.store_stack(self)

    def name(self):
        """The node's name, as PyTorch names it (``MulBackward0``)."""
        raise NotImplementedError

    # ---- graph structure
    @property
    def next_functions(self):
        return tuple((e[0], e[1]) if e is not None else (None, 0) for e in self._next)

    @property
    def metadata(self):
        """A dict kept on the node for the user's annotations."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def _sequence_nr(self):
        """The node's creation order; the engine runs ready nodes highest number first."""
        return self._seq

    def _set_sequence_nr(self, sequence_nr):
        """Change the number that orders this node among ready nodes in backward."""
        self._seq = int(sequence_nr)

    _priority = property(lambda self: self._seq)

    @property
    def _input_metadata(self):
        """Shape, dtype and device of each gradient this node takes (one per forward
        output), as ``torch._C._autograd._InputMetadata`` objects."""
        return tuple(None if m is None else _InputMetadata(m) for m in self._out_meta())

    def __call__(self, *grads):
        """Run this node's backward on ``grads`` (one per forward output) and return the
        gradients for ``next_functions``: a Tensor if there is one, else a tuple. Records
        a graph when grad mode is on. Hooks do not run (the engine runs them)."""
        from .._tensor import Tensor  # NOTE: tape circle, see _tensor.py
        from .grad_mode import is_grad_enabled
        want = len(self._out_meta()) or 1
        if len(grads) != want:
            raise TypeError(f"expected {want} arguments, got {len(grads)} instead")
        for i, g in enumerate(grads):
            if g is not None and not isinstance(g, Tensor):
                raise TypeError(f"argument {i} is not a Variable")
        if all(g is None for g in grads) and not isinstance(self, AccumulateGrad) \
                and not getattr(self, "_apply_undefined", False):
            res = [None] * len(self._next)  # as the engine: no gradient in, none out
        else:
            res = self._apply(list(grads), is_grad_enabled())
        return res[0] if len(res) == 1 else tuple(res)

    # ---- hooks
    def register_prehook(self, fn):
        """Register ``fn(grad_outputs) -> tuple | None``, called before the node runs.

        A returned tuple replaces ``grad_outputs``. Example::

            >>> b = a * 5
            >>> b.grad_fn.register_prehook(lambda go: (go[0] * 3,))
        """
        if self._pre_hooks is None:
            self._pre_hooks = WatchedOrderedDict()
        h = RemovableHandle(self._pre_hooks)
        self._pre_hooks[h.id] = fn
        return h

    def register_hook(self, fn):
        """Register ``fn(grad_inputs, grad_outputs) -> tuple | None``, called after the node
        computed its gradients; a returned tuple replaces ``grad_inputs``."""
        if self._post_hooks is None:
            self._post_hooks = WatchedOrderedDict()
        h = RemovableHandle(self._post_hooks)
        self._post_hooks[h.id] = fn
        return h

    def _add_tensor_pre_hooks(self, nr, hooks_dict):
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = WatchedDict()
        self._tensor_pre_hooks[nr] = hooks_dict

    def _set_retain_grad(self, tensor):
        if self._retain_hooks is None:
            self._retain_hooks = {}
        self._retain_hooks[tensor._output_nr] = _RetainGrad(tensor)

    def _register_hook_dict(self, tensor):
        if tensor._backward_hooks is not None:
            self._add_tensor_pre_hooks(tensor._output_nr, tensor._backward_hooks)

    # ---- execution (engine interface)
    def _apply(self, grads, create_graph):
        """Gradients for ``next_functions`` from ``grads`` (one per forward output)."""
        raise NotImplementedError

    def _release(self):
        """Free saved values (called after backward unless ``retain_graph``)."""

    def _out_meta(self):
        """(shape, dtype) of each forward output, or None where unknown."""
        return ()

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"


class _NodeHooks:
    """The hooks a node holds, one attribute per kind of the hook table
    (``_autograd.hooks.KINDS``' ``node_attr``), each None until one of its kind is
    registered. A node makes it at its first registration (``_Node._hooks``)."""

    __slots__ = ("_tensor_pre_hooks", "_retain_hooks", "_pre_hooks", "_post_hooks")

    def __init__(self):
        self._tensor_pre_hooks = self._retain_hooks = self._pre_hooks = self._post_hooks = None


def _hook_kind(name):
    """A node's attribute ``name``, read and written through its ``_hooks``: None while
    the node holds no hook, and writing None makes no ``_NodeHooks``."""

    def read(node):
        h = node._hooks
        return None if h is None else getattr(h, name)

    def write(node, value):
        h = node._hooks
        if h is None:
            if value is None:
                return
            h = node._hooks = _NodeHooks()
        setattr(h, name, value)

    return property(read, write, doc=f"The node's ``{name}`` (None: none registered).")


for _name in _NodeHooks.__slots__:  # the engine's hot paths read ``_hooks`` itself
    setattr(_Node, _name, _hook_kind(_name))
del _name


class _InputMetadata:
    """What a node knows of one gradient it takes: ``shape``, ``dtype``, ``device``."""

    __slots__ = ("shape", "dtype", "device")
    is_nested_tensor = is_cpp_nested_tensor = False

    def __init__(self, meta):
        import jax

        from .. import _dtype
        from .._tensor import Size  # NOTE: tape circle, see _tensor.py
        shape, dt = meta if isinstance(meta, tuple) else (meta.shape, meta.dtype)
        self.shape = Size(shape)
        self.dtype = _dtype.from_jax(dt)
        # NOTE: nodes keep no device; hookgrad places arrays on the default device
        self.device = _dtype.device_of(jax.devices()[0])

    def __repr__(self):
        return (f"_InputMetadata(shape={tuple(self.shape)}, dtype={self.dtype}, "
                f"device={self.device})")


class _RetainGrad:
    """The retain_grad hook of one output: stores the gradient in the tensor's ``.grad``."""

    __slots__ = ("ref",)

    def __init__(self, tensor):
        import weakref
        self.ref = weakref.ref(tensor)

    def __call__(self, grad):
        t = self.ref()
        if t is None or grad is None:
            return
        if t._grad is None:
            t._grad = grad.clone() if grad.requires_grad else type(grad)._wrap(grad._data)
        else:
            t._grad = t._grad + grad


class AccumulateGrad(_Node):
    """The node of a leaf tensor: adds incoming gradients into ``variable.grad``."""

    __slots__ = ("_var",)

    def __init__(self, variable):
        import weakref
        super().__init__(())
        self._var = weakref.ref(variable)

    def name(self):
        return "torch::autograd::AccumulateGrad"

    @property
    def variable(self):
        return self._var()

    _priority = ACCUMULATE_GRAD_PRIORITY

    def _out_meta(self):
        v = self._var()
        return ((tuple(v._data.shape), v._data.dtype),) if v is not None else (None,)

    def _apply(self, grads, create_graph):
        ENGINE.accumulate_grad(self, grads, create_graph)
        return []


class GradientEdge(NamedTuple):
    """An edge of the graph: the ``node`` and which of its inputs (``output_nr``) the
    gradient enters. Usable wherever ``autograd.grad`` takes inputs or outputs."""

    node: Node
    output_nr: int


def get_gradient_edge(tensor):
    """The GradientEdge that the gradient of ``tensor`` flows into.

    Lets ``autograd.grad`` compute gradients w.r.t. a tensor that is later modified in
    place (the edge keeps pointing at the old history).
    """
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    node, nr = tensor._edge()
    return GradientEdge(node, nr)


def increment_version(tensor):
    """Bump the version counter of ``tensor`` (or each of a list), as an in-place op does."""
    tensors = tensor if isinstance(tensor, (list, tuple)) else (tensor,)
    for t in tensors:
        t._version += 1


# --------------------------------------------------------------------------- multi-grad hooks


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Register ``fn`` to run once per backward with the gradients of several tensors.

    ``mode="all"``: ``fn(grads)`` with a gradient per tensor, after all the gradients
    that this backward computes are ready; a tensor the backward does not reach gets None.
    ``mode="any"``: ``fn(grad)`` with the first gradient computed among ``tensors``.

    Example::

        >>> register_multi_grad_hook((a, b), lambda grads: print([g.sum() for g in grads]))

    Returns a handle whose ``remove()`` removes all of it.
    """
    supported = ("all", "any")
    if mode not in supported:
        raise ValueError(f"Expects mode to be one of {supported} but got {mode}")
    from .. import _mode
    backend = _mode.state.backend
    if backend is not None:  # hookgrad.func: one custom_vjp identity over the tensors
        return backend.register_multi_grad_hook(tensors, fn, mode)
    tensors = tuple(tensors)
    if mode == "all":
        hooks = _all_grads_hooks([_grad_fn_or_grad_acc(t) for t in tensors], fn)
    else:
        hooks = _first_grad_hooks(fn)
    return MultiGradHandle(tuple(t.register_hook(hooks(i)) for i, t in enumerate(tensors)
                                 if t.requires_grad))


def call_multi_grad_hook(fn, mode, grads):
    """A multi-grad hook once its backward has the gradients it will get (in every mode):
    ``mode="all"`` gets one per tensor (None where none came), ``"any"`` the first."""
    if mode == "all":
        fn(tuple(grads))
    else:
        fn(next(g for g in grads if g is not None))


class MultiGradHandle(RemovableHandle):
    """The handle of a multi-grad hook: ``remove()`` removes the hooks it placed
    (``handles``), and ``removed`` tells a hook placed otherwise (functional mode) to stop."""

    def __init__(self, handles=()):
        self.handles = handles
        self.removed = False

    def remove(self):
        self.removed = True
        for h in self.handles:
            h.remove()

    def __getstate__(self):
        return self.handles, self.removed

    def __setstate__(self, state):
        self.handles, self.removed = state


def _grad_fn_or_grad_acc(t):
    # the node a tensor's gradient flows into, taken when the hook is registered (as
    # PyTorch does: an in-place op afterwards does not change which node counts)
    if isinstance(t, GradientEdge):
        return t.node
    edge = t._edge() if t.requires_grad else None
    if edge is None:
        raise AssertionError("Expected gradient function to be set")
    return edge[0]


def _all_grads_hooks(nodes, fn):
    """Per tensor index, a tensor hook that buffers its gradient; the last of them that the
    running graph task reaches calls ``fn`` with all of them. ``nodes``: the node each
    tensor's gradient flows into, as registration found it."""
    current_graph_task_id, queue_cleanup = ENGINE.current_graph_task_id, ENGINE.queue_cleanup
    will_engine_execute_node = ENGINE.will_engine_execute_node
    lock = threading.Lock()
    count = {}     # graph task id -> grads seen
    buffers = {}   # graph task id -> [grad or None]
    expected = {}  # graph task id -> how many of the tensors this graph task reaches

    def hook_for(idx):
        def inner_hook(grad):
            tid = current_graph_task_id()
            with lock:
                if tid not in count:
                    queue_cleanup(lambda: (count.pop(tid, None), buffers.pop(tid, None),
                                           expected.pop(tid, None)))
                    count[tid] = 0
                    buffers[tid] = [None] * len(nodes)
                    expected[tid] = sum(map(will_engine_execute_node, nodes))
                buffers[tid][idx] = grad
                count[tid] += 1
                done = count[tid] == expected[tid]
                if done:
                    grads = buffers.pop(tid)
                    del count[tid], expected[tid]
            if done:
                call_multi_grad_hook(fn, "all", grads)
        return inner_hook
    return hook_for


def _first_grad_hooks(fn):
    """A tensor hook (the same for every tensor) calling ``fn`` with the first gradient
    the running graph task computes among the tensors."""
    current_graph_task_id, queue_cleanup = ENGINE.current_graph_task_id, ENGINE.queue_cleanup
    lock = threading.Lock()
    ran = set()  # graph task ids where fn already ran

    def wrapped(grad):
        tid = current_graph_task_id()
        with lock:
            first = tid not in ran
            ran.add(tid)
        if first:
            queue_cleanup(lambda: ran.discard(tid))
            call_multi_grad_hook(fn, "any", (grad,))
    return lambda i: wrapped


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__, "torch.autograd.graph")
