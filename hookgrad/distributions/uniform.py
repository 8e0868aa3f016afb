"""``Uniform(low, high)``: the continuous uniform distribution on ``[low, high)``."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .._factory import rand
from .._tensor import Size
from . import constraints
from ._simple import _Params

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["Uniform"]


class Uniform(_Params, params=("low", "high")):
    r"""Uniform on the half-open interval ``[low, high)``, as
    ``torch.distributions.Uniform``.

    .. code-block:: python

        Uniform(low, high, validate_args=None)

    ``rsample`` is ``low + u * (high - low)`` with ``u`` uniform on ``[0, 1)`` from
    hookgrad's global key: differentiable in ``low`` and ``high``.

    Example::

        >>> d = Uniform(hookgrad.tensor([0.0]), hookgrad.tensor([5.0]))
        >>> d.entropy()
        tensor([1.6094])
    """

    has_rsample = True

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.interval(self.low, self.high)

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        return math.nan * self.high

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=Size()) -> Tensor:
        u = rand(self._extended_shape(sample_shape), dtype=self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        inside = (self.low <= value).to(self.low.dtype) * (self.high > value).to(self.low.dtype)
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value: Tensor) -> Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
