"""``apply_``, ``map_``, ``map2_``: a Python callable applied element by element on the
host, the result written into the tensor (CPU tensors that do not require grad, as in
PyTorch; like PyTorch's, these writes leave the version counter as it is)."""
from __future__ import annotations

import numbers

import jax.numpy as jnp
import numpy as np

from .. import _views
from .._tensor import Tensor
from .registry import export


def _converter(np_dtype):
    """Python's conversion of a callable's result to an element of ``np_dtype``, with
    PyTorch's errors for a non-number and an integer out of range."""
    kind = np_dtype.kind

    def convert(r):
        if not isinstance(r, numbers.Number):
            raise TypeError(f"must be real number, not {type(r).__name__}")
        if kind == "b":
            return bool(r)
        if kind in "iu":
            v, info = int(r), np.iinfo(np_dtype)
            if not info.min <= v <= info.max:
                raise RuntimeError(f"value cannot be converted to type {np_dtype.name} without "
                                   "overflow")
            return v
        return complex(r) if kind == "c" else float(r)
    return convert


def _host_apply(self, name, fn, others):
    if self._requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")
    if self.device.type != "cpu":
        raise RuntimeError(f"{name}_ is only implemented on CPU tensors")
    shape, dtype = tuple(self.shape), np.dtype(self._data.dtype)
    columns = [np.asarray(self._data).reshape(-1).tolist()]
    columns += [np.asarray(o.expand(shape)._data).reshape(-1).tolist() for o in others]
    convert = _converter(dtype)
    out = np.array([convert(fn(*vals)) for vals in zip(*columns)], dtype).reshape(shape)
    version = self._version
    self._write_(jnp.asarray(out))
    self._version = version
    _views.share_version(self)
    return self


@export(function=False)
def apply_(self, callable) -> Tensor:  # noqa: A002 - PyTorch's parameter name
    """``apply_(callable)``: each element ``x`` replaced by ``callable(x)``, in place (a
    Python call per element: slow; CPU tensors only)."""
    return _host_apply(self, "apply_", callable, ())


@export(function=False)
def map_(self, tensor, callable) -> Tensor:  # noqa: A002
    """``map_(tensor, callable)``: each element ``a`` replaced by ``callable(a, b)``, ``b``
    the element of ``tensor`` (broadcast to this shape) at the same place, in place."""
    return _host_apply(self, "map_", callable, (tensor,))


@export(function=False)
def map2_(self, x, y, callable) -> Tensor:  # noqa: A002
    """``map2_(x, y, callable)``: each element ``a`` replaced by ``callable(a, b, c)``, with
    the elements of ``x`` and ``y`` (broadcast) at the same place, in place."""
    return _host_apply(self, "map2_", callable, (x, y))
