"""``Multinomial(total_count, probs=None, logits=None)``: category counts of
``total_count`` categorical draws."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .._factory import ones_like, tensor, zeros
from .._ops.pointwise import where
from .._tensor import Size
from . import constraints
from ._probs_logits import _OverCategorical
from .binomial import Binomial
from .distribution import broadcast_all

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["Multinomial"]


class Multinomial(_OverCategorical):
    r"""The multinomial distribution: counts per category of ``total_count`` draws from
    ``Categorical(probs, logits)``, as ``torch.distributions.Multinomial``.

    .. code-block:: python

        Multinomial(total_count=1, probs=None, logits=None, validate_args=None)

    ``total_count`` is one int for the whole batch (``sample`` needs it; ``log_prob``
    does not). Samples are float counts, from hookgrad's global key.
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    _copied = ("total_count",)

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._init_categorical(probs, logits, validate_args)

    @property
    def _binomial(self) -> Binomial:
        return Binomial(self.total_count, probs=self.probs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> constraints.Constraint:
        return constraints.multinomial(self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()) -> Tensor:
        sample_shape = Size(sample_shape)
        draws = self._categorical.sample(Size((self.total_count,)) + sample_shape).long()
        draws = draws.permute(*range(1, draws.dim()), 0)   # the draws last
        counts = zeros(tuple(self._extended_shape(sample_shape)), dtype=self.probs.dtype)
        return counts.scatter_add(-1, draws, ones_like(draws, dtype=self.probs.dtype))

    def entropy(self) -> Tensor:
        n = tensor(float(self.total_count), dtype=self.probs.dtype)
        term1 = n * self._categorical.entropy() - (n + 1).lgamma()
        support = self._binomial.enumerate_support(expand=False)[1:]
        probs = self._binomial.log_prob(support).exp()
        return term1 + (probs * (support + 1).lgamma()).sum([0, -1])

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # 0 * log(0) counts as 0: a category never seen may have probability 0
        logits = where((value == 0) & (logits == -math.inf), 0.0, logits)
        return ((value.sum(-1) + 1).lgamma() - (value + 1).lgamma().sum(-1)
                + (logits * value).sum(-1))


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
