"""``Independent(base_distribution, reinterpreted_batch_ndims)``: batch dimensions
read as event dimensions."""
from __future__ import annotations

from .._tensor import Tensor  # noqa: F401 - annotations

from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import _delegated

__all__ = ["Independent"]


def _sum_rightmost(value, dim):
    if not dim:
        return value
    return value.reshape(tuple(value.shape[:value.ndim - dim]) + (-1,)).sum(-1)


class Independent(Distribution):
    r"""Reinterprets the rightmost reinterpreted_batch_ndims batch dimensions of
    base_distribution as event dimensions (log_prob sums over them), as
    torch.distributions.Independent.

    .. code-block:: python

        Independent(base_distribution, reinterpreted_batch_ndims, validate_args=None)
    """

    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        n = reinterpreted_batch_ndims
        if n > len(base_distribution.batch_shape):
            raise ValueError(f"Expected reinterpreted_batch_ndims <= "
                             f"len(base_distribution.batch_shape), actual {n} vs "
                             f"{len(base_distribution.batch_shape)}")
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = n + len(base_distribution.event_shape)
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = n
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Independent:
        shape = Size(batch_shape)
        new = self._new_expanded(Independent, shape, {})
        new.base_dist = self.base_dist.expand(shape + self.event_shape[
            :self.reinterpreted_batch_ndims])
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        return new

    has_rsample = _delegated("base_dist", "has_rsample", bool)

    @property
    def has_enumerate_support(self) -> bool:
        if self.reinterpreted_batch_ndims > 0:
            return False
        return self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    mean = _delegated("base_dist", "mean")
    mode = _delegated("base_dist", "mode")
    variance = _delegated("base_dist", "variance")

    def sample(self, sample_shape=()) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value) -> Tensor:
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> Tensor:
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
