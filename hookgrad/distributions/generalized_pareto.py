"""``GeneralizedPareto(loc, scale, concentration)``: the law of threshold excesses."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .._factory import ones_like, rand
from .._ops.pointwise import where
from .._tensor import Size
from . import constraints
from ._simple import _Params

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(_Params, params=("loc", "scale", "concentration")):
    r"""The generalized Pareto distribution, as ``torch.distributions.GeneralizedPareto``:
    exponential tails at ``concentration == 0``, heavy ones above, bounded below it.

    .. code-block:: python

        GeneralizedPareto(loc, scale, concentration, validate_args=None)

    ``rsample`` is ``icdf`` of uniform noise from hookgrad's global key.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def _safe_concentration(self):
        # where concentration is (close to) 0 the formulas take their exponential limit;
        # the other branch gets a harmless 1 so neither it nor its gradient is NaN
        c = self.concentration
        zero = c.abs() <= 1e-8   # isclose(c, 0): atol 1e-8
        return zero, where(zero, ones_like(c), c)

    def _z(self, x):
        return (x - self.loc) / self.scale

    def rsample(self, sample_shape=Size()) -> Tensor:
        return self.icdf(rand(self._extended_shape(sample_shape), dtype=self.loc.dtype))

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero, c = self._safe_concentration()
        y = 1 / c + ones_like(z)
        nonzero = where(y == 0, y, y * (c * z).log1p())
        return -self.scale.log() - where(zero, z, nonzero)

    def log_survival_function(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero, c = self._safe_concentration()
        return where(zero, -z, -(c * z).log1p() / c)

    def log_cdf(self, value) -> Tensor:
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value) -> Tensor:
        return self.log_cdf(value).exp()

    def icdf(self, value) -> Tensor:
        zero, c = self._safe_concentration()
        logu = (-value).log1p()
        return where(zero, self.loc - self.scale * logu,
                     self.loc + self.scale / c * (-c * logu).expm1())

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        c = where(valid, self.concentration, 0.5)
        return where(valid, self.loc + self.scale / (1 - c), math.nan)

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        c = where(valid, self.concentration, 0.25)
        return where(valid, self.scale ** 2 / ((1 - c) ** 2 * (1 - 2 * c)), math.nan)

    def entropy(self) -> Tensor:
        return (self.scale.log() + self.concentration + 1).expand(self._batch_shape)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        upper = where(self.concentration < 0, self.loc - self.scale / self.concentration,
                      math.inf)
        return constraints.interval(self.loc, upper)


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
