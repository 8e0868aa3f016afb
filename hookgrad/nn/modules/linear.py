"""Linear layers: ``Identity``, ``Linear``, ``Bilinear`` (PyTorch's shapes, defaults and
initialization; random numbers from ``hookgrad.random``)."""
import math

import jax
import jax.numpy as jnp
import numpy as np

from ... import _device, _dtype, random
from ..._arguments import keep
from ..._tensor import Tensor
from .. import functional as F
from ..parameter import Parameter
from ._utils import _param as _utils_param
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear"]


def _uniform(shape, bound, dtype):
    """An array of ``shape`` from U(-bound, bound), drawn with a key of the global PRNG."""
    u = random.draw("uniform", shape)
    if isinstance(u, np.ndarray):  # drawn on the host: cast and transfer, no XLA program
        return _dtype.from_host(((u * 2 - 1) * bound).astype(dtype))
    return ((u * 2 - 1) * bound).astype(dtype)


def _param(shape, bound, device, dtype):
    if _device.is_meta(device if device is not None else _device.default()):
        return _utils_param(shape, device, dtype)  # nothing drawn on the meta device
    dt = _dtype.to_jax(dtype if dtype is not None else _dtype.get_default_dtype())
    return Parameter(Tensor._wrap(_device.place(_uniform(shape, bound, dt), device)))


def _uniform_(t, bound):
    """Refill ``t`` in place from U(-bound, bound) (a meta Tensor: nothing to fill)."""
    arr = t._data
    if t.is_meta:
        return t
    t.data = Tensor._wrap(jax.device_put(_uniform(arr.shape, bound, arr.dtype),
                                         next(iter(arr.devices())))
                          if not isinstance(arr, jax.core.Tracer)
                          else _uniform(arr.shape, bound, arr.dtype))
    return t


def _bound(fan_in):
    # kaiming_uniform_(a=sqrt(5)) and the bias rule both give 1/sqrt(fan_in)
    return 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0


class Identity(Module):
    """A placeholder that returns its input; its arguments are ignored.

    Example::

        >>> nn.Identity(54, unused_argument1=0.1)(hookgrad.ones(2)) is not None
        True
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """Applies ``y = x A^T + b``.

    ::

        Linear(in_features, out_features, bias=True, device=None, dtype=None)

    ``weight`` has shape ``(out_features, in_features)``, ``bias`` ``(out_features,)``;
    both start from U(-1/sqrt(in_features), 1/sqrt(in_features)), as PyTorch's
    ``kaiming_uniform_(a=sqrt(5))`` gives. Input ``(*, in_features)``, output
    ``(*, out_features)``.

    Example::

        >>> m = nn.Linear(20, 30)
        >>> m(hookgrad.randn(128, 20)).shape
        hookgrad.Size([128, 30])
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        bound = _bound(in_features)
        self.weight = _param((out_features, in_features), bound, device, dtype)
        if bias:
            self.bias = _param((out_features,), bound, device, dtype)
        else:
            self.register_parameter("bias", None)

    def reset_parameters(self):
        """Re-draw ``weight`` and ``bias`` from U(-1/sqrt(in_features), 1/sqrt(in_features))."""
        bound = _bound(self.in_features)
        _uniform_(self.weight, bound)
        if self.bias is not None:
            _uniform_(self.bias, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """Applies ``y = x1^T A x2 + b``.

    ::

        Bilinear(in1_features, in2_features, out_features, bias=True, device=None, dtype=None)

    ``weight``: ``(out_features, in1_features, in2_features)``; ``bias``:
    ``(out_features,)``; both from U(-1/sqrt(in1_features), 1/sqrt(in1_features)).
    Inputs ``(*, in1_features)`` and ``(*, in2_features)``, output ``(*, out_features)``.

    Example::

        >>> m = nn.Bilinear(20, 30, 40)
        >>> m(hookgrad.randn(128, 20), hookgrad.randn(128, 30)).shape
        hookgrad.Size([128, 40])
    """

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        keep(self, locals(), "in1_features", "in2_features", "out_features")
        bound = _bound(in1_features)
        self.weight = _param((out_features, in1_features, in2_features), bound, device, dtype)
        if bias:
            self.bias = _param((out_features,), bound, device, dtype)
        else:
            self.register_parameter("bias", None)

    def reset_parameters(self):
        """Re-draw ``weight`` and ``bias`` from U(-1/sqrt(in1), 1/sqrt(in1))."""
        bound = _bound(self.weight.size(1))
        _uniform_(self.weight, bound)
        if self.bias is not None:
            _uniform_(self.bias, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
