"""Upsampling layers: ``Upsample``, ``UpsamplingNearest2d``, ``UpsamplingBilinear2d``
(over ``F.interpolate``)."""
from .. import functional as F
from .module import Module
from ..._arguments import keep

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Resamples ``(N, C, L)``, ``(N, C, H, W)`` or ``(N, C, D, H, W)`` to ``size`` or by
    ``scale_factor`` with ``F.interpolate``'s modes.

    ::

        Upsample(size=None, scale_factor=None, mode='nearest', align_corners=None,
                 recompute_scale_factor=None)

    Example::

        >>> up = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False)
        >>> up(hookgrad.randn(1, 1, 2, 2)).shape
        hookgrad.Size([1, 1, 4, 4])
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        keep(self, locals(), "mode", "align_corners", "recompute_scale_factor")

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def __setstate__(self, state):
        # modules pickled before recompute_scale_factor existed
        state.setdefault("recompute_scale_factor", True)
        super().__setstate__(state)

    def extra_repr(self):
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """``Upsample(size, scale_factor, mode='nearest')`` for ``(N, C, H, W)``.

    ::

        UpsamplingNearest2d(size=None, scale_factor=None)
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(size, scale_factor, mode='bilinear', align_corners=True)`` for
    ``(N, C, H, W)``.

    ::

        UpsamplingBilinear2d(size=None, scale_factor=None)
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
