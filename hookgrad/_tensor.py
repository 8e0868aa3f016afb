"""Tensor: a ``jax.Array`` plus PyTorch's autograd metadata.

The class holds data and graph metadata only; arithmetic, reductions, indexing and the
other methods are attached from the op table (``hookgrad._ops``), so a method is an op.
"""
import copy

import jax
import jax.numpy as jnp
import numpy as np

from . import _device, _dtype, _errors, _missing, _mode, _tensor_missing, _views
from ._meta import MetaArray
from ._watch import WRITES as _WRITES, Moving, WatchedOrderedDict
from ._handle import RemovableHandle, warn_if_has_hooks
from ._tensor_values import READER, HostValues, _check_concrete  # noqa: F401 - host_run's
from ._tensor_meta import Metadata, Size  # noqa: F401 - where the ops' modules find Size
from ._pending import FORCE, Pending, placed  # noqa: F401 - where the ops' modules find them
from ._host_value import Host, to_jax as _host_to_jax

_NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead.")


def _check_can_require_grad(dt):
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError("only Tensors of floating point dtype can require gradients")


class Tensor(HostValues, Metadata):
    """A multi-dimensional array that records the operations applied to it.

    Hot attributes live in slots; rarely-set ones (``_grad``, hooks, the leaf's
    ``AccumulateGrad`` node) are class defaults overridden per instance.
    """

    __slots__ = ("_arr", "grad_fn", "_output_nr", "_requires_grad", "_ver",
                 "_compiled_out", "__dict__", "__weakref__")
    # ``_compiled_out``: True on a compiled step's output (detached, named by backward's
    # error), unset elsewhere: a slot, so marking each steady call's output makes no dict
    _grad = None
    _acc = None            # AccumulateGrad node of a leaf, created on first need
    _retains_grad = False
    # counting dicts (hookgrad._watch), shared with the node that dispatches them
    _backward_hooks = None
    _post_acc_hooks = None
    # aliasing (hookgrad/_views.py): a view's or detach()/.data alias's ViewInfo (its
    # root base and geometry); a root's weak references to its aliases; its storage
    # generation (bumped when ``.data =`` gives it new storage)
    _view = None
    _views = None
    _gen = 0
    __array_priority__ = 1000  # numpy defers binary ops to Tensor

    # NOTE: what ``hookgrad.compile`` does with each field above, in one place. A trace
    # overwrites the SNAPSHOT fields (saved before it, restored after it, by
    # ``_compile_snapshot``/``_compile_restore``); a cached program stays valid while the
    # KEY fields are the same objects (``hookgrad._compile.replay``); the LOCAL ones are
    # eager-only aliasing that a trace neither writes nor depends on. A new field goes in
    # one of them: tests/test_compile_tensor_fields.py fails on a field in none.
    _COMPILE_SNAPSHOT = ("_arr", "_grad", "_ver", "grad_fn", "_output_nr", "_requires_grad")
    _COMPILE_KEY = ("_requires_grad", "grad_fn", "_retains_grad", "_backward_hooks",
                    "_post_acc_hooks", "_acc")
    _COMPILE_LOCAL = ("_view", "_views", "_gen", "_compiled_out")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if SUBCLASSED[0] is not None:  # the __torch_function__ protocol turns on
            SUBCLASSED[0](cls)

    def __init__(self, data=None, *, requires_grad=False, dtype=None):
        # torch.Tensor(list) builds a tensor of the default float dtype
        if data is None:
            data = []
        if isinstance(data, Tensor):
            arr = data._data
        else:
            want = _dtype.to_jax(dtype or _dtype.get_default_dtype())
            arr = jnp.asarray(np.asarray(data), dtype=want) if not isinstance(data, jax.Array) \
                else data
        _init(self, arr)
        if requires_grad:
            self.requires_grad_(True)

    # NOTE: every attribute written to or deleted from an existing Tensor counts
    # (``hookgrad._watch.writes``): a compiled step re-run on the state its last call
    # wrote checks that one number first. A Tensor no one else holds yet is written
    # through the slots' own setters (``_fresh``), uncounted.
    def __setattr__(self, name, value):
        _WRITES[0] += 1
        _setattr(self, name, value)

    def __delattr__(self, name):
        _WRITES[0] += 1
        _delattr(self, name)

    # ---- the array
    @property
    def _data(self):
        """The ``jax.Array``. ``_arr`` holds it, or a ``Pending`` op output not computed
        yet (hookgrad/_ops/lazy.py), computed here on first read, or a ``Host`` (values
        held in NumPy, hookgrad/_host_value.py), copied into one here."""
        v = self._arr
        c = v.__class__
        if c is Pending or c is Host:
            # the same value, computed or copied: not a write a compiled step's check must see
            # (a Pending's value may be a first-tier result still in NumPy: FORCE puts it)
            v = _host_to_jax(v) if c is Host else v.value if v.value is not None and \
                v.value.__class__ is not Host else FORCE[0](v)
            _set_arr(self, v)
        return v

    @_data.setter
    def _data(self, arr):
        self._arr = arr

    _version = property(lambda t: v.value() if (v := t._ver).__class__ is Moving else v,
                        lambda t, version: _set_version(t, version))  # ``_watch.Moving``

    # ---- construction helpers (internal)
    @classmethod
    def _wrap(cls, arr, grad_fn=None, output_nr=0):
        t = object.__new__(cls)  # ``_fresh``'s fill, inlined: every op's output is made here
        _set_arr(t, arr)
        _set_fn(t, grad_fn)
        _set_nr(t, output_nr)
        _set_rg(t, grad_fn is not None)
        _set_version(t, 0)
        return t

    # ---- the compiled mode's view of a Tensor (see _COMPILE_SNAPSHOT)
    def _compile_snapshot(self):
        """What a ``hookgrad.compile`` trace overwrites: this Tensor's snapshot fields, and
        the array and version of its ``.grad`` (a trace writes through to them)."""
        g = self._grad
        return (self._data, g, self._version, self.grad_fn, self._output_nr,
                self._requires_grad, None if g is None else (g._data, g._version))

    def _compile_restore(self, snap):
        """Put back what :meth:`_compile_snapshot` saved."""
        (self._data, g, self._version, self.grad_fn, self._output_nr, self._requires_grad,
         gsave) = snap
        self._grad = g
        if gsave is not None:
            g._data, g._version = gsave

    # ---- autograd metadata
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if self.grad_fn is not None:
            if not value:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want "
                    "to use a computed variable in a subgraph that doesn't require "
                    "differentiation use var_no_grad = var.detach().")
            # the attribute cannot be set on a non-leaf at all (requires_grad_ may)
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        if value:
            _check_can_require_grad(self.dtype)
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` in place and return ``self``."""
        if self.grad_fn is not None and requires_grad:
            return self  # a non-leaf already requires grad
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def grad(self):
        if self.grad_fn is not None and not self._retains_grad and self._grad is None:
            _errors.warn(_NONLEAF_GRAD_WARNING, UserWarning)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value.dtype is not self.dtype:
                raise RuntimeError(
                    "attempting to assign a gradient with dtype "
                    f"'{_dtype.c_type_name(value.dtype)}' to a tensor with grad_dtype "
                    f"'{_dtype.torch_kind(self.dtype.name)}'. The gradient must match the "
                    "tensor's grad_dtype (defaults to the tensor's dtype). You can set the "
                    "tensor's grad_dtype attribute with a specific dtype, or None to allow any "
                    "dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and "
                    "its gradient may break downstream systems that assume they match.")
            if value.shape != self.shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value.shape)}' "
                                   f"to a tensor of size '{list(self.shape)}'. Please ensure "
                                   "that the gradient and the tensor are the same size")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def retains_grad(self):
        return self._retains_grad

    def retain_grad(self):
        """Keep this non-leaf tensor's gradient in ``.grad`` during backward (no-op on leaves).

        The retained gradient is the one seen after this tensor's other hooks.
        """
        if self.grad_fn is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if self._retains_grad:
            return
        self.grad_fn._set_retain_grad(self)
        self._retains_grad = True

    def _grad_accumulator(self):
        """The leaf's AccumulateGrad node (created on first use)."""
        acc = self._acc
        if acc is None:
            # NOTE: the one import circle, the one any tape autograd has: a leaf Tensor
            # makes its AccumulateGrad node here, and nodes (graph.py) wrap gradients
            # back into Tensors. The graph is the lower layer
            # and imports the Tensor only inside functions, marked "tape circle".
            from ._autograd.graph import AccumulateGrad
            acc = self._acc = AccumulateGrad(self)
        return acc

    def _edge(self):
        """(node, input_nr) that gradients for this tensor flow into, or None."""
        if self.grad_fn is not None:
            _views.check_stale(self.grad_fn)
            return (self.grad_fn, self._output_nr)
        if self._requires_grad:
            return (self._grad_accumulator(), 0)
        return None

    def register_hook(self, hook):
        """Register a backward hook, called with the gradient of this tensor::

            hook(grad) -> Tensor or None

        A returned Tensor replaces the gradient that flows on (for a leaf, what is
        accumulated into ``.grad``). Hooks run in registration order, each seeing the
        previous one's result. Returns a handle whose ``remove()`` removes the hook.

        Example::

            >>> v = hookgrad.tensor([0., 0., 0.], requires_grad=True)
            >>> h = v.register_hook(lambda grad: grad * 2)
            >>> v.backward(hookgrad.tensor([1., 2., 3.]))
            >>> v.grad
            tensor([2., 4., 6.])
        """
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        backend = _mode.state.backend
        if backend is not None:  # hookgrad.func: an identity custom_vjp on self's array
            return backend.register_tensor_hook(self, hook)
        if self._backward_hooks is None:
            self._backward_hooks = WatchedOrderedDict()
            node, nr = self._edge()
            node._add_tensor_pre_hooks(nr, self._backward_hooks)
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def register_post_accumulate_grad_hook(self, hook):
        """Register a hook run after ``.grad`` of this leaf has been updated::

            hook(param: Tensor) -> None

        Example: an optimizer step fused into backward, one parameter at a time.
        """
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_acc_hooks is None:
            self._post_acc_hooks = WatchedOrderedDict()
        handle = RemovableHandle(self._post_acc_hooks)
        self._post_acc_hooks[handle.id] = hook
        return handle

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate the gradient of this tensor w.r.t. graph leaves into their ``.grad``."""
        BACKWARD[0](self, gradient, retain_graph, create_graph, inputs=inputs)

    def _write_(self, arr):
        """Replace the data in place outside autograd (optimizers, init, buffers, in-place
        ops): same object, version bumped, and the write reaches the tensor's base and
        every view or ``.data``/``detach()`` alias of it (hookgrad/_views.py). A meta
        Tensor stays one: it keeps no values (PyTorch's writes to it do nothing)."""
        if self._arr.__class__ is MetaArray:  # no values to keep or pass to views
            self._data = MetaArray(arr.shape, arr.dtype)
            self._version += 1
            return self
        self._data = arr
        self._version += 1
        if self._view is not None or self._views is not None:
            _views.propagate(self)
        return self

    @property
    def _base(self):
        """The tensor this view was made from (the root, for a view of a view), or None."""
        info = self._view
        return info.base if info is not None and info.diff else None

    @_base.setter
    def _base(self, source):
        # internal: ``self`` becomes a plain alias of ``source`` (writes reach it)
        _views.alias(self, source, diff=False, shared=False)

    def detach(self):
        """A new leaf sharing this tensor's data and version counter (in-place writes on it
        go through to this tensor)."""
        if DISPATCH[0]:  # an op the entered dispatch modes see (``aten.detach.default``)
            return DISPATCH[1]("detach.default", _detached, (self,), {})
        return _detached(self)

    def detach_(self):
        """Make this tensor a leaf that does not require grad, in place (not for views)."""
        info = self._view
        if info is not None and info.diff:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        if self.grad_fn is not None:
            self.grad_fn = None
            self._output_nr = 0
        self._requires_grad = False
        return self

    @property
    def data(self):
        t = Tensor._wrap(_stop_gradient(self._data))
        return _views.alias(t, self, diff=False, shared=False)

    @data.setter
    def data(self, value):
        arr = value._data if isinstance(value, Tensor) else jnp.asarray(value)
        self._data = arr
        _views.new_storage(self)

    def type_as(self, other):
        return self.to(other.dtype)

    # NOTE: by identity, though ``__eq__`` (attached by the op table) is elementwise, as
    # PyTorch: Tensors are dict keys and set members (hooks, optimizers, ModTracker)
    __hash__ = object.__hash__

    # ---- copying and pickling
    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.  If you were "
                               "attempting to deepcopy a module, this may be because of a "
                               "torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        new = object.__new__(type(self))
        new._data, new.grad_fn, new._output_nr = self._data, None, 0
        new._requires_grad, new._version = self._requires_grad, 0
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            if k not in _NOT_COPIED:
                new.__dict__[k] = copy.deepcopy(v, memo)
        return new

    def __reduce_ex__(self, protocol):
        warn_if_has_hooks(self)
        state = {k: v for k, v in self.__dict__.items() if k not in _NOT_COPIED}
        return (_rebuild, (type(self), np.asarray(self._data), self._requires_grad, state))

    @property
    def placements(self):
        """How the Tensor's array lies on its device mesh: a ``Shard(dim)`` or
        ``Replicate()`` per mesh dimension (``hookgrad.distributed.tensor``), or None for
        an array that is not on a mesh."""
        fill = PLACEMENTS[0]
        return None if fill is None or isinstance(self._data, jax.core.Tracer) else \
            fill(self._data)


# PyTorch's Tensor names hookgrad lacks say so when read; any other name gets Python's
# plain AttributeError, as on PyTorch's Tensor (not a ``__getattr__``: a class with one
# loses CPython's specialized attribute reads on every instance)
_missing.stub_missing(Tensor, "torch.Tensor", _tensor_missing.NAMES)


# NOTE: ``backward()`` runs the engine, which sits above the Tensor; the engine's layer
# (hookgrad._engine.backward) fills this slot when imported, so the Tensor imports
# nothing above it. One-element list: a stable object that importers may hold.
BACKWARD = [None]
# the dispatch modes' stage, ``[the entered modes, modes.call]``: ``_ops/stages/modes.py``
# (above) fills it
DISPATCH = [(), None]


def _detached(t):  # ``t.detach()``: a new leaf aliasing ``t`` (host-held: the same memory)
    a = t._arr if t._arr.__class__ is Host else _stop_gradient(t._data)  # a Host never changes
    return _views.alias(Tensor._wrap(a), t, diff=False, shared=True)


# ``hookgrad._torch_function`` (above) fills this: called with each new Tensor subclass
SUBCLASSED = [None]
# what a copy (deepcopy, pickle) leaves behind: its graph node, hooks and aliasing
_NOT_COPIED = frozenset(("_acc", "_backward_hooks", "_post_acc_hooks", "_view", "_views", "_gen"))
# ``hookgrad.distributed.tensor`` fills this with the function reading a sharded array's
# placements (the placement types live there, above the Tensor)
PLACEMENTS = [None]


def wrap_as(cls, arr):
    """``arr`` as a Tensor of class ``cls`` (a Tensor subclass a traced program's output had
    on the way in), or a plain Tensor when the class cannot be assigned (its layout
    differs)."""
    t = Tensor._wrap(arr)
    if cls is not Tensor:
        try:
            t.__class__ = cls
        except TypeError:
            pass
    return t


def typename(obj):
    """The type name messages give, as ``torch.typename``: ``'hookgrad.FloatTensor'`` for a
    Tensor, else the class's qualified name (bare for builtins)."""
    if isinstance(obj, Tensor):
        return _dtype.legacy_type_name(obj._data.dtype, "hookgrad")
    t = type(obj)
    module = getattr(t, "__module__", None)
    if module in ("builtins", "__builtin__", None):
        return t.__qualname__
    return f"{module}.{t.__qualname__}"


def _stop_gradient(arr):
    # where JAX differentiates (functional mode) a detached value must stop its gradient
    backend = _mode.state.backend
    return arr if backend is None else backend.stop_gradient(arr)


_setattr, _delattr = object.__setattr__, object.__delattr__
_set_arr, _set_fn, _set_nr, _set_rg, _set_version = (Tensor.__dict__[name].__set__ for name in (
    "_arr", "grad_fn", "_output_nr", "_requires_grad", "_ver"))


def bump_version(t):
    """``t._version += 1``, returning the new version, in one frame (the property's getter
    and setter and ``Tensor.__setattr__`` are three): a loop's every write bumps one. As
    ``__setattr__``, the write is counted (``_watch.WRITES``); a moving version
    (``_watch.Moving``, a steady compiled step's) is read."""
    v = t._ver
    v = (v.value() if v.__class__ is Moving else v) + 1
    _WRITES[0] += 1
    _set_version(t, v)
    return v


def set_version(t, version):
    """``t._version = version`` (an alias sharing a bumped counter), counted as
    ``Tensor.__setattr__`` counts it, in one frame."""
    _WRITES[0] += 1
    _set_version(t, version)


def _fresh(t, arr, grad_fn, output_nr, requires_grad):
    """Fill the slots of a Tensor just made (no one else holds it: not a counted write)."""
    _set_arr(t, arr)
    _set_fn(t, grad_fn)
    _set_nr(t, output_nr)
    _set_rg(t, requires_grad)
    _set_version(t, 0)


def _init(t, arr):
    _fresh(t, arr, None, 0, False)


def _rebuild(cls, array, requires_grad, state):
    t = cls._wrap(jnp.asarray(array))
    t._requires_grad = requires_grad
    t.__dict__.update(state)
    return t


def _flatten(t):
    return (t._data,), (type(t), t._requires_grad)


def _unflatten(aux, children):
    cls, requires_grad = aux
    t = cls._wrap(children[0])
    _set_rg(t, requires_grad)
    return t


jax.tree_util.register_pytree_node(Tensor, _flatten, _unflatten)
