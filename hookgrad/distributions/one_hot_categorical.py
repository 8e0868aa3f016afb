"""``OneHotCategorical`` and ``OneHotCategoricalStraightThrough``: a categorical variable
as a one-hot vector."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .._factory import eye
from .._tensor import Size
from ..nn import functional as F
from . import constraints
from ._probs_logits import _OverCategorical

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(_OverCategorical):
    r"""A categorical distribution over one-hot vectors of the last dimension of
    ``probs`` (or ``logits``), as ``torch.distributions.OneHotCategorical``.

    .. code-block:: python

        OneHotCategorical(probs=None, logits=None, validate_args=None)

    Samples are one-hot floats of the parameter's dtype, from hookgrad's global key.
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._init_categorical(probs, logits, validate_args)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        probs = self.probs
        return F.one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()) -> Tensor:
        indices = self._categorical.sample(Size(sample_shape))
        return F.one_hot(indices.long(), self._categorical._num_events).to(self.probs.dtype)

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self.event_shape[0]
        values = eye(n, dtype=self._param.dtype).view((n,) + (1,) * len(self.batch_shape)
                                                      + (n,))
        return values.expand((n,) + tuple(self.batch_shape) + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    r"""``OneHotCategorical`` whose ``rsample`` passes gradients straight through to
    ``probs`` (the straight-through estimator), as
    ``torch.distributions.OneHotCategoricalStraightThrough``.
    """

    has_rsample = True

    def rsample(self, sample_shape=Size()) -> Tensor:
        samples = self.sample(sample_shape)
        probs = self.probs
        return samples + (probs - probs.detach())


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
