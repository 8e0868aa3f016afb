"""``Kumaraswamy(concentration1, concentration0)``: a Beta-like law on ``(0, 1)`` with a
closed-form cdf."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .._factory import full_like
from .._ops.pointwise import where
from ._simple import _UnitConcentrations
from .distribution import broadcast_all
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import euler_constant

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["Kumaraswamy"]


def _moment(a, b, n):
    # E[X^n] = b * B(1 + n / a, b)
    arg = 1 + n / a
    return b * (arg.lgamma() + b.lgamma() - (arg + b).lgamma()).exp()


class Kumaraswamy(_UnitConcentrations, TransformedDistribution):
    r"""The Kumaraswamy distribution, as ``torch.distributions.Kumaraswamy``: ``X =
    (1 - U ** (1 / concentration0)) ** (1 / concentration1)`` for uniform ``U``.

    .. code-block:: python

        Kumaraswamy(concentration1, concentration0, validate_args=None)
    """

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1,
                                                                 concentration0)
        c0 = self.concentration0
        base = Uniform(full_like(c0, 0), full_like(c0, 1), validate_args=validate_args)
        chain = [PowerTransform(c0.reciprocal()), AffineTransform(1.0, -1.0),
                 PowerTransform(self.concentration1.reciprocal())]
        super().__init__(base, chain, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Kumaraswamy:
        new = super().expand(batch_shape, _instance)
        new.concentration1 = self.concentration1.expand(new.batch_shape)
        new.concentration0 = self.concentration0.expand(new.batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        return _moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        c1, c0 = self.concentration1, self.concentration0
        log_mode = c0.reciprocal() * (-c0).log1p() - (-c0 * c1).log1p()
        return where((c0 < 1) | (c1 < 1), math.nan, log_mode).exp()

    @property
    def variance(self) -> Tensor:
        c1, c0 = self.concentration1, self.concentration0
        return _moment(c1, c0, 2) - self.mean.pow(2)

    def entropy(self) -> Tensor:
        c1, c0 = self.concentration1, self.concentration0
        harmonic = (c0 + 1).digamma() + euler_constant
        return (1 - c0.reciprocal()) + (1 - c1.reciprocal()) * harmonic - c1.log() - c0.log()


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
