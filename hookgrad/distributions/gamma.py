"""``Gamma(concentration, rate)``."""
from __future__ import annotations

from .._tensor import Tensor  # noqa: F401 - annotations

from .._ops.random_gamma import standard_gamma
from . import constraints
from ._simple import _Params
from .exp_family import ExponentialFamily

__all__ = ["Gamma"]


class Gamma(_Params, ExponentialFamily, params=("concentration", "rate")):
    r"""The gamma distribution with shape concentration and inverse scale rate, as
    torch.distributions.Gamma.

    .. code-block:: python

        Gamma(concentration, rate, validate_args=None)

    rsample is reparameterised (StandardGammaBackward0, JAX's implicit gradient).
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return value.clamp(min=1.1754943508222875e-38)   # float32's tiny, as PyTorch

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c, r = self.concentration, self.rate
        return c.xlogy(r) + (c - 1).xlogy(value) - r * value - c.lgamma()

    def entropy(self) -> Tensor:
        c = self.concentration
        return c - self.rate.log() + c.lgamma() + (1.0 - c) * c.digamma()

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y) -> Tensor:
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()

    @property
    def _mean_carrier_measure(self) -> float:
        return 0


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
