"""``Bernoulli(probs=None, logits=None)``: a distribution over ``{0, 1}``."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .._factory import rand
from .._tensor import Size
from ..nn import functional as F
from . import constraints
from ._probs_logits import _ProbsOrLogits
from .distribution import broadcast_all
from .exp_family import ExponentialFamily

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["Bernoulli"]


class Bernoulli(_ProbsOrLogits, ExponentialFamily):
    r"""A Bernoulli distribution: 1 with probability ``probs`` (or ``sigmoid(logits)``),
    0 otherwise, as ``torch.distributions.Bernoulli``.

    .. code-block:: python

        Bernoulli(probs=None, logits=None, validate_args=None)

    Samples are floats (0. or 1.) of the parameter's dtype, drawn from hookgrad's global
    key.

    Example::

        >>> d = Bernoulli(probs=hookgrad.tensor([0.3]))
        >>> d.log_prob(hookgrad.tensor([1.0]))
        tensor([-1.2040])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        batch_shape = self._init_params(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        m = (self.probs >= 0.5).to(self.probs.dtype)
        return m.masked_fill(self.probs == 0.5, float("nan"))

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        probs = self.probs.detach().expand(shape)
        return (rand(shape, dtype=probs.dtype) < probs).to(probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    @property
    def _natural_params(self) -> tuple:
        return (self.logits,)

    def _log_normalizer(self, x) -> Tensor:
        return x.exp().log1p()

    @property
    def _mean_carrier_measure(self) -> float:
        return 0


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
