"""``PixelShuffle`` and ``PixelUnshuffle``: sub-pixel rearrangements between channels and
space."""
from .. import functional as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """Rearranges ``(*, C * r^2, H, W)`` into ``(*, C, H * r, W * r)``:
    ``PixelShuffle(upscale_factor)``."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Rearranges ``(*, C, H * r, W * r)`` into ``(*, C * r^2, H, W)``:
    ``PixelUnshuffle(downscale_factor)``."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
