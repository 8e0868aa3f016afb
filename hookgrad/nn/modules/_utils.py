"""Helpers shared by the layer classes: making parameters and buffers with PyTorch's
``device``/``dtype`` factory arguments, and PyTorch's int-or-tuple normalisation."""
import jax
import jax.numpy as jnp
import numpy as np

from ... import _device, _dtype, _meta
from ..._tensor import Tensor
from ..parameter import Parameter


def _array(shape, device, dtype, fill=0.0):
    # built in NumPy and transferred: no compilation per parameter shape
    # on the device given, else the default one (``with hookgrad.device("meta"):``)
    dt = _dtype.to_jax(dtype if dtype is not None else _dtype.get_default_dtype())
    if _device.is_meta(device if device is not None else _device.default()):
        return _meta.MetaArray(tuple(shape), dt)
    return _device.place(np.full(tuple(shape), fill, np.dtype(dt)), device)


def _param(shape, device=None, dtype=None, fill=0.0):
    """A new ``Parameter`` of ``shape`` (values set by the layer's ``reset_parameters``)."""
    return Parameter(Tensor._wrap(_array(shape, device, dtype, fill)))


def _tensor(shape, device=None, dtype=None, fill=0.0):
    return Tensor._wrap(_array(shape, device, dtype, fill))


def _ntuple(n):
    def parse(x):
        if isinstance(x, (list, tuple)):
            return tuple(x)
        return (x,) * n
    return parse


_single, _pair, _triple = _ntuple(1), _ntuple(2), _ntuple(3)


def _nondefault_repr(module, defaults):
    """``", name=value"`` for each ``(name, default)`` whose attribute differs from the
    default: the tail of PyTorch's ``extra_repr`` for layers with many options."""
    return "".join(f", {name}={getattr(module, name)!r}" for name, default in defaults
                   if getattr(module, name) != default)
