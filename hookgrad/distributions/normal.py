"""``Normal(loc, scale)``: the Gaussian distribution."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .._factory import randn
from .._tensor import Size
from ._simple import _CentredAtLoc, _LocScale
from .exp_family import ExponentialFamily

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["Normal"]


class Normal(_CentredAtLoc, _LocScale, ExponentialFamily, params=("loc", "scale")):
    r"""The normal (Gaussian) distribution with mean ``loc`` and standard deviation
    ``scale``, as ``torch.distributions.Normal``.

    .. code-block:: python

        Normal(loc, scale, validate_args=None)

    ``rsample`` is ``loc + scale * eps`` with ``eps`` standard normal from hookgrad's
    global key: differentiable in ``loc`` and ``scale``.

    Example::

        >>> d = Normal(hookgrad.tensor([0.0]), hookgrad.tensor([1.0]))
        >>> d.log_prob(hookgrad.tensor([0.5]))
        tensor([-1.0439])
    """

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def rsample(self, sample_shape=Size()) -> Tensor:
        eps = randn(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        return (-((value - self.loc) ** 2) / (2 * var) - self.scale.log()
                - math.log(math.sqrt(2 * math.pi)))

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) / (self.scale * math.sqrt(2))).erf())

    def icdf(self, value: Tensor) -> Tensor:
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    @property
    def _natural_params(self) -> tuple:
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y) -> Tensor:
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()

    @property
    def _mean_carrier_measure(self) -> float:
        return 0


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
