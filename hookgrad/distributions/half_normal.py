"""``HalfNormal(scale)``: the absolute value of a centred normal."""
from __future__ import annotations

from .._tensor import Tensor  # noqa: F401 - annotations

import math

from .._factory import randn
from . import constraints
from ._simple import _Params

__all__ = ["HalfNormal"]


class HalfNormal(_Params, params=("scale",)):
    r"""The half-normal distribution |Normal(0, scale)|, as
    torch.distributions.HalfNormal.

    .. code-block:: python

        HalfNormal(scale, validate_args=None)
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self) -> Tensor:
        return self.scale.new_zeros(()).expand(self.batch_shape)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def rsample(self, sample_shape=()) -> Tensor:
        eps = randn(self._extended_shape(sample_shape), dtype=self.scale.dtype)
        return (eps * self.scale).abs()

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        lp = (-(value ** 2) / (2 * self.scale ** 2) - self.scale.log()
              - math.log(math.sqrt(2 * math.pi)) + math.log(2))
        return lp.masked_fill(value < 0, -math.inf)

    def cdf(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (value / (self.scale * math.sqrt(2))).erf()

    def icdf(self, prob) -> Tensor:
        return self.scale * prob.erfinv() * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log() - math.log(2)


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
