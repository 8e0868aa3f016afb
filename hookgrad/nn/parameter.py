"""``Parameter`` (a leaf Tensor a Module registers) and ``Buffer``.

Mirrors ``torch.nn.parameter``: a ``Parameter`` is a Tensor subclass that shares its
data with the tensor it was made from but is always a fresh leaf (made from a Tensor
subclass such as a DTensor, it is that subclass's detached Tensor flagged as a parameter);
``Buffer(t)`` returns a plain Tensor flagged as a buffer (``isinstance(t, Buffer)`` checks
the flag), which a Module registers as a buffer when it is assigned as an attribute.
"""
import copy

import jax
import jax.numpy as jnp

from .._tensor import Size, Tensor, _flatten, _unflatten
from .._torch_function import _disabled_torch_function_impl
from .._ops import linear_rows as _linear_rows

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"]


def _empty():
    from .. import _dtype
    return Tensor._wrap(jnp.zeros((0,), _dtype.to_jax(_dtype.get_default_dtype())))


# the per-Tensor state a Tensor's __dict__ may hold: the private class defaults that an
# instance overrides (``_acc``, ``_grad``, ``_view``, ...)
_TENSOR_STATE = frozenset(k for k, v in vars(Tensor).items()
                          if k.startswith("_") and not k.startswith("__") and
                          (v is None or isinstance(v, (bool, int))))


class _ParameterMeta(type(Tensor)):
    # ``Parameter(t)`` of a Tensor subclass (a DTensor) is ``t`` detached and flagged as a
    # parameter, as in PyTorch: isinstance checks the flag
    def __instancecheck__(cls, instance):
        if type.__instancecheck__(cls, instance):
            return True
        return cls is Parameter and isinstance(instance, Tensor) and \
            "_is_param" in instance.__dict__


class Parameter(Tensor, metaclass=_ParameterMeta):
    """A kind of Tensor that is a module parameter.

    ::

        Parameter(data=None, requires_grad=True)

    Assigning a ``Parameter`` as a Module attribute registers it: it appears in
    ``parameters()`` and ``state_dict()``. The parameter shares ``data``'s array but is
    always a leaf of the autograd graph, whatever ``data``'s history; ``requires_grad``
    is ``True`` by default, also under ``no_grad``.

    Example::

        >>> w = hookgrad.nn.Parameter(hookgrad.zeros(2, 3))
        >>> w.requires_grad, w.is_leaf
        (True, True)
    """

    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data=None, requires_grad=True, **state):
        if cls is not Parameter or type(data) in (Tensor, Parameter) or \
                not isinstance(data, Tensor):
            return Tensor.__new__(cls)
        # a Tensor subclass keeps its class (a DTensor stays one): detached, flagged
        t = data.detach().requires_grad_(requires_grad)
        t._is_param = True
        return t

    def __init__(self, data=None, requires_grad=True, **state):
        # NOTE: a Tensor keeps hookgrad's rarely-set state (its AccumulateGrad, hooks, view
        # links) in its __dict__; code that rebuilds a Parameter from another one's __dict__
        # (accelerate's init_empty_weights: ``cls(p.to(device), **p.__dict__)``) passes it
        # back here, where it is not the new Parameter's: ignored. Anything else is an error.
        unknown = [k for k in state if k not in _TENSOR_STATE]
        if unknown:
            raise TypeError(f"Parameter.__init__() got an unexpected keyword argument "
                            f"'{unknown[0]}'")
        if data is None:
            data = _empty()
        elif not isinstance(data, Tensor):
            data = Tensor(data)
        Tensor.__init__(self, data)
        if requires_grad:
            self.requires_grad_(True)

    def __deepcopy__(self, memo):
        # as PyTorch: a copy of the data with the same requires_grad; .grad and hooks stay
        if id(self) in memo:
            return memo[id(self)]
        new = type(self)(Tensor._wrap(self._data), self._requires_grad)
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            if k in ("_acc", "_backward_hooks", "_post_acc_hooks", "_base", "_grad"):
                continue
            new.__dict__[k] = copy.deepcopy(v, memo)
        return new

    def __repr__(self):
        return "Parameter containing:\n" + Tensor.__repr__(self)


class _BufferMeta(type(Tensor)):
    # ``Buffer(t)`` returns a plain Tensor with ``_is_buffer`` set; isinstance checks the flag
    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


# a Parameter is a plain Tensor to ``linear``'s one-pass path (its __torch_function__ is
# the disabled one; a subclass of it is not, and takes the op-by-op path)
_linear_rows.PLAIN.add(Parameter)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A kind of Tensor that is module state but not a parameter (a running mean, a mask).

    ::

        Buffer(data=None, *, persistent=True)

    Assigning it as a Module attribute registers it as a buffer: it appears in
    ``buffers()`` and, when ``persistent``, in ``state_dict()``. The result is a plain
    Tensor (detached from ``data``'s history, same ``requires_grad``) flagged as a buffer.

    Example::

        >>> m = hookgrad.nn.Module()
        >>> m.mask = hookgrad.nn.Buffer(hookgrad.ones(3), persistent=False)
        >>> [n for n, _ in m.named_buffers()], list(m.state_dict())
        (['mask'], [])
    """

    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _empty()
        elif not isinstance(data, Tensor):
            data = Tensor(data)
        t = data.detach()  # shares data (and in-place writes) with ``data``, as a detach
        if data.requires_grad:
            t.requires_grad_(True)
        t.persistent = persistent
        t._is_buffer = True
        return t


jax.tree_util.register_pytree_node(Parameter, _flatten, _unflatten)


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)


class UninitializedTensorMixin:
    """A Tensor without a shape yet: ``materialize(shape)`` gives it zeros of ``shape`` and
    turns it into ``cls_to_become``."""

    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Create the data (zeros of ``shape``) and become a ``cls_to_become``."""
        from .. import _dtype
        dt = _dtype.to_jax(dtype) if dtype is not None else self._data.dtype
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self._data = jnp.zeros(shape, dt)
        self.__class__ = self.cls_to_become

    @property
    def shape(self) -> Size:
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. "
                           "This error usually happens in `load_state_dict` when trying to "
                           "load an uninitialized parameter into an initialized one. Call "
                           "`forward` to initialize the parameters before accessing their "
                           "attributes.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"


def is_lazy(param) -> bool:
    """Whether ``param`` is an uninitialized parameter or buffer."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A ``Parameter`` of a lazy module whose shape is inferred at the first forward.

    ::

        UninitializedParameter(requires_grad=True, device=None, dtype=None)
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Tensor.__new__(cls)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        Parameter.__init__(self, _uninitialized(dtype), requires_grad)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer of a lazy module whose shape is inferred at the first forward.

    ::

        UninitializedBuffer(requires_grad=False, device=None, dtype=None, persistent=True)
    """

    __torch_function__ = _disabled_torch_function_impl

    cls_to_become = Tensor

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        Tensor.__init__(self, _uninitialized(dtype))
        if requires_grad:
            self.requires_grad_(True)
        self.persistent = persistent
        self._is_buffer = True


def _uninitialized(dtype):
    from .. import _dtype
    dt = _dtype.to_jax(dtype if dtype is not None else _dtype.get_default_dtype())
    return Tensor._wrap(jnp.zeros((0,), dt))
