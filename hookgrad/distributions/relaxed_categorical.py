"""``RelaxedOneHotCategorical`` and ``ExpRelaxedCategorical``: the concrete
(Gumbel-softmax) relaxation of a one-hot categorical variable, reparameterised."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .._arguments import own_init
from .._factory import full_like, rand
from . import constraints
from ._probs_logits import _OverCategorical
from .relaxed_bernoulli import _Relaxed
from .transforms import ExpTransform
from .utils import clamp_probs

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(_OverCategorical):
    r"""The log of a ``RelaxedOneHotCategorical`` variable, as
    ``torch.distributions.relaxed_categorical.ExpRelaxedCategorical``.

    .. code-block:: python

        ExpRelaxedCategorical(temperature, probs=None, logits=None, validate_args=None)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True
    _copied = ("temperature",)

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        self._init_categorical(probs, logits, validate_args)

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(rand(shape, dtype=self.logits.dtype))
        scores = (self.logits - (-u.log()).log()) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value) -> Tensor:
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        t = self.temperature
        log_scale = full_like(t, float(k)).lgamma() - t.log().mul(-(k - 1))
        score = self.logits - value.mul(t)
        return (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1) + log_scale


@own_init
class RelaxedOneHotCategorical(_Relaxed):
    r"""A relaxed one-hot categorical distribution on the simplex at ``temperature``
    (Gumbel-softmax), as ``torch.distributions.RelaxedOneHotCategorical``.

    .. code-block:: python

        RelaxedOneHotCategorical(temperature, probs=None, logits=None, validate_args=None)

    Its ``rsample`` is differentiable in ``probs``/``logits`` (Gumbel noise from
    hookgrad's global key).
    """

    arg_constraints = ExpRelaxedCategorical.arg_constraints
    support = constraints.simplex
    _base, _transform, _base_validates = ExpRelaxedCategorical, ExpTransform, True


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
