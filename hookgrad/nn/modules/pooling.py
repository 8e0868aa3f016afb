"""Pooling layers: ``MaxPool1d/2d/3d``, ``AvgPool1d/2d/3d``, ``AdaptiveAvgPool1d/2d/3d``,
``AdaptiveMaxPool1d/2d/3d``, ``LPPool1d/2d/3d``, ``MaxUnpool1d/2d/3d``,
``FractionalMaxPool2d/3d``."""
from .. import functional as F
from ._utils import _pair, _single, _triple
from ._functional_module import _Stored
from .module import Module
from ..._arguments import keep, own_init

__all__ = ["MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d",
           "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "FractionalMaxPool2d",
           "FractionalMaxPool3d"]


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        keep(self, locals(), "padding", "dilation", "return_indices", "ceil_mode")

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                f", dilation={self.dilation}, ceil_mode={self.ceil_mode}")

    def forward(self, input):
        return self._pool(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool1d(_MaxPoolNd):
    """1D max pooling over ``(N, C, L)``.

    ::

        MaxPool1d(kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                  ceil_mode=False)
    """

    _pool = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """2D max pooling over ``(N, C, H, W)``.

    ::

        MaxPool2d(kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                  ceil_mode=False)

    Example::

        >>> nn.MaxPool2d(3, stride=2)(hookgrad.randn(20, 16, 50, 32)).shape
        hookgrad.Size([20, 16, 24, 15])
    """

    _pool = staticmethod(F.max_pool2d)


class _AvgPoolNd(Module):
    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """1D average pooling over ``(N, C, L)``.

    ::

        AvgPool1d(kernel_size, stride=None, padding=0, ceil_mode=False,
                  count_include_pad=True)
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _one(kernel_size)
        self.stride = _one(stride if stride is not None else kernel_size)
        self.padding = _one(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


def _one(v):
    return tuple(v) if isinstance(v, (list, tuple)) else (v,)


class _AvgPool2dOr3d(_AvgPoolNd):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        keep(self, locals(), "padding", "ceil_mode", "count_include_pad", "divisor_override")

    def forward(self, input):
        return self._pool(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)


@own_init
class AvgPool2d(_AvgPool2dOr3d):
    """2D average pooling over ``(N, C, H, W)``.

    ::

        AvgPool2d(kernel_size, stride=None, padding=0, ceil_mode=False,
                  count_include_pad=True, divisor_override=None)
    """

    _pool = staticmethod(F.avg_pool2d)


class _AdaptiveAvgPoolNd(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"

    def forward(self, input):
        return self._pool(input, self.output_size)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average pooling of ``(N, C, L)`` to ``output_size`` bins."""

    _pool = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average pooling of ``(N, C, H, W)`` to ``output_size`` (int, pair, ``None`` keeps a
    size).

    Example::

        >>> nn.AdaptiveAvgPool2d((5, 7))(hookgrad.randn(1, 64, 8, 9)).shape
        hookgrad.Size([1, 64, 5, 7])
    """

    _pool = staticmethod(F.adaptive_avg_pool2d)


class MaxPool3d(_MaxPoolNd):
    """3D max pooling over ``(N, C, D, H, W)``.

    ::

        MaxPool3d(kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                  ceil_mode=False)
    """

    _pool = staticmethod(F.max_pool3d)


@own_init
class AvgPool3d(_AvgPool2dOr3d):
    """3D average pooling over ``(N, C, D, H, W)``.

    ::

        AvgPool3d(kernel_size, stride=None, padding=0, ceil_mode=False,
                  count_include_pad=True, divisor_override=None)
    """

    _pool = staticmethod(F.avg_pool3d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Average pooling of ``(N, C, D, H, W)`` to ``output_size`` (int, triple, ``None``
    keeps a size)."""

    _pool = staticmethod(F.adaptive_avg_pool3d)


class _AdaptiveMaxPoolNd(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"

    def forward(self, input):
        return self._pool(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling of ``(N, C, L)`` to ``output_size`` bins.

    ::

        AdaptiveMaxPool1d(output_size, return_indices=False)
    """

    _pool = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling of ``(N, C, H, W)`` to ``output_size`` (int, pair, ``None`` keeps a size).

    ::

        AdaptiveMaxPool2d(output_size, return_indices=False)

    Example::

        >>> nn.AdaptiveMaxPool2d((5, 7))(hookgrad.randn(1, 64, 8, 9)).shape
        hookgrad.Size([1, 64, 5, 7])
    """

    _pool = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max pooling of ``(N, C, D, H, W)`` to ``output_size`` (int, triple, ``None`` keeps a
    size).

    ::

        AdaptiveMaxPool3d(output_size, return_indices=False)
    """

    _pool = staticmethod(F.adaptive_max_pool3d)


class _LPPoolNd(_Stored):
    _args = ("norm_type", "kernel_size", "stride", "ceil_mode")

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__(norm_type, kernel_size, stride, ceil_mode)

    def forward(self, input):
        # as PyTorch: a float power (x.pow(2.0), not the integer power x.pow(2))
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride,
                              self.ceil_mode)


class LPPool1d(_LPPoolNd):
    """Power-average pooling over ``(N, C, L)``: ``LPPool1d(norm_type, kernel_size,
    stride=None, ceil_mode=False)``."""
    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """Power-average pooling over ``(N, C, H, W)``."""
    _fn = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """Power-average pooling over ``(N, C, D, H, W)``."""
    _fn = staticmethod(F.lp_pool3d)


class _MaxUnpoolNd(Module):
    _tuple = _unpool = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        t = type(self)._tuple
        self.kernel_size = t(kernel_size)
        self.stride = t(stride if stride is not None else kernel_size)
        self.padding = t(padding)

    def forward(self, input, indices, output_size=None):
        return type(self)._unpool(input, indices, self.kernel_size, self.stride, self.padding,
                                  output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


@own_init
class MaxUnpool1d(_MaxUnpoolNd):
    """The inverse of ``MaxPool1d`` (the non-maxima set to zero): ``forward(input, indices,
    output_size=None)``."""
    _tuple = staticmethod(_single)
    _unpool = staticmethod(F.max_unpool1d)


@own_init
class MaxUnpool2d(_MaxUnpoolNd):
    """The inverse of ``MaxPool2d`` (the non-maxima set to zero).

    ::

        MaxUnpool2d(kernel_size, stride=None, padding=0)
    """
    _tuple = staticmethod(_pair)
    _unpool = staticmethod(F.max_unpool2d)


@own_init
class MaxUnpool3d(_MaxUnpoolNd):
    """The inverse of ``MaxPool3d`` (the non-maxima set to zero)."""
    _tuple = staticmethod(_triple)
    _unpool = staticmethod(F.max_unpool3d)


class _FractionalMaxPoolNd(Module):
    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        n, name = self._n, type(self).__name__
        if n == 3 and any(k <= 0 for k in self._tuple(kernel_size)):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = self._tuple(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = None if output_size is None else self._tuple(output_size)
        self.output_ratio = None if output_ratio is None else self._tuple(output_ratio)
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling "
                             "ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return self._pool(input, self.kernel_size, self.output_size, self.output_ratio,
                          self.return_indices, _random_samples=self._random_samples)


@own_init
class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-D fractional max pooling: ``kernel_size`` windows at pseudo-random strides giving
    ``output_size`` (or ``output_ratio`` times the input size).

    ::

        FractionalMaxPool2d(kernel_size, output_size=None, output_ratio=None,
                            return_indices=False, _random_samples=None)
    """
    _n, _tuple, _pool = 2, staticmethod(_pair), staticmethod(F.fractional_max_pool2d)


@own_init
class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D fractional max pooling (see ``FractionalMaxPool2d``).

    ::

        FractionalMaxPool3d(kernel_size, output_size=None, output_ratio=None,
                            return_indices=False, _random_samples=None)
    """
    _n, _tuple, _pool = 3, staticmethod(_triple), staticmethod(F.fractional_max_pool3d)


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
