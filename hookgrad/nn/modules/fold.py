"""``Fold`` and ``Unfold``: sliding local blocks to columns and back (``F.fold``,
``F.unfold``)."""
from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class _Blocks(Module):
    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Unfold(_Blocks):
    """Extracts sliding local blocks of ``(N, C, H, W)`` into columns
    ``(N, C * prod(kernel_size), L)``.

    ::

        Unfold(kernel_size, dilation=1, padding=0, stride=1)
    """

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)


class Fold(_Blocks):
    """Sums columns ``(N, C * prod(kernel_size), L)`` back into ``(N, C, *output_size)``:
    the adjoint of ``Unfold``.

    ::

        Fold(output_size, kernel_size, dilation=1, padding=0, stride=1)
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self):
        return f"output_size={self.output_size}, " + super().extra_repr()


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
