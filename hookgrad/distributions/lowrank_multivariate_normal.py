"""``LowRankMultivariateNormal(loc, cov_factor, cov_diag)``: a Gaussian whose covariance
is ``W W^T + diag(D)``, evaluated through the small capacitance matrix."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .._factory import eye, randn
from .._ops.shape import broadcast_tensors
from .._tensor import Size
from ..linalg import cholesky, solve_triangular
from . import constraints
from ._simple import _CentredAtLoc
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis, _batch_mv
from .utils import lazy_property

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["LowRankMultivariateNormal"]


def _plus_identity(k):
    return k + eye(k.shape[-1], dtype=k.dtype)


def _capacitance_tril(w, d):
    # the Cholesky factor of I + W^T D^-1 W (m x m, m the rank)
    wt_dinv = w.mT / d.unsqueeze(-2)
    return cholesky(_plus_identity(wt_dinv @ w))


def _lowrank_logdet(w, d, cap_tril):
    # log det(W W^T + D) by the matrix determinant lemma
    return 2 * cap_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + d.log().sum(-1)


def _lowrank_mahalanobis(w, d, x, cap_tril):
    # x^T (W W^T + D)^-1 x by the Woodbury identity
    wt_dinv_x = _batch_mv(w.mT / d.unsqueeze(-2), x)
    return (x.pow(2) / d).sum(-1) - _batch_mahalanobis(cap_tril, wt_dinv_x)


class LowRankMultivariateNormal(_CentredAtLoc, Distribution):
    r"""The multivariate normal distribution with a low-rank plus diagonal covariance
    ``cov_factor @ cov_factor.mT + diag(cov_diag)``, as
    ``torch.distributions.LowRankMultivariateNormal``.

    .. code-block:: python

        LowRankMultivariateNormal(loc, cov_factor, cov_diag, validate_args=None)
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError("cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, diag_ = broadcast_tensors(loc.unsqueeze(-1), cov_factor,
                                                             cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc, self.cov_diag = loc_[..., 0], diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> LowRankMultivariateNormal:
        batch_shape = Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        return self._new_expanded(LowRankMultivariateNormal, batch_shape, {
            "loc": self.loc.expand(loc_shape), "cov_diag": self.cov_diag.expand(loc_shape),
            "cov_factor": self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:]),
            "_unbroadcasted_cov_factor": self._unbroadcasted_cov_factor,
            "_unbroadcasted_cov_diag": self._unbroadcasted_cov_diag,
            "_capacitance_tril": self._capacitance_tril})

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def variance(self) -> Tensor:
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (w.pow(2).sum(-1) + d).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        d_sqrt = d.sqrt().unsqueeze(-1)
        scaled = w / d_sqrt
        return (d_sqrt * cholesky(_plus_identity(scaled @ scaled.mT))).expand(
            self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (w @ w.mT + d.diag_embed()).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        a = solve_triangular(self._capacitance_tril, w.mT / d.unsqueeze(-2), upper=False)
        return (d.reciprocal().diag_embed() - a.mT @ a).expand(self._matrix_shape())

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        w = self._unbroadcasted_cov_factor
        eps_w = randn(tuple(shape[:-1]) + tuple(w.shape[-1:]), dtype=self.loc.dtype)
        eps_d = randn(shape, dtype=self.loc.dtype)
        return self.loc + _batch_mv(w, eps_w) + self._unbroadcasted_cov_diag.sqrt() * eps_d

    def _logdet(self):
        return _lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                               self._capacitance_tril)

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        m = _lowrank_mahalanobis(self._unbroadcasted_cov_factor,
                                 self._unbroadcasted_cov_diag, value - self.loc,
                                 self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._logdet() + m)

    def entropy(self) -> Tensor:
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._logdet())
        return h.expand(self._batch_shape) if len(self._batch_shape) else h


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
