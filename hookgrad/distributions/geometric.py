"""``Geometric(probs=None, logits=None)``: the number of failures before a success."""
from __future__ import annotations

from .._tensor import Tensor  # noqa: F401 - annotations

from .._factory import rand
from ..nn import functional as F
from . import constraints
from ._probs_logits import _Odds
from ._simple import _Params
from .categorical import _check_one_of

__all__ = ["Geometric"]


class Geometric(_Odds, _Params):
    r"""The geometric distribution over {0, 1, 2, ...}, as
    torch.distributions.Geometric.

    .. code-block:: python

        Geometric(probs=None, logits=None, validate_args=None)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        _check_one_of(probs, logits)
        self._params = ("probs",) if probs is not None else ("logits",)
        super().__init__(probs if probs is not None else logits, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return self.probs.new_zeros(()).expand(self.batch_shape)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()) -> Tensor:
        u = rand(self._extended_shape(sample_shape), dtype=self.probs.dtype).clamp(
            min=1.1754943508222875e-38)
        return (u.log() / (-self.probs.detach()).log1p()).floor()

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        p = self.probs
        p_safe = p.masked_fill((p == 1) & (value == 0), 0.0)
        return value * (-p_safe).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        return F.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                  reduction="none") / self.probs




from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
