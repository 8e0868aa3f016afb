"""``Poisson(rate)``: counts of events at a constant rate."""
from __future__ import annotations

import jax

from .._tensor import Tensor
from . import constraints
from ._simple import _Params
from .exp_family import ExponentialFamily

__all__ = ["Poisson"]


class Poisson(_Params, ExponentialFamily, params=("rate",)):
    r"""The Poisson distribution with rate, as torch.distributions.Poisson.

    .. code-block:: python

        Poisson(rate, validate_args=None)

    Samples are floats of the rate's dtype, drawn from hookgrad's global key.
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape=()) -> Tensor:
        from .. import random
        shape = tuple(self._extended_shape(sample_shape))
        rate = self.rate.detach().expand(shape)._data
        draws = jax.random.poisson(random.next_key(), rate, shape)
        return Tensor._wrap(draws.astype(rate.dtype))

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return value.xlogy(self.rate) - self.rate - (value + 1).lgamma()

    @property
    def _natural_params(self) -> tuple:
        return (self.rate.log(),)

    def _log_normalizer(self, x) -> Tensor:
        return x.exp()


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
