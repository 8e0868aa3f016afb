"""``Laplace(loc, scale)``: the double-exponential distribution."""
from __future__ import annotations

from .._tensor import Tensor  # noqa: F401 - annotations

import math

from .._factory import rand
from ._simple import _CentredAtLoc, _LocScale

__all__ = ["Laplace"]


class Laplace(_CentredAtLoc, _LocScale, params=("loc", "scale")):
    r"""The Laplace distribution, as torch.distributions.Laplace.

    .. code-block:: python

        Laplace(loc, scale, validate_args=None)
    """

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=()) -> Tensor:
        u = rand(self._extended_shape(sample_shape), dtype=self.loc.dtype) * 2 - 1
        u = u.clamp(min=-1 + 1e-7)   # log1p(-|u|) finite
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        d = value - self.loc
        return 0.5 - 0.5 * d.sign() * (-d.abs() / self.scale).expm1()

    def icdf(self, value) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
