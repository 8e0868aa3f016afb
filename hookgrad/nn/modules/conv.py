"""Convolution layers: ``Conv1d``, ``Conv2d``, ``Conv3d``, ``ConvTranspose1d``,
``ConvTranspose2d`` (PyTorch's arguments, parameter shapes and initialization)."""
import math

from .. import functional as F
from .. import init
from ._utils import _pair, _param, _single, _triple
from .module import Module
from ..._arguments import keep, own_init

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]

_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class _ConvNd(Module):
    _nd = 0
    _tuple = staticmethod(_pair)

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'same', 'valid'}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got "
                             f"padding_mode='{padding_mode}'")
        keep(self, locals(), "in_channels", "out_channels", "kernel_size", "stride", "padding",
             "dilation", "transposed", "output_padding", "groups", "padding_mode")
        # F.pad's order (last dim first) of the padding, for the non-zero padding modes
        if isinstance(padding, str):
            rev = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    rev[2 * i] = left
                    rev[2 * i + 1] = total - left
        else:
            rev = [p for p in reversed(padding) for _ in range(2)]
        self._reversed_padding_repeated_twice = rev
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = _param(shape, device, dtype)
        if bias:
            self.bias = _param((out_channels,), device, dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """``weight`` from ``kaiming_uniform_(a=sqrt(5))``, i.e. U(-1/sqrt(fan_in),
        1/sqrt(fan_in)); ``bias`` from U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        n = len(self.kernel_size)
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        t = self._tuple
        super().__init__(in_channels, out_channels, t(kernel_size), t(stride),
                         padding if isinstance(padding, str) else t(padding), t(dilation),
                         False, t(0), groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        fn = type(self)._fn
        if self.padding_mode != "zeros":
            x = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return fn(x, weight, bias, self.stride, self._tuple(0), self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


@own_init
class Conv1d(_Conv):
    """Applies a 1D convolution over ``(N, C_in, L)`` (or ``(C_in, L)``).

    ::

        Conv1d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
               groups=1, bias=True, padding_mode='zeros', device=None, dtype=None)

    ``weight``: ``(out_channels, in_channels / groups, kernel_size)``.
    """
    _tuple = staticmethod(_single)
    _fn = staticmethod(F.conv1d)


@own_init
class Conv2d(_Conv):
    """Applies a 2D convolution over ``(N, C_in, H, W)`` (or ``(C_in, H, W)``).

    ::

        Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
               groups=1, bias=True, padding_mode='zeros', device=None, dtype=None)

    ``weight``: ``(out_channels, in_channels / groups, kH, kW)``; ``padding`` may be
    ``'same'`` or ``'valid'``.

    Example::

        >>> m = nn.Conv2d(16, 33, 3, stride=2)
        >>> m(hookgrad.randn(20, 16, 50, 100)).shape
        hookgrad.Size([20, 33, 24, 49])
    """
    _tuple = staticmethod(_pair)
    _fn = staticmethod(F.conv2d)


@own_init
class Conv3d(_Conv):
    """Applies a 3D convolution over ``(N, C_in, D, H, W)``."""
    _tuple = staticmethod(_triple)
    _fn = staticmethod(F.conv3d)


class _ConvTranspose(_ConvNd):
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f'{self.__class__.__name__}')
        t = self._tuple
        super().__init__(in_channels, out_channels, t(kernel_size), t(stride), t(padding),
                         t(dilation), True, t(output_padding), groups, bias, padding_mode,
                         device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size,
                        num_spatial_dims, dilation=None):
        if output_size is None:
            return tuple(self.output_padding)
        batched = input.ndim == num_spatial_dims + 2
        lead = 2 if batched else 1
        output_size = list(output_size)
        if len(output_size) == lead + num_spatial_dims:
            output_size = output_size[lead:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.ndim}D input, "
                             f"output_size must have {num_spatial_dims} or "
                             f"{lead + num_spatial_dims} elements (got {len(output_size)})")
        mins, maxs = [], []
        for d in range(num_spatial_dims):
            dil = dilation[d] if dilation is not None else 1
            m = (input.shape[d + lead] - 1) * stride[d] - 2 * padding[d] + \
                dil * (kernel_size[d] - 1) + 1
            mins.append(m)
            maxs.append(m + stride[d] - 1)
        for size, lo, hi in zip(output_size, mins, maxs):
            if size < lo or size > hi:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {mins} to {maxs} (for an input of "
                                 f"{input.shape[lead:]})")
        return tuple(s - m for s, m in zip(output_size, mins))

    def forward(self, input, output_size=None):
        nd = len(self.kernel_size)
        op = self._output_padding(input, output_size, self.stride, self.padding,
                                  self.kernel_size, nd, self.dilation)
        return type(self)._fn(input, self.weight, self.bias, self.stride, self.padding, op,
                              self.groups, self.dilation)


@own_init
class ConvTranspose1d(_ConvTranspose):
    """Applies a 1D transposed convolution; ``weight``:
    ``(in_channels, out_channels / groups, kernel_size)``."""
    _tuple = staticmethod(_single)
    _fn = staticmethod(F.conv_transpose1d)


@own_init
class ConvTranspose2d(_ConvTranspose):
    """Applies a 2D transposed convolution ("deconvolution").

    ::

        ConvTranspose2d(in_channels, out_channels, kernel_size, stride=1, padding=0,
                        output_padding=0, groups=1, bias=True, dilation=1,
                        padding_mode='zeros', device=None, dtype=None)

    ``weight``: ``(in_channels, out_channels / groups, kH, kW)``. ``forward(input,
    output_size=None)``: ``output_size`` picks the output padding.
    """
    _tuple = staticmethod(_pair)
    _fn = staticmethod(F.conv_transpose2d)


@own_init
class ConvTranspose3d(_ConvTranspose):
    """Applies a 3D transposed convolution; ``weight``:
    ``(in_channels, out_channels / groups, kD, kH, kW)``."""
    _tuple = staticmethod(_triple)
    _fn = staticmethod(F.conv_transpose3d)


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
