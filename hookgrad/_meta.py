"""The ``meta`` device's array: a shape and a dtype, and no data.

A Tensor on the meta device holds a :class:`MetaArray` where others hold a ``jax.Array``.
Ops on it run the op's forward under ``jax.eval_shape`` (``hookgrad/_ops/dispatch.py``),
so shapes and dtypes propagate and nothing is computed or allocated; reading values
raises PyTorch's errors.
"""
import math

import jax
import numpy as np

NO_DATA = "Cannot copy out of meta tensor; no data!"
NO_ITEM = "Tensor.item() cannot be called on meta tensors"


class MetaArray:
    """The abstract value of an array on the meta device (what ``jax.eval_shape`` gives)."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def __repr__(self):
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return concrete(jax.eval_shape(lambda a: a.reshape(shape), self.aval))

    def astype(self, dtype):
        return MetaArray(self.shape, dtype)

    @property
    def aval(self):
        return jax.ShapeDtypeStruct(self.shape, self.dtype)

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(NO_DATA)

    def item(self):
        raise RuntimeError(NO_ITEM)

    def __bool__(self):
        raise RuntimeError(NO_ITEM)

    def block_until_ready(self):
        return self


def abstract(v):
    """What ``jax.eval_shape`` takes for ``v``: a ShapeDtypeStruct for a MetaArray, else
    ``v`` itself."""
    return jax.ShapeDtypeStruct(v.shape, v.dtype) if v.__class__ is MetaArray else v


def concrete(v):
    """A MetaArray for each ShapeDtypeStruct in the (possibly nested) result ``v``."""
    if isinstance(v, (tuple, list)):
        return type(v)(concrete(x) for x in v)
    return MetaArray(v.shape, v.dtype) if hasattr(v, "shape") else v


def like(arr):
    """A MetaArray with ``arr``'s shape and dtype (``arr`` a JAX or NumPy array)."""
    return MetaArray(arr.shape, arr.dtype)
