"""``NegativeBinomial(total_count, probs=None, logits=None)``: successes before
``total_count`` failures."""
from __future__ import annotations

import jax

from .. import random
from .._autograd.grad_mode import no_grad
from .._tensor import Size, Tensor
from ..nn import functional as F
from . import constraints
from ._probs_logits import _ProbsOrLogits
from .gamma import Gamma
from .utils import lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(_ProbsOrLogits):
    r"""The negative binomial distribution: successes, each of probability ``probs``,
    before ``total_count`` failures, as ``torch.distributions.NegativeBinomial``.

    .. code-block:: python

        NegativeBinomial(total_count, probs=None, logits=None, validate_args=None)

    Samples are Poisson draws at gamma-distributed rates, from hookgrad's global key.
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer
    _leading = ("total_count",)

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        self._init_params(probs, logits, total_count)
        super().__init__(self._param.size(), validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def _gamma(self) -> Gamma:
        return Gamma(self.total_count, (-self.logits).exp(), validate_args=False)

    def sample(self, sample_shape=Size()) -> Tensor:
        with no_grad():
            rate = self._gamma.sample(sample_shape)._data
            draws = jax.random.poisson(random.next_key(), rate, rate.shape)
        return Tensor._wrap(draws.astype(rate.dtype))

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        unnormalized = n * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        normalization = -(n + value).lgamma() + (1.0 + value).lgamma() + n.lgamma()
        return unnormalized - normalization.masked_fill(n + value == 0.0, 0.0)


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
