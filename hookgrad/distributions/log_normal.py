"""``LogNormal(loc, scale)``: ``exp`` of a normal variable."""
from __future__ import annotations

from .._tensor import Tensor  # noqa: F401 - annotations

import math

from .._factory import randn
from . import constraints
from ._simple import _LocScale

__all__ = ["LogNormal"]


class LogNormal(_LocScale, params=("loc", "scale")):
    r"""The log-normal distribution exp(Normal(loc, scale)), as
    torch.distributions.LogNormal.

    .. code-block:: python

        LogNormal(loc, scale, validate_args=None)
    """

    support = constraints.positive

    @property
    def mean(self) -> Tensor:
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self) -> Tensor:
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self) -> Tensor:
        s2 = self.scale.pow(2)
        return s2.expm1() * (2 * self.loc + s2).exp()

    def rsample(self, sample_shape=()) -> Tensor:
        eps = randn(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return (self.loc + eps * self.scale).exp()

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = value.log()
        return (-((y - self.loc) ** 2) / (2 * self.scale ** 2) - self.scale.log()
                - math.log(math.sqrt(2 * math.pi)) - y)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log() + self.loc


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
