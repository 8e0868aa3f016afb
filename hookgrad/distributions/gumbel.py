"""``Gumbel(loc, scale)``: the type-I extreme value distribution."""
from __future__ import annotations

from .._tensor import Tensor  # noqa: F401 - annotations

import math

from .._factory import rand
from ._simple import _LocScale

__all__ = ["Gumbel"]

_EULER = 0.57721566490153286060


class Gumbel(_LocScale, params=("loc", "scale")):
    r"""The Gumbel distribution, as torch.distributions.Gumbel.

    .. code-block:: python

        Gumbel(loc, scale, validate_args=None)

    rsample is loc - scale * log(-log(u)).
    """


    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * _EULER

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def rsample(self, sample_shape=()) -> Tensor:
        u = rand(self._extended_shape(sample_shape), dtype=self.loc.dtype).clamp(min=1e-30)
        return self.loc - self.scale * (-u.log()).log()

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = (self.loc - value) / self.scale
        return (z - z.exp()) - self.scale.log()

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + _EULER)


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
