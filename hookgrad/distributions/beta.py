"""``Beta(concentration1, concentration0)``: a distribution over ``[0, 1]``."""
from __future__ import annotations

from .._tensor import Tensor  # noqa: F401 - annotations

import numbers

from .._ops.stacking import stack
from .._tensor import Size
from ._simple import _UnitConcentrations
from .dirichlet import Dirichlet
from .distribution import broadcast_all
from .exp_family import ExponentialFamily

__all__ = ["Beta"]


class Beta(_UnitConcentrations, ExponentialFamily):
    r"""The beta distribution, as torch.distributions.Beta (a two-class Dirichlet).

    .. code-block:: python

        Beta(concentration1, concentration0, validate_args=None)
    """

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, numbers.Real) and isinstance(concentration0,
                                                                   numbers.Real):
            c1, c0 = broadcast_all(float(concentration1), float(concentration0))
        else:
            c1, c0 = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(stack([c1, c0], -1), validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Beta:
        shape = Size(batch_shape)
        new = self._new_expanded(Beta, shape, {})
        new._dirichlet = self._dirichlet.expand(shape)
        return new

    @property
    def concentration1(self) -> Tensor:
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Tensor:
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()) -> Tensor:
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(stack([value, 1.0 - value], -1))

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y) -> Tensor:
        return x.lgamma() + y.lgamma() - (x + y).lgamma()


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
