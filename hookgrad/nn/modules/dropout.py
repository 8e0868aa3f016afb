"""Dropout layers: ``Dropout``, ``Dropout1d``, ``Dropout2d``, ``Dropout3d``,
``AlphaDropout``, ``FeatureAlphaDropout`` (active in training mode only; randomness from
``hookgrad.random``)."""
from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout"]


class _DropoutNd(Module):
    _fn = None

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zeroes elements with probability ``p`` in training mode and scales the rest by
    ``1 / (1 - p)``; the identity in eval mode.

    Example::

        >>> m = nn.Dropout(p=0.2)
        >>> m.eval()(hookgrad.ones(3))
        tensor([1., 1., 1.])
    """
    _fn = staticmethod(F.dropout)


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of ``(N, C, L)``."""
    _fn = staticmethod(F.dropout1d)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels of ``(N, C, H, W)``."""
    _fn = staticmethod(F.dropout2d)


class Dropout3d(_DropoutNd):
    """Zeroes whole channels of ``(N, C, D, H, W)``."""
    _fn = staticmethod(F.dropout3d)


class AlphaDropout(_DropoutNd):
    """Dropout that keeps SELU's self-normalization (zero mean, unit variance) in training
    mode; the identity in eval mode."""

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """``AlphaDropout`` of whole channels of ``(N, C, *)``."""

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
