"""Padding layers: constant (and zero), reflection, replication and circular padding of the
last 1, 2 or 3 dimensions, each a module over ``F.pad``.

``padding`` is an int (the same on every side) or PyTorch's tuple
``(left, right[, top, bottom[, front, back]])``.
"""
from .. import functional as F
from ._utils import _ntuple
from .module import Module
from ..._arguments import own_init

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d"]


class _PadNd(Module):
    _mode = "constant"
    _dims = 1   # how many trailing dimensions are padded

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(2 * self._dims)(padding)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


@own_init
class ConstantPad1d(_ConstantPadNd):
    """Pads the last dimension with ``value``: ``ConstantPad1d(padding, value)``."""


@own_init
class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dimensions with ``value``: ``ConstantPad2d(padding, value)``,
    ``padding = (left, right, top, bottom)``."""
    _dims = 2


@own_init
class ConstantPad3d(_ConstantPadNd):
    """Pads the last three dimensions with ``value``: ``ConstantPad3d(padding, value)``,
    ``padding = (left, right, top, bottom, front, back)``."""
    _dims = 3


class _ZeroPad:
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


@own_init
class ZeroPad1d(_ZeroPad, ConstantPad1d):
    """Pads the last dimension with zeros: ``ZeroPad1d(padding)``."""


@own_init
class ZeroPad2d(_ZeroPad, ConstantPad2d):
    """Pads the last two dimensions with zeros: ``ZeroPad2d(padding)``,
    ``padding = (left, right, top, bottom)``.

    Example::

        >>> nn.ZeroPad2d((1, 1, 2, 0))(hookgrad.randn(1, 1, 3, 3)).shape
        hookgrad.Size([1, 1, 5, 5])
    """


@own_init
class ZeroPad3d(_ZeroPad, ConstantPad3d):
    """Pads the last three dimensions with zeros: ``ZeroPad3d(padding)``."""


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


@own_init
class ReflectionPad1d(_ReflectionPadNd):
    """Pads the last dimension with its reflection (the edge not repeated)."""


@own_init
class ReflectionPad2d(_ReflectionPadNd):
    """Pads the last two dimensions with their reflection: ``padding = (left, right, top,
    bottom)``."""
    _dims = 2


@own_init
class ReflectionPad3d(_ReflectionPadNd):
    """Pads the last three dimensions with their reflection."""
    _dims = 3


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


@own_init
class ReplicationPad1d(_ReplicationPadNd):
    """Pads the last dimension by repeating its edge values."""


@own_init
class ReplicationPad2d(_ReplicationPadNd):
    """Pads the last two dimensions by repeating their edge values."""
    _dims = 2


@own_init
class ReplicationPad3d(_ReplicationPadNd):
    """Pads the last three dimensions by repeating their edge values."""
    _dims = 3


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input):
        lo = self._dims + 1
        if input.ndim not in (lo, lo + 1):
            raise ValueError(f"expected {lo}D or {lo + 1}D input (got {input.ndim}D input)")
        return super().forward(input)


@own_init
class CircularPad1d(_CircularPadNd):
    """Pads the last dimension circularly (the other end's values wrap around)."""


@own_init
class CircularPad2d(_CircularPadNd):
    """Pads the last two dimensions circularly."""
    _dims = 2


@own_init
class CircularPad3d(_CircularPadNd):
    """Pads the last three dimensions circularly."""
    _dims = 3


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
