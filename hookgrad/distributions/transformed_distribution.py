"""``TransformedDistribution(base_distribution, transforms)``: a distribution pushed
through a chain of transforms."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .._autograd.grad_mode import no_grad
from .._tensor import Size
from . import constraints
from ._transform import ComposeTransform, Transform, _sum_rightmost
from .distribution import Distribution
from .independent import Independent
from .utils import _delegated

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["TransformedDistribution"]


class TransformedDistribution(Distribution):
    r"""The law of ``transforms[-1](... transforms[0](x))`` for ``x`` drawn from
    ``base_distribution``, as ``torch.distributions.TransformedDistribution``.

    .. code-block:: python

        TransformedDistribution(base_distribution, transforms, validate_args=None)

    ``log_prob`` inverts the transforms and subtracts their log-Jacobians; samples are
    the base distribution's, pushed forward (``rsample`` where the base has one).

    Example::

        >>> base = Normal(hookgrad.zeros(2), hookgrad.ones(2))
        >>> d = TransformedDistribution(base, [ExpTransform()])   # a log-normal
    """

    arg_constraints: dict = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError("transforms must be a Transform or list, but "
                             f"was {transforms}")
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        base_event_dim = len(base_distribution.event_shape)
        chain = ComposeTransform(self.transforms)
        if len(base_shape) < chain.domain.event_dim:
            raise ValueError("base_distribution needs to have shape with size at least "
                             f"{chain.domain.event_dim}, but got {base_shape}.")
        shape = Size(chain.forward_shape(base_shape))
        expanded = Size(chain.inverse_shape(shape))
        if base_shape != expanded:   # the transforms' parameters broadcast the base
            base_distribution = base_distribution.expand(
                expanded[:len(expanded) - base_event_dim])
        reinterpreted = chain.domain.event_dim - base_event_dim
        if reinterpreted > 0:
            base_distribution = Independent(base_distribution, reinterpreted)
        self.base_dist = base_distribution
        event_dim = chain.codomain.event_dim + max(base_event_dim - chain.domain.event_dim,
                                                   0)
        cut = len(shape) - event_dim
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> TransformedDistribution:
        batch_shape = Size(batch_shape)
        shape = batch_shape + self.event_shape
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        new = self._new_expanded(type(self), batch_shape, {"transforms": self.transforms})
        new.base_dist = self.base_dist.expand(
            Size(shape[:len(shape) - len(self.base_dist.event_shape)]))
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self) -> constraints.Constraint:
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support,
                                              len(self.event_shape) - support.event_dim)
        return support

    has_rsample = _delegated("base_dist", "has_rsample", bool)

    def _push(self, x):
        for t in self.transforms:
            x = t(x)
        return x

    def sample(self, sample_shape=Size()) -> Tensor:
        with no_grad():
            return self._push(self.base_dist.sample(sample_shape))

    def rsample(self, sample_shape=Size()) -> Tensor:
        return self._push(self.base_dist.rsample(sample_shape))

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        event_dim, log_prob, y = len(self.event_shape), 0.0, value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            log_prob = log_prob - _sum_rightmost(t.log_abs_det_jacobian(x, y),
                                                 event_dim - t.domain.event_dim)
            y = x
        return log_prob + _sum_rightmost(self.base_dist.log_prob(y),
                                         event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        # a decreasing chain turns the base's cdf into a survival function: flip it
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value) -> Tensor:
        for t in self.transforms[::-1]:
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value) -> Tensor:
        return self._push(self.base_dist.icdf(self._monotonize_cdf(value)))


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
