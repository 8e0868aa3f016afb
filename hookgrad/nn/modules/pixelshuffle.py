"""``PixelShuffle`` and ``PixelUnshuffle``: sub-pixel rearrangements between channels and
space."""
from .. import functional as F
from ._functional_module import _Stored

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(_Stored):
    """Rearranges ``(*, C * r^2, H, W)`` into ``(*, C, H * r, W * r)``:
    ``PixelShuffle(upscale_factor)``."""
    _fn, _args = staticmethod(F.pixel_shuffle), ("upscale_factor",)

    def __init__(self, upscale_factor: int) -> None:
        super().__init__(upscale_factor)


class PixelUnshuffle(_Stored):
    """Rearranges ``(*, C, H * r, W * r)`` into ``(*, C * r^2, H, W)``:
    ``PixelUnshuffle(downscale_factor)``."""
    _fn, _args = staticmethod(F.pixel_unshuffle), ("downscale_factor",)

    def __init__(self, downscale_factor: int) -> None:
        super().__init__(downscale_factor)


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
