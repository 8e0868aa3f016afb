"""``Exponential(rate)``: waiting times of a Poisson process."""
from __future__ import annotations

from .._tensor import Tensor  # noqa: F401 - annotations

from .._factory import rand
from . import constraints
from ._simple import _Params
from .exp_family import ExponentialFamily

__all__ = ["Exponential"]


class Exponential(_Params, ExponentialFamily, params=("rate",)):
    r"""The exponential distribution with rate, as torch.distributions.Exponential.

    .. code-block:: python

        Exponential(rate, validate_args=None)

    rsample is -log(u) / rate with u uniform from hookgrad's global key.
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return self.rate.new_zeros(()).expand(self.batch_shape)

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()) -> Tensor:
        u = 1 - rand(self._extended_shape(sample_shape), dtype=self.rate.dtype)
        return -u.log() / self.rate

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value) -> Tensor:
        return -(-value).log1p() / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self) -> tuple:
        return (-self.rate,)

    def _log_normalizer(self, x) -> Tensor:
        return -(-x).log()

    @property
    def _mean_carrier_measure(self) -> float:
        return 0


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
