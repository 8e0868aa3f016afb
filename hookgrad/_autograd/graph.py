"""The autograd graph: ``Node``, ``GradientEdge``, saved-tensor hooks, multi-grad hooks.

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
from .saved import count_context, hook_state, pop_hooks, push_hooks

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

    __slots__ = ("_next", "_seq", "_pre_hooks", "_post_hooks", "_tensor_pre_hooks",
                 "_retain_hooks", "_metadata", "__weakref__")

    def __init__(self, next_edges=()):
        self._next = next_edges
        self._seq = next(_sequence)
        self._pre_hooks = self._post_hooks = None
        self._tensor_pre_hooks = self._retain_hooks = self._metadata = None
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


# --------------------------------------------------------------------------- saved tensors


class saved_tensors_hooks:
    """Context manager setting pack/unpack hooks for the tensors that ops save::

        pack_hook(tensor: Tensor) -> Any
        unpack_hook(packed: Any) -> Tensor

    ``pack_hook`` runs when an op saves a tensor for backward; its result is stored
    instead. ``unpack_hook`` runs in backward and must return a Tensor with the same
    content. The innermost pair applies.

    Example::

        >>> with hookgrad.autograd.graph.saved_tensors_hooks(lambda t: t.numpy(force=True),
        ...                                                  lambda a: hookgrad.tensor(a)):
        ...     y = (x * x).sum()
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        push_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc):
        pop_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors go to host memory in forward and come back to their device in backward.

    ``pin_memory=True`` uses pinned host memory where the JAX backend offers it.
    ``device_type`` is accepted for PyTorch compatibility; the tensor's own device is
    restored.
    """

    def __init__(self, pin_memory=False, device_type="cuda"):
        import jax

        from .._tensor import Tensor  # NOTE: tape circle, see _tensor.py

        def pack(t):
            arr = t._data
            if isinstance(arr, jax.core.Tracer):
                return (None, arr)
            dev = next(iter(arr.devices()))
            if dev.platform == "cpu":
                return (dev, arr)
            return (dev, _offload(arr, dev, pin_memory))

        def unpack(packed):
            dev, arr = packed
            if dev is not None and dev.platform != "cpu":
                arr = _restore(arr, dev)
            return Tensor._wrap(arr)

        super().__init__(pack, unpack)


def _offload(arr, dev, pinned):
    """``arr`` (on ``dev``) copied to host memory: ``dev``'s pinned host memory, or the CPU."""
    import jax
    if pinned:
        return jax.device_put(arr, jax.sharding.SingleDeviceSharding(
            dev, memory_kind="pinned_host"))
    return jax.device_put(arr, jax.devices("cpu")[0])


def _restore(host, dev):
    """``host`` back in ``dev``'s own memory."""
    import jax
    # NOTE: a pinned-host array names its memory kind: put it to the device's default kind
    # explicitly (a plain ``device_put(arr, dev)`` keeps the kind and JAX refuses it)
    return jax.device_put(host, jax.sharding.SingleDeviceSharding(
        dev, memory_kind=dev.default_memory().kind))


class disable_saved_tensors_hooks:
    """Within this context, entering ``saved_tensors_hooks`` raises
    ``RuntimeError(error_message)``."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        if hook_state.stack:  # hooks already active cannot be disabled (as in PyTorch)
            raise RuntimeError(self.error_message)
        self.prev = hook_state.disabled_message
        hook_state.disabled_message = self.error_message
        return self

    def __exit__(self, *exc):
        hook_state.disabled_message = self.prev


class _MutationHandle:
    """One saved (tensor, version) under ``allow_mutation_on_saved_tensors``: held by the
    nodes that saved it, so it lives exactly as long as some graph needs the value."""

    __slots__ = ("ctx", "ref", "version", "data", "__weakref__")

    def __init__(self, ctx, tensor):
        import weakref
        self.ctx = ctx
        self.ref = weakref.ref(tensor)
        self.version = tensor._version
        self.data = tensor._data

    @property
    def closed(self):
        return self.ctx.closed

    def modified(self):
        t = self.ref()
        return t is not None and t._version != self.version


class _MutationContext:
    """What ``allow_mutation_on_saved_tensors`` yields. As PyTorch's context it maps:

    - ``tid_to_weakhandle``: ``(id, storage id, version)`` of each saved tensor -> its
      handle, while a graph holds it;
    - ``sid_to_tid``: ``(storage id, version)`` -> the saved tensor ids with that storage;
    - ``original``: handle -> the saved tensor, while it is unmodified;
    - ``cloned``: handle -> the value saved, for tensors modified in place since.

    NOTE: JAX arrays are immutable, so a saved value never needs copying before an in-place
    write; ``cloned`` lists the saved values that now differ from their tensor.
    """

    def __init__(self):
        import collections
        import weakref
        self.closed = False
        self.tid_to_weakhandle = weakref.WeakValueDictionary()
        self.sid_to_tid = collections.defaultdict(set)

    def _save(self, tensor):
        """The handle a node keeps for saving ``tensor`` now (one per tensor and version)."""
        base = tensor._base if tensor._base is not None else tensor
        tid = (id(tensor), id(base), tensor._version)
        self.sid_to_tid[(id(base), tensor._version)].add(tid)
        handle = self.tid_to_weakhandle.get(tid)
        if handle is None or handle.ref() is not tensor:
            handle = _MutationHandle(self, tensor)
            self.tid_to_weakhandle[tid] = handle
        return handle

    def _live(self):
        return [] if self.closed else list(self.tid_to_weakhandle.values())

    @property
    def original(self):
        import weakref
        out = weakref.WeakKeyDictionary()
        for h in self._live():
            t = h.ref()
            if not h.modified():
                out[h] = t if t is not None else _tensor_of(h.data)
        return out

    @property
    def cloned(self):
        import weakref
        out = weakref.WeakKeyDictionary()
        for h in self._live():
            if h.modified():
                out[h] = _tensor_of(h.data)
        return out

    def clear(self):
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


def _tensor_of(arr):
    from .._tensor import Tensor  # NOTE: tape circle, see _tensor.py
    return Tensor._wrap(arr)


class allow_mutation_on_saved_tensors:
    """Within this context, tensors saved for backward may be modified in place: backward
    uses their values from when they were saved. Backward of such a graph must also run
    inside the context (else ``AssertionError``).

    Example::

        >>> with hookgrad.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
        ...     b = a.clone()
        ...     out = (b ** 2).sum()
        ...     b.sin_()           # len(ctx.cloned) == 1: backward needs the old b
        ...     out.backward()     # uses b from before sin_()
    """

    def __enter__(self):
        if hook_state.mutation_ctx is not None:
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        self.ctx = _MutationContext()
        hook_state.mutation_ctx = self.ctx
        count_context(1)
        return self.ctx

    def __exit__(self, *exc):
        hook_state.mutation_ctx = None
        count_context(-1)
        self.ctx.closed = True
        self.ctx.clear()


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
