"""Saved tensors: what a node keeps for its backward, with pack/unpack hooks and version checks.

A saved tensor keeps the JAX array (immutable, so an in-place op on the Tensor replaces
the Tensor's array and leaves the saved one as it was), the version of the Tensor when it
was saved, and the graph edge needed to rebuild a differentiable Tensor for
``create_graph``. Active ``saved_tensors_hooks`` replace the array by whatever the pack
hook returns.
"""
import collections
import re
import threading
import weakref

import jax

from .._tensor import Tensor
from . import anomaly_mode
from .grad_mode import _state as _grad_state

# torch.autograd.graph's names that live here (``hookgrad.autograd.graph`` re-exports them)
CONTEXTS = ("saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
            "allow_mutation_on_saved_tensors")

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")
PACK_INPLACE_MESSAGE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to "
    "pack hook cannot be modified by in-place operations as this can lead to unexpected "
    "side-effects. Please open an issue if you need to perform in-place operations on the "
    "input to a pack hook.")
DETACHED_MESSAGE = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This "
    "is not supported, please use out-of-place `.detach()` instead")


class _HookState(threading.local):
    def __init__(self):
        self.stack = []              # (pack_hook, unpack_hook), innermost last
        self.disabled_message = None  # set by disable_saved_tensors_hooks
        self.mutation_ctx = None     # the active allow_mutation_on_saved_tensors context


hook_state = _HookState()
# how many saved_tensors_hooks / allow_mutation_on_saved_tensors contexts are open, in any
# thread: while none is, recording skips the thread-local lookups above
open_contexts = [0]
_count_lock = threading.Lock()


_BACKWARD_N = re.compile(r"Backward(\d*)$")  # the suffix PyTorch shortens in node names

def count_context(delta):
    """A context of those above opens (+1) or closes (-1), in some thread."""
    with _count_lock:
        open_contexts[0] += delta


def push_hooks(pack_hook, unpack_hook):
    """``saved_tensors_hooks.__enter__``: the pair applies to values saved from now on."""
    msg = hook_state.disabled_message
    if msg is not None:
        raise RuntimeError(msg)
    hook_state.stack.append((pack_hook, unpack_hook))
    count_context(1)


def pop_hooks():
    """``saved_tensors_hooks.__exit__``: the innermost pair stops applying."""
    if not hook_state.stack:  # an extra __exit__ (PyTorch's check, in its words)
        raise RuntimeError("is_initialized && !tls.stack.empty() INTERNAL ASSERT FAILED: "
                           "saved_tensors_hooks exited more often than it was entered")
    hook_state.stack.pop()
    count_context(-1)


def call_unpack_hook(unpack_hook, packed):
    """``unpack_hook(packed)``, which must give a Tensor (in every mode).

    NOTE: the hook runs on a copy of the hook stack, as PyTorch's backward runs with the
    thread-local state of the graph task: a hook entering or exiting ``saved_tensors_hooks``
    changes nothing outside it."""
    stack = hook_state.stack
    before = list(stack)
    try:
        t = unpack_hook(packed)
    finally:
        if len(stack) != len(before) or any(a is not b for a, b in zip(stack, before)):
            count_context(len(before) - len(stack))
            stack[:] = before
    if not isinstance(t, Tensor):
        raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but "
                        f"got result of type {type(t).__name__}")
    return t


class SavedTensor:
    """One saved value of a node."""

    __slots__ = ("data", "version", "ref", "edge", "nr", "is_output", "packed", "unpack_hook",
                 "mutation_ctx", "shape")

    def __init__(self, tensor, is_output):
        st = hook_state
        self.is_output = is_output
        self.nr = tensor._output_nr
        # the output's edge is the saving node itself: filled in at unpack (avoids a cycle)
        if is_output:
            self.edge = None
        elif tensor.grad_fn is not None:
            self.edge = tensor.grad_fn
        elif tensor._requires_grad:
            self.edge = tensor._grad_accumulator()
        else:
            self.edge = None
        ctx = st.mutation_ctx  # its handle for this value (with ``closed``), or None
        self.mutation_ctx = None if ctx is None else ctx._save(tensor)
        self.shape = tensor._data.shape
        self.unpack_hook = None
        if st.stack:
            self.set_hooks(tensor, *st.stack[-1])
        else:
            self.data = tensor._data
            self.ref = weakref.ref(tensor)
            self.version = tensor._version

    def set_hooks(self, tensor, pack, unpack):
        """Pack ``tensor`` (the value saved) with ``pack``; ``unpack`` restores it."""
        version = tensor._version
        gm = _grad_state
        prev, gm.enabled = gm.enabled, False  # pack hooks run with grad mode off, as in torch
        try:
            packed = pack(tensor)
        finally:
            gm.enabled = prev
        if tensor._version != version:
            raise RuntimeError(PACK_INPLACE_MESSAGE)
        self.packed = packed
        self.unpack_hook = unpack
        self.data = None
        self.ref = weakref.ref(tensor) if self.is_output else None  # for _output_edge

    def unpack(self, node, as_tensor):
        """The saved value: a JAX array, or with ``as_tensor`` a Tensor joined to the graph."""
        ctx = self.mutation_ctx
        if ctx is not None and ctx.closed:
            raise AssertionError(
                "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context "
                "in which the graph was originally recorded.")
        t = None
        if self.unpack_hook is not None:
            if self.packed is _FREED:
                raise RuntimeError(FREED_MESSAGE)
            data = call_unpack_hook(self.unpack_hook, self.packed)._data
            if self.is_output:
                t = self.ref()
        else:
            data = self.data
            if data is None:
                raise RuntimeError(FREED_MESSAGE)
            t = self.ref()
            if t is not None and t._version != self.version and ctx is None:
                raise RuntimeError(_modified_message(
                    t, self.version, node if self.is_output else self.edge, self.nr,
                    self.is_output))
            if t is not None and self.edge is not None and not t._requires_grad:
                _check_detached(self.edge)
        if not as_tensor:
            return data
        if self.is_output:
            return _as_tensor(data, *_output_edge(t, node, self.nr))
        return _as_tensor(data, self.edge, self.nr)

    def release(self):
        self.mutation_ctx = None  # the value is gone: allow_mutation's handle goes with it
        if self.unpack_hook is not None:
            self.packed = _FREED
        else:
            self.data = None


_FREED = object()


def unpack_plain(saved, node, as_tensor):
    """``unpack`` for what a node saved with no hooks active: ``(array, tensor, version,
    edge)``, a tuple because ops save one per recorded call."""
    data, t, version, edge = saved
    owner, nr = edge or (None, 0)
    if t._version != version:
        raise RuntimeError(_modified_message(t, version, owner, nr))
    if owner is not None and not t._requires_grad:
        _check_detached(owner)
    return _as_tensor(data, owner, nr) if as_tensor else data


def unpack_output(saved, node, as_tensor):
    """``unpack`` for the output ``node`` saved with no hooks active: ``(array, weak
    reference to the output, version)``, and the output's number when not 0."""
    data, ref, version = saved[:3]
    t = ref()
    if t is not None and t._version != version:
        nr = saved[3] if len(saved) > 3 else 0
        raise RuntimeError(_modified_message(t, version, node, nr, is_output=True))
    if not as_tensor:  # (the common case: no output number to read)
        return data
    return _as_tensor(data, *_output_edge(t, node, saved[3] if len(saved) > 3 else 0))


def _output_edge(t, node, nr):
    """Where a saved output ``t`` (alive, or None) joins the graph: at its node, unless the
    node wrote it in place as a view; its history is then its base's, through the view's
    ``AsStridedBackward0``, as PyTorch's saved output of an in-place op on a view (the node
    itself lives on only inside the base's ``CopySlices``)."""
    if t is not None and t._view is not None and t.grad_fn is not None and \
            t.grad_fn is not node:
        return t.grad_fn, t._output_nr
    return node, nr


def _check_detached(owner):
    """A saved non-leaf input that no longer requires grad was detached in place."""
    if owner.__class__.__name__ != "AccumulateGrad":
        raise RuntimeError(DETACHED_MESSAGE)


def _as_tensor(data, edge, nr):
    """A saved value as a Tensor joined to the graph at ``edge`` (for ``create_graph``)."""
    if edge is None:
        return Tensor._wrap(data)
    if edge.__class__.__name__ == "AccumulateGrad":
        out = Tensor._wrap(data)
        out._requires_grad = True
        out._acc = edge
        return out
    return Tensor._wrap(data, edge, nr)


# why PyTorch forbids writing into a view made by a multi-output op or inside a custom
# Function, or into its base (keys: ``_views.MULTI`` / ``_views.CUSTOM``, a layer above)
VIEW_CREATION_REASONS = {
    "multi": "This view is the output of a function that returns multiple views. Such "
             "functions do not allow the output views to be modified inplace. You should "
             "replace the inplace operation by an out-of-place one.",
    "custom": "This view was created inside a custom Function (or because an input was "
              "returned as-is) and the autograd logic to handle view+inplace would override "
              "the custom backward associated with the custom Function, leading to "
              "incorrect gradients. This behavior is forbidden. You can fix this by cloning "
              "the output of the custom Function.",
}


# the end of PyTorch's errors for a view made in no_grad mode, written in place or after its
# base was (``_views.NO_GRAD``)
NO_GRAD_VIEW_ADVICE = ("Given that this use case is ambiguous and error-prone, it is "
                       "forbidden. You can clarify your code by moving both the view and the "
                       "inplace either both inside the no_grad block (if you don't want the "
                       "inplace to be tracked) or both outside (if you want the inplace to be "
                       "tracked).")


def stale_view_message(info):
    """PyTorch's error for using a view (``info``: its ViewInfo) made by a multi-output op,
    inside a custom Function or in no_grad mode after its base or another view of it was
    written."""
    if info.creation == "no_grad":
        return ("A view was created in no_grad mode and its base or another view of its base "
                f"has been modified inplace with grad mode enabled. {NO_GRAD_VIEW_ADVICE}")
    name, idx = info.fn_name
    return (f"Output {idx} of {name} is a view and its base or another view of its base "
            f"has been modified inplace. {VIEW_CREATION_REASONS[info.creation]}")


def _modified_message(t, version, owner, nr, is_output=False):
    info = None if is_output else t._view
    if info is not None and info.diff and info.creation in VIEW_CREATION_REASONS:
        # PyTorch reads a saved input's grad_fn first: for such a view whose base (or
        # another view of it) was written, reading it raises this instead
        return stale_view_message(info)
    dt = t.dtype.name
    kind = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
            "int32": "Int", "int64": "Long", "bool": "Bool"}.get(dt, dt)
    desc = f"[hookgrad.{kind}Tensor {list(t.shape)}]"
    # NOTE: for a saved input PyTorch names the node that made the tensor as it is now (its
    # last in-place op); for a saved output, the node that saved it
    if not is_output and t.grad_fn is not None:
        owner, nr = t.grad_fn, t._output_nr
    if owner is not None and owner.__class__.__name__ != "AccumulateGrad":
        name = owner.name()
        # PyTorch drops a trailing ``Backward0`` (``MulBackward0`` -> ``Mul``) and keeps the
        # number of another overload (``ClampBackward1`` -> ``Clamp1``); not the
        # ``Backwards`` of ``torch::autograd::CopyBackwards``
        m = _BACKWARD_N.search(name)
        short = name[:m.start()] + m.group(1).lstrip("0") if m else name
        desc += f", which is output {nr} of {short},"
    if anomaly_mode._state.enabled:
        hint = ("Hint: the backtrace further above shows the operation that failed to compute "
                "its gradient. The variable in question was changed in there or anywhere "
                "later. Good luck!")
    else:
        hint = ("Hint: enable anomaly detection to find the operation that failed to compute "
                "its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
    return ("one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: {desc} is at version {t._version}; expected version "
            f"{version} instead. {hint}")


# --------------------------------------------------------------------------- saved-tensor hook contexts


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
    if pinned:
        return jax.device_put(arr, jax.sharding.SingleDeviceSharding(
            dev, memory_kind="pinned_host"))
    return jax.device_put(arr, jax.devices("cpu")[0])


def _restore(host, dev):
    """``host`` back in ``dev``'s own memory."""
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
        out = weakref.WeakKeyDictionary()
        for h in self._live():
            t = h.ref()
            if not h.modified():
                out[h] = t if t is not None else _tensor_of(h.data)
        return out

    @property
    def cloned(self):
        out = weakref.WeakKeyDictionary()
        for h in self._live():
            if h.modified():
                out[h] = _tensor_of(h.data)
        return out

    def clear(self):
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


def _tensor_of(arr):
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
