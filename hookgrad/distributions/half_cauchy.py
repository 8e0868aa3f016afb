"""``HalfCauchy(scale)``: the absolute value of a centred Cauchy variable."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .._factory import full, zeros_like
from .._ops.pointwise import where
from . import constraints
from .cauchy import Cauchy
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform
from .utils import _delegated

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["HalfCauchy"]


class HalfCauchy(TransformedDistribution):
    r"""The half-Cauchy distribution ``|Cauchy(0, scale)|``, as
    ``torch.distributions.HalfCauchy``.

    .. code-block:: python

        HalfCauchy(scale, validate_args=None)
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(),
                         validate_args=validate_args)

    scale = _delegated("base_dist", "scale")

    @property
    def mean(self) -> Tensor:
        return full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype)

    @property
    def mode(self) -> Tensor:
        return zeros_like(self.scale)

    variance = _delegated("base_dist", "variance")

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return where(value >= 0, log_prob, -math.inf)

    def cdf(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
