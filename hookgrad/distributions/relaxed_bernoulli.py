"""``RelaxedBernoulli`` and ``LogitRelaxedBernoulli``: the concrete (Gumbel-softmax)
relaxation of a Bernoulli variable, reparameterised."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .._arguments import own_init
from .._factory import rand
from . import constraints
from ._probs_logits import _ProbsOrLogits
from .distribution import broadcast_all
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import _delegated, clamp_probs

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(_ProbsOrLogits):
    r"""The logit of a ``RelaxedBernoulli`` variable, as
    ``torch.distributions.relaxed_bernoulli.LogitRelaxedBernoulli``.

    .. code-block:: python

        LogitRelaxedBernoulli(temperature, probs=None, logits=None, validate_args=None)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    _copied = ("temperature",)   # PyTorch's has_rsample stays False here, though it has rsample

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        batch_shape = self._init_params(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(rand(shape, dtype=probs.dtype))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class _Relaxed(TransformedDistribution):
    """A relaxation: its ``_base`` law (in logit or log space, at the same ``temperature``,
    ``probs`` and ``logits``) pushed through ``_transform``. ``_base_validates`` says
    whether the base gets ``validate_args``: PyTorch's ``RelaxedBernoulli`` leaves its base
    at the default, ``RelaxedOneHotCategorical`` passes it on."""

    has_rsample = True
    _base: type
    _transform: type
    _base_validates: bool

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        checks = {"validate_args": validate_args} if self._base_validates else {}
        base = self._base(temperature, probs, logits, **checks)
        super().__init__(base, self._transform(), validate_args=validate_args)

    temperature = _delegated("base_dist", "temperature")
    logits = _delegated("base_dist", "logits")
    probs = _delegated("base_dist", "probs")


@own_init
class RelaxedBernoulli(_Relaxed):
    r"""A relaxed Bernoulli distribution on ``(0, 1)`` at ``temperature``, as
    ``torch.distributions.RelaxedBernoulli``: ``sigmoid`` of a ``LogitRelaxedBernoulli``.

    .. code-block:: python

        RelaxedBernoulli(temperature, probs=None, logits=None, validate_args=None)

    Its ``rsample`` is differentiable in ``probs``/``logits`` (uniform noise from
    hookgrad's global key).
    """

    arg_constraints = LogitRelaxedBernoulli.arg_constraints
    support = constraints.unit_interval
    _base, _transform, _base_validates = LogitRelaxedBernoulli, SigmoidTransform, False


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
