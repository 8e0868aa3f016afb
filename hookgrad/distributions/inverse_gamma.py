"""``InverseGamma(concentration, rate)``: the law of ``1 / X`` for ``X ~ Gamma``."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .._ops.pointwise import where
from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform
from .utils import _delegated

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    r"""The inverse gamma distribution, as ``torch.distributions.InverseGamma``.

    .. code-block:: python

        InverseGamma(concentration, rate, validate_args=None)

    ``rsample`` inverts reparameterised gamma samples.
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base = Gamma(concentration, rate, validate_args=validate_args)
        super().__init__(base, PowerTransform(base.rate.new_full((), -1.0)),
                         validate_args=validate_args)

    concentration = _delegated("base_dist", "concentration")
    rate = _delegated("base_dist", "rate")

    @property
    def mean(self) -> Tensor:
        c = self.concentration
        return where(c > 1, self.rate / (c - 1), math.inf)

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        return where(c > 2, self.rate.pow(2) / ((c - 1).pow(2) * (c - 2)), math.inf)

    def entropy(self) -> Tensor:
        c = self.concentration
        return c + self.rate.log() + c.lgamma() - (1 + c) * c.digamma()


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
