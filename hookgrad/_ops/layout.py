"""Conversion and layout: ``to``, ``cpu``, ``cuda``, ``contiguous``, the dtype casts
(``float()``, ``long()``, ...), ``type``, ``stride``, ``storage_offset``, ``set_``, ``resize_``.
"""
from __future__ import annotations

import functools
import operator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .. import _device, _dtype, _layout, _meta, _storage, _views
from .._tensor import Pending, Size, Tensor, placed
from .dispatch import apply
from .registry import defop, export
from .shape import TENSOR_PROPERTIES, clone, wrap_dim
from .. import _errors

_FIXED_JAX = _dtype.FIXED_JAX
TO_DTYPE = defop("to_dtype", lambda x, dtype: x.astype(dtype), "ToCopyBackward0", ())
TO_DEVICE = defop("to_device", lambda x, device: _device.move(x, device), "ToCopyBackward0",
                  (), jit=False)
TO_META = defop("to_meta", _meta.like, "ToCopyBackward0", (), jit=False)

@export(function=False)
def contiguous(self, memory_format=None) -> Tensor:
    """``contiguous()``: ``self`` if its elements lie in C order in its storage, else a
    copy that does (``CloneBackward0``)."""
    return self if self.is_contiguous() else clone(self)


def _to_args(args, kwargs):
    """(dtype, device, copy) from ``to``'s three signatures, with torch's TypeError."""
    known = {"dtype", "device", "non_blocking", "copy", "memory_format"}
    bad = [k for k in kwargs if k not in known]
    if bad or len(args) > 4:
        got = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}"
                                                            for k, v in kwargs.items()])
        raise TypeError(f"to() received an invalid combination of arguments - got ({got}), "
                        "but expected one of:\n * (device device = None, dtype dtype = None, "
                        "bool non_blocking = False, bool copy = False, *, memory_format "
                        "memory_format = None)\n * (dtype dtype, bool non_blocking = False, bool "
                        "copy = False, *, memory_format memory_format = None)\n * (Tensor tensor, "
                        "bool non_blocking = False, bool copy = False, *, memory_format "
                        "memory_format = None)\n")
    dtype, device, copy = kwargs.get("dtype"), kwargs.get("device"), kwargs.get("copy", False)
    flags = []  # non_blocking, copy (positional, after the device/dtype/tensor)
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, bool):
            flags.append(a)
        elif isinstance(a, (str, int, _dtype.device)):  # an int is an accelerator index
            device = a
        elif a is not None:
            dtype = a
    if len(flags) > 1:
        copy = flags[1]
    return dtype, device, copy


@export(function=False)
def to(self, *args, **kwargs) -> Tensor:
    """``to(dtype)``, ``to(device, dtype)``, ``to(other)``; ``non_blocking``, ``copy``.

    Returns ``self`` when nothing changes (and ``copy=False``), else a new tensor whose
    backward node is ``ToCopyBackward0``. A device with no JAX backend raises PyTorch's
    error (``AssertionError: Torch not compiled with CUDA enabled`` for ``'cuda'``).

    Example::

        >>> x = hookgrad.ones(2)
        >>> x.to(hookgrad.float16).dtype
        hookgrad.float16
        >>> x.to("cpu") is x
        True
    """
    if not kwargs and len(args) == 1 or not args and len(kwargs) == 1:
        # ``x.to(dtype)``, ``x.to(dtype=d)``: a model's casts
        a = args[0] if args else kwargs.get("dtype")
        c = a.__class__
        if c is _dtype.dtype:
            return _to_dtype(self, a)
        if c is _device.device and a._type == "cpu" and a._index is None and args:
            # ``x.to(y.device)`` where ``x`` is on the CPU already (a model's, per step): no
            # copy, as below, without parsing the signatures or finding the JAX device
            here = self.device
            if here._type == "cpu" and here._index is None:
                return self
    dtype, device, copy = _to_args(args, kwargs)
    if device is not None and (self.is_meta or _device.is_meta(device)):
        return _to_meta(self, dtype, device)
    target = None if device is None else _dtype.jax_device(device)  # raises before any work
    out = self
    if dtype is not None:
        jd = _dtype.to_jax(dtype)
        if jd != out._arr.dtype:
            out = apply(TO_DTYPE, (out,), {"dtype": jd})
    if target is not None and not _on(out._arr, target):
        out = apply(TO_DEVICE, (out,), {"device": target})
    if out is self and (copy or target is not None and _another_cpu(self, device)):
        out = apply(TO_DTYPE, (out,), {"dtype": out._arr.dtype})  # (computes nothing yet)
    return out


def _another_cpu(self, device):
    """Whether ``device`` is a CPU that PyTorch tells from the tensor's own, JAX's place
    being the same: a CPU tensor's device is ``cpu``, without an index, so ``to('cpu:0')``
    copies, as PyTorch's does."""
    d = device if device.__class__ is _device.device else _device.device(device)
    return d.type == "cpu" and d.index is not None and self.device != d


def _to_meta(self, dtype, device):
    # to the meta device: shape and dtype only; from it: no data to copy, as PyTorch says
    if not _device.is_meta(device):
        raise NotImplementedError(_meta.NO_DATA)
    out = self if self.is_meta else apply(TO_META, (self,))
    return out if dtype is None else to(out, dtype)


def _on(arr, jax_device):
    if arr.__class__ is Pending:  # asking computes nothing
        arr = placed(arr)
    if isinstance(arr, jax.core.Tracer):  # traced: placement is the compiled program's
        return _dtype.device_of(jax_device).type == jax.default_backend().replace("gpu", "cuda")
    return arr.devices() == {jax_device}


def _to_dtype(self, dt):
    # ``to(self, dt)`` without parsing ``to``'s three signatures (a loop's ``.float()``)
    jd = _FIXED_JAX.get(dt)
    if jd is None:
        jd = _dtype.to_jax(dt)
    return self if jd == self._arr.dtype else apply(TO_DTYPE, (self,), {"dtype": jd})


def _cast(dt):
    def method(self, memory_format=None) -> Tensor:
        return _to_dtype(self, dt)
    return method


@export(function=False)
def cpu(self, memory_format=None) -> Tensor:
    """This tensor on the CPU (``self`` when it is already there)."""
    return to(self, "cpu")


@export(function=False)
def cuda(self, device=None, non_blocking=False, memory_format=None) -> Tensor:
    """This tensor on the current GPU, or on ``device`` (an index, ``'cuda:1'``, a device)."""
    from .._device import cuda_target
    return to(self, cuda_target(device))


for _name, _dt in (("float", "float32"), ("double", "float64"), ("half", "float16"),
                   ("bfloat16", "bfloat16"), ("long", "int64"), ("int", "int32"),
                   ("bool", "bool"), ("short", "int16"), ("byte", "uint8")):
    from .. import _dtype as _d
    export(_cast(getattr(_d, _dt)), name=_name, function=False)


# --------------------------------------------------------------------------- layout queries

# PyTorch's legacy tensor type names (``x.type()``), by dtype name
_TYPE_NAMES = {k: v + "Tensor" for k, v in _dtype.TORCH_KINDS.items()}
_BY_TYPE_NAME = {v: k for k, v in _TYPE_NAMES.items()}


def _type_string(t):
    # NOTE: "torch." as PyTorch prints it, so ported code comparing x.type() strings runs
    cuda = ".cuda" if t.device.type == "cuda" else ""
    return f"torch{cuda}.{_TYPE_NAMES.get(t.dtype.name, 'Tensor')}"


def _parse_type(s):
    """(dtype name, cuda?) of a type string such as 'torch.cuda.FloatTensor'."""
    parts = s.split(".")
    if len(parts) in (2, 3) and parts[0] in ("torch", "hookgrad") and \
            parts[-1] in _BY_TYPE_NAME and (len(parts) == 2 or parts[1] == "cuda"):
        return _BY_TYPE_NAME[parts[-1]], len(parts) == 3
    raise ValueError(f"invalid type: {s!r}")


@export(name="type", function=False)
def _type(self, dtype=None, non_blocking=False, **kwargs) -> str | Tensor:
    """``type(dtype=None, non_blocking=False)``: without ``dtype``, the type name as
    PyTorch spells it (``'torch.FloatTensor'``, ``'torch.cuda.LongTensor'``, ...);
    with a dtype or a type name, the tensor converted to it (itself if already of it).

    >>> hookgrad.ones(2).type()
    'torch.FloatTensor'
    """
    from .. import _dtype
    if dtype is None:
        return _type_string(self)
    device = None
    if isinstance(dtype, type) and isinstance(getattr(dtype, "dtype", None), _dtype.dtype):
        dtype = dtype.dtype  # a legacy type: hookgrad.FloatTensor
    if isinstance(dtype, str):
        name, cuda = _parse_type(dtype)
        dtype = getattr(_dtype, name)
        device = "cuda" if cuda else None
    elif not isinstance(dtype, _dtype.dtype):
        raise TypeError("dtype must be a type, str, or dtype object")
    out = to(self, dtype)
    return out if device is None else to(out, device)


@export(function=False)
def stride(self, dim=None) -> tuple[int, ...] | int:
    """``stride(dim=None)``: the step in elements between neighbours along each dimension
    in the storage: a view's strides come from its chain of view ops over its base's
    C-contiguous layout, as PyTorch computes them."""
    strides = _views.geometry(self)[1]
    return strides if dim is None else strides[wrap_dim(dim, self.ndim)]


@export(function=False)
def storage_offset(self) -> int:
    """``storage_offset()``: where the first element lies in the base's storage (0 for a
    tensor that is not a view)."""
    return _views.geometry(self)[2]


@export(function=False)
def data_ptr(self) -> int:
    """``data_ptr()``: the address of the first element in host memory, where
    ``storage_offset() * element_size()`` bytes past the storage's start (its
    ``untyped_storage().data_ptr()``) the elements lie as ``stride()`` says. It stays valid
    while the storage's Tensor lives and is not written to (an in-place write gives it a
    new array). 0 for a meta Tensor and for one without elements; a Tensor on an
    accelerator raises ``NotImplementedError`` (copy it with ``.cpu()`` first), a traced one
    ``TracedValueError``."""
    return _storage.data_ptr(self)


@export(function=False)
def untyped_storage(self) -> Any:  # an UntypedStorage
    """``untyped_storage()``: the bytes this Tensor's elements lie in (shared with its base
    and the views of it): ``data_ptr()``, ``nbytes()``, ``device``."""
    return _storage.UntypedStorage._of(self)


@export(function=False)
def storage(self) -> Any:  # a TypedStorage
    """``storage()``: the deprecated typed storage (warns once, as PyTorch's); prefer
    ``untyped_storage()``."""
    _storage.warn_typed_storage(2)
    return _storage.TypedStorage._of(self)


TENSOR_PROPERTIES.update({
    "layout": lambda self: _layout.strided,  # dense: sparse tensors do not exist here
    "itemsize": lambda self: self.element_size(),
    "nbytes": lambda self: self.numel() * self.element_size(),
})


# --------------------------------------------------------------------------- set_, resize_


def _replace_data(self, arr):
    # the tensor gets a new array of another shape: no write-through to a base
    self._data = arr
    self._version += 1
    _views.new_storage(self)
    return self


@export(function=False)
def set_(self, source=None) -> Tensor:
    """``set_(source=None)``: make this tensor hold ``source``'s value (shape, dtype, data);
    with no argument, an empty tensor. In place: the version counter goes up.

    Differentiating through ``set_`` raises PyTorch's "derivative for set_ is not
    implemented" in backward. NOTE: hookgrad arrays are values, not shared storage, so
    later in-place writes to one of the two tensors are not seen by the other.

    >>> a = hookgrad.ones(2); a.set_(hookgrad.zeros(3)); a.shape
    hookgrad.Size([3])
    """
    from .._autograd.grad_mode import is_grad_enabled
    from .stages.inplace import _check_inplace
    if source is None:
        arr = jnp.zeros((0,), self._data.dtype)
    elif isinstance(source, Tensor):
        arr = source._data
    else:
        raise TypeError(f"set_() received an invalid combination of arguments - got "
                        f"({type(source).__name__}), but expected one of: (), (Tensor source)")
    record = is_grad_enabled() and (self._requires_grad or
                                    (source is not None and source._requires_grad))
    _check_inplace(self, record)
    _replace_data(self, arr)
    if self.grad_fn is None:
        # as PyTorch: a leaf's new data gets a new AccumulateGrad; edges taken before
        # (get_gradient_edge) keep pointing at the old one
        if "_acc" in self.__dict__:
            del self._acc
    if record:  # as PyTorch: a node that fails if backward reaches it
        from .._autograd.error_node import _DelayedError
        node = _DelayedError("derivative for set_ is not implemented",
                             ((tuple(arr.shape), arr.dtype),))
        node._next = (source._edge() if source is not None else None,)
        self.grad_fn, self._output_nr, self._requires_grad = node, 0, True
    return self


def _sizes(args, name):
    sizes = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list, Size)) else args
    for s in sizes:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, "
                            f"not {type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(sizes)}")
    return tuple(int(s) for s in sizes)


@export(function=False)
def resize_(self, *sizes, memory_format=None) -> Tensor:
    """``resize_(*sizes)``: give this tensor the shape ``sizes``, keeping its first elements
    in row-major order. New elements are zeros (PyTorch leaves them uninitialized). The
    version counter goes up when the shape changes. A tensor that requires grad cannot be
    resized.

    >>> x = hookgrad.arange(6.); x.resize_(2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    """
    shape = _sizes(sizes, "resize_")
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if shape == tuple(self._data.shape):
        return self
    flat = self._data.reshape(-1)
    n = int(np.prod(shape, dtype=np.int64))
    if n > flat.shape[0]:
        flat = jnp.concatenate([flat, jnp.zeros((n - flat.shape[0],), flat.dtype)])
    return _replace_data(self, flat[:n].reshape(shape))


@export
def resize_as_(input, the_template, memory_format=None) -> Tensor:  # noqa: A002
    """``resize_as_(tensor)``: ``resize_`` to ``tensor``'s shape."""
    return resize_(input, tuple(the_template.shape))


# the deprecated out-of-place resize: PyTorch's autograd Function ``Resize``
_RESIZE = defop("resize_copy", lambda x, shape: x.reshape(shape), "ResizeBackward", ())


@export(function=False)
def resize(self, *sizes) -> Tensor:
    """Deprecated: ``self`` reshaped to ``sizes``, which must hold as many elements
    (``ResizeBackward``).

    >>> hookgrad.arange(6.).resize(2, 3).grad_fn    # with requires_grad
    """
    return _resize_copy(self, sizes, "resize")


@export(function=False)
def resize_as(self, tensor) -> Tensor:
    """Deprecated: ``self`` reshaped to ``tensor``'s shape, which must hold as many
    elements (``ResizeBackward``)."""
    return _resize_copy(self, tuple(tensor.shape), "resize_as")


def _resize_copy(self, sizes, name):
    _errors.warn(f"non-inplace {name} is deprecated", UserWarning)
    # NOTE: as PyTorch's ``Resize``: the sizes as given (a tuple is not unpacked)
    n = functools.reduce(operator.mul, sizes, 1)
    if n != self.numel():
        raise RuntimeError(f"requested resize to {'x'.join(map(str, sizes))} ({n} elements in "
                           f"total), but the given tensor has a size of "
                           f"{'x'.join(map(str, self.shape))} ({self.numel()} elements). "
                           "autograd's resize can only change the shape of a given tensor, "
                           "while preserving the number of elements. ")
    return apply(_RESIZE, (self,), {"shape": sizes})
