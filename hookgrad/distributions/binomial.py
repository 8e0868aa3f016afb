"""``Binomial(total_count, probs=None, logits=None)``: successes in ``total_count``
independent trials."""
from __future__ import annotations


import jax

from .. import random
from .._autograd.grad_mode import no_grad
from .._tensor import Size, Tensor
from . import constraints
from ._probs_logits import _ProbsOrLogits

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    # max(x, 0) with gradient 1/2 at 0, as PyTorch's
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


def _homogeneous_count(d, what):
    n = int(d.total_count.max())
    if not int(d.total_count.min()) == n:
        raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
    return n


class Binomial(_ProbsOrLogits):
    r"""The binomial distribution of successes in ``total_count`` trials of success
    probability ``probs`` (or ``sigmoid(logits)``), as ``torch.distributions.Binomial``.

    .. code-block:: python

        Binomial(total_count=1, probs=None, logits=None, validate_args=None)

    Samples are floats of the parameter's dtype, drawn from hookgrad's global key.
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True
    _leading = ("total_count",)

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        self._init_params(probs, logits, total_count)
        super().__init__(self._param.size(), validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            n = self.total_count.expand(shape)._data
            p = self.probs.expand(shape)._data
            draws = jax.random.binomial(random.next_key(), n, p, shape, dtype=p.dtype)
        return Tensor._wrap(draws)

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        normalizer = (n * _clamp_by_zero(logits) + n * (-logits.abs()).exp().log1p()
                      - (n + 1).lgamma())
        return value * logits - (value + 1).lgamma() - (n - value + 1).lgamma() - normalizer

    def entropy(self) -> Tensor:
        _homogeneous_count(self, "entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        from .._factory import arange
        n = _homogeneous_count(self, "enumerate_support")
        values = arange(1 + n, dtype=self._param.dtype).view(
            (-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
