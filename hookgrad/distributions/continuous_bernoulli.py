"""``ContinuousBernoulli(probs=None, logits=None)``: the normalised Bernoulli likelihood as
a density on ``[0, 1]``."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .._factory import full_like, ones_like, rand, zeros_like
from .._ops.pointwise import where
from .._tensor import Size
from ..nn import functional as F
from . import constraints
from ._probs_logits import _ProbsOrLogits
from .exp_family import ExponentialFamily
from .utils import clamp_probs, lazy_property, logits_to_probs

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(_ProbsOrLogits, ExponentialFamily):
    r"""The continuous Bernoulli distribution on ``[0, 1]``, as
    ``torch.distributions.ContinuousBernoulli``.

    .. code-block:: python

        ContinuousBernoulli(probs=None, logits=None, lims=(0.499, 0.501),
                            validate_args=None)

    Near ``probs = 1/2`` (inside ``lims``) the normaliser and moments use their Taylor
    expansions. ``rsample`` is ``icdf`` of uniform noise from hookgrad's global key.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _copied = ("_lims",)

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        batch_shape = self._init_params(probs, logits)
        if probs is not None:
            if validate_args is not None and not bool(
                    self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = self._param = clamp_probs(self.probs)
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def _stable(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        # probs inside the unstable band replaced (the Taylor branch is used there)
        return where(self._stable(), self.probs, self._lims[0] * ones_like(self.probs))

    def _cont_bern_log_norm(self):
        p = self._cut_probs()
        below = where(p <= 0.5, p, zeros_like(p))
        above = where(p >= 0.5, p, ones_like(p))
        log_norm = ((-p).log1p() - p.log()).abs().log() - where(
            p <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._stable(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        p = self._cut_probs()
        mus = p / (2.0 * p - 1.0) + 1.0 / ((-p).log1p() - p.log())
        x = self.probs - 0.5
        return where(self._stable(), mus, 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x)

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    @property
    def variance(self) -> Tensor:
        p = self._cut_probs()
        var = p * (p - 1.0) / (1.0 - 2.0 * p).pow(2) + 1.0 / ((-p).log1p() - p.log()).pow(2)
        x = (self.probs - 0.5).pow(2)
        return where(self._stable(), var, 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x)

    def sample(self, sample_shape=Size()) -> Tensor:
        from .._autograd.grad_mode import no_grad
        u = rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=Size()) -> Tensor:
        return self.icdf(rand(self._extended_shape(sample_shape), dtype=self.probs.dtype))

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        from .distribution import broadcast_all
        logits, value = broadcast_all(self.logits, value)
        return (-F.binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        p = self._cut_probs()
        cdfs = (p.pow(value) * (1.0 - p).pow(1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inside = where(self._stable(), cdfs, value)
        return where(value <= 0.0, zeros_like(value),
                     where(value >= 1.0, ones_like(value), inside))

    def icdf(self, value) -> Tensor:
        p = self._cut_probs()
        inverted = (((-p + value * (2.0 * p - 1.0)).log1p() - (-p).log1p())
                    / (p.log() - (-p).log1p()))
        return where(self._stable(), inverted, value)

    def entropy(self) -> Tensor:
        log_q, log_p = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log_q - log_p) - self._cont_bern_log_norm() - log_q

    @property
    def _natural_params(self) -> tuple:
        return (self.logits,)

    def _log_normalizer(self, x) -> Tensor:
        lo, hi = self._lims[0] - 0.5, self._lims[1] - 0.5
        stable = (x <= lo) | (x > hi)
        cut = where(stable, x, full_like(x, lo))
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return where(stable, log_norm, taylor)


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
