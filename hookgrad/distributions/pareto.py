"""``Pareto(scale, alpha)``: the power-law distribution above ``scale``."""
from __future__ import annotations

from .._tensor import Tensor  # noqa: F401 - annotations

from .._factory import rand
from . import constraints
from ._simple import _Params

__all__ = ["Pareto"]


class Pareto(_Params, params=("scale", "alpha")):
    r"""The Pareto type-I distribution, as torch.distributions.Pareto.

    .. code-block:: python

        Pareto(scale, alpha, validate_args=None)
    """

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}
    has_rsample = True

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.greater_than_eq(self.scale)

    @property
    def mean(self) -> Tensor:
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    def rsample(self, sample_shape=()) -> Tensor:
        u = 1 - rand(self._extended_shape(sample_shape), dtype=self.scale.dtype)
        return self.scale * (-u.log() / self.alpha).exp()

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.alpha.log() + self.alpha * self.scale.log() - (self.alpha + 1) * value.log()

    def cdf(self, value) -> Tensor:
        return 1 - (self.scale / value).pow(self.alpha)

    def icdf(self, value) -> Tensor:
        return self.scale * (-(-value).log1p() / self.alpha).exp()

    def entropy(self) -> Tensor:
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
