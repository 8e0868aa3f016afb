"""``Weibull(scale, concentration)``."""
from __future__ import annotations

from .._tensor import Tensor  # noqa: F401 - annotations

from .._factory import rand
from . import constraints
from ._simple import _Params

__all__ = ["Weibull"]

_EULER = 0.57721566490153286060


class Weibull(_Params, params=("scale", "concentration")):
    r"""The two-parameter Weibull distribution, as torch.distributions.Weibull.

    .. code-block:: python

        Weibull(scale, concentration, validate_args=None)

    rsample is scale * (-log(u)) ** (1 / concentration).
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    has_rsample = True

    @property
    def mean(self) -> Tensor:
        return self.scale * (1 + self.concentration.reciprocal()).lgamma().exp()

    @property
    def mode(self) -> Tensor:
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self) -> Tensor:
        k = self.concentration
        return self.scale.pow(2) * ((1 + 2 / k).lgamma().exp()
                                    - (1 + k.reciprocal()).lgamma().exp().pow(2))

    def rsample(self, sample_shape=()) -> Tensor:
        u = 1 - rand(self._extended_shape(sample_shape), dtype=self.scale.dtype)
        return self.scale * (-u.log()).pow(self.concentration.reciprocal())

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        k, z = self.concentration, value / self.scale
        return (k / self.scale).log() + (k - 1) * z.log() - z.pow(k)

    def cdf(self, value) -> Tensor:
        return 1 - (-(value / self.scale).pow(self.concentration)).exp()

    def icdf(self, value) -> Tensor:
        return self.scale * (-(-value).log1p()).pow(self.concentration.reciprocal())

    def entropy(self) -> Tensor:
        k = self.concentration
        return _EULER * (1 - k.reciprocal()) + (self.scale / k).log() + 1


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
