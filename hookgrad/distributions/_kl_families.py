"""The ``kl_divergence`` pairs PyTorch registers for the count, one-hot, continuous
Bernoulli, multivariate normal, independent and transformed distributions."""
from __future__ import annotations

import math

from .._ops.pointwise import where
from .._ops.shape import broadcast_shapes
from ..linalg import solve_triangular
from ._transform import _sum_rightmost
from .binomial import Binomial
from .continuous_bernoulli import ContinuousBernoulli
from .independent import Independent
from .kl import _kl_categorical_categorical, kl_divergence, register_kl
from .lowrank_multivariate_normal import (LowRankMultivariateNormal, _lowrank_logdet,
                                          _lowrank_mahalanobis)
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis, _half_log_det
from .one_hot_categorical import OneHotCategorical
from .transformed_distribution import TransformedDistribution


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > "
                                  "p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    return where(p.total_count > q.total_count, math.inf, kl)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + (-p.probs).log1p()
    t3 = -q._cont_bern_log_norm() - (-q.probs).log1p()
    return t1 + t2 + t3


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist),
                          p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


def _trace_xxt(m):
    return m.pow(2).sum((-2, -1))


def _check_events(p, q, which):
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {which} with different event shapes "
                         "cannot be computed")


def _solve_lower(tril, rhs):
    # tril^-1 rhs, the two broadcast over their batch dimensions
    batch = tuple(broadcast_shapes(tuple(tril.shape[:-2]), tuple(rhs.shape[:-2])))
    return solve_triangular(tril.expand(batch + tuple(tril.shape[-2:])),
                            rhs.expand(batch + tuple(rhs.shape[-2:])), upper=False)


def _lowrank_parts(d):
    return d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag, d._capacitance_tril


def _woodbury_a(q):
    # A with inv(Sigma_q) = inv(D_q) - A^T A
    w, d, cap = _lowrank_parts(q)
    return solve_triangular(cap, w.mT / d.unsqueeze(-2), upper=False)


def _log_det(d):
    # log det Sigma of either Gaussian
    if isinstance(d, LowRankMultivariateNormal):
        return _lowrank_logdet(*_lowrank_parts(d))
    return 2 * _half_log_det(d._unbroadcasted_scale_tril)


def _mahalanobis(q, x):
    # x^T inv(Sigma_q) x of either Gaussian
    if isinstance(q, LowRankMultivariateNormal):
        w, d, cap = _lowrank_parts(q)
        return _lowrank_mahalanobis(w, d, x, cap)
    return _batch_mahalanobis(q._unbroadcasted_scale_tril, x)


def _gaussian_kl(p, q, trace):
    """KL(p || q) of two Gaussians of the same event size, given ``trace``, tr(inv(Sigma_q)
    Sigma_p): the pair's own term, the rest is the same for every pair."""
    return 0.5 * (_log_det(q) - _log_det(p) + trace + _mahalanobis(q, q.loc - p.loc)
                  - p.event_shape[0])


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    _check_events(p, q, "Multivariate Normals")
    pl, ql = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    return _gaussian_kl(p, q, _trace_xxt(_solve_lower(ql, pl)))


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    _check_events(p, q, "Low Rank Multivariate Normals")
    pw, pd, _ = _lowrank_parts(p)
    qd, a = q._unbroadcasted_cov_diag, _woodbury_a(q)
    trace = ((pd / qd).sum(-1) + _trace_xxt(pw * qd.rsqrt().unsqueeze(-1))
             - _trace_xxt(a * pd.sqrt().unsqueeze(-2)) - _trace_xxt(a @ pw))
    return _gaussian_kl(p, q, trace)


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrank(p, q):
    _check_events(p, q, "(Low Rank) Multivariate Normals")
    pl, qd = p._unbroadcasted_scale_tril, q._unbroadcasted_cov_diag
    trace = _trace_xxt(pl * qd.rsqrt().unsqueeze(-1)) - _trace_xxt(_woodbury_a(q) @ pl)
    return _gaussian_kl(p, q, trace)


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_multivariatenormal(p, q):
    _check_events(p, q, "(Low Rank) Multivariate Normals")
    pw, pd, _ = _lowrank_parts(p)
    ql = q._unbroadcasted_scale_tril
    trace = (_trace_xxt(_solve_lower(ql, pw))
             + _trace_xxt(_solve_lower(ql, pd.sqrt().diag_embed())))
    return _gaussian_kl(p, q, trace)
