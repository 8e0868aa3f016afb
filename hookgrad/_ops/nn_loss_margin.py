"""Margin, ranking and likelihood losses behind ``hookgrad.nn.functional``.

Where PyTorch has a kernel of its own (``soft_margin_loss``, ``multi_margin_loss``,
``multilabel_margin_loss``) the loss is one op of the table with PyTorch's node; the others
are composed from ops, as PyTorch composes them, so they record the same nodes.
"""
from __future__ import annotations

import math

import jax.numpy as jnp

from .. import _autograd
from .._dtype import torch_kind
from .._tensor import Tensor
from .dispatch import apply
from .nn import logsigmoid, pairwise_distance
from .nn_loss import _REDUCE, _check_reduction, _reduction
from .registry import defop


def _reduce(loss, reduction):
    _check_reduction(reduction)
    return loss if reduction == "none" else loss.mean() if reduction == "mean" else loss.sum()


def _no_grad_for(name, arg, t):
    if t is not None and t.requires_grad:
        raise RuntimeError(f"The function '{name}' is not differentiable with respect to "
                           f"argument '{arg}'. This input cannot have requires_grad True.")


# --------------------------------------------------------------------------- kernels


def _soft_margin(x, y, reduction):
    return _REDUCE[reduction](jnp.log1p(jnp.exp(-y * x)))


def _multi_margin(x, y, w, p, margin, reduction):
    x2 = x.reshape(-1, x.shape[-1]) if x.ndim else x.reshape(1, 1)
    y2 = y.reshape(-1)
    picked = jnp.take_along_axis(x2, y2[:, None], axis=1)
    z = jnp.maximum(margin - picked + x2, 0.0)
    z = z ** p if p == 2 else z
    if w is not None:
        z = z * w[y2][:, None]
    z = jnp.where(jnp.arange(x2.shape[1])[None, :] == y2[:, None], 0.0, z)
    loss = z.sum(1) / x2.shape[1]
    return _REDUCE[reduction](loss.reshape(y.shape))


def _multilabel_margin(x, y, reduction):
    x2 = x.reshape(-1, x.shape[-1])
    y2 = y.reshape(x2.shape)
    c = x2.shape[1]
    # the targets are the leading entries up to the first -1
    valid = jnp.cumprod(y2 >= 0, axis=1).astype(bool)
    is_target = jnp.zeros(x2.shape, bool).at[jnp.arange(x2.shape[0])[:, None],
                                             jnp.where(valid, y2, 0)].max(valid)
    xt = jnp.take_along_axis(x2, jnp.where(valid, y2, 0), axis=1)      # (n, c) target scores
    hinge = jnp.maximum(1.0 - (xt[:, :, None] - x2[:, None, :]), 0.0)  # (n, target, other)
    hinge = jnp.where(valid[:, :, None] & ~is_target[:, None, :], hinge, 0.0)
    loss = hinge.sum((1, 2)) / c
    return _REDUCE[reduction](loss.reshape(x.shape[:-1]))


SOFT_MARGIN = defop("soft_margin_loss", _soft_margin, "SoftMarginLossBackward0", nondiff=(1,))
MULTI_MARGIN = defop("multi_margin_loss", _multi_margin, "MultiMarginLossBackward0",
                     nondiff=(1, 2))
MULTILABEL_MARGIN = defop("multilabel_margin_loss", _multilabel_margin,
                          "MultilabelMarginLossBackward0", nondiff=(1,))


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean") -> Tensor:
    """Two-class logistic loss ``log(1 + exp(-y x))`` with targets ``y`` in ``{1, -1}``."""
    red = _reduction(size_average, reduce, reduction)
    _check_reduction(red)
    _no_grad_for("soft_margin_loss", "target", target)
    return apply(SOFT_MARGIN, (input, target), {"reduction": red})


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean") -> Tensor:
    """Multi-class hinge loss: ``sum_j max(0, margin - x[y] + x[j])^p / C`` over ``j != y``."""
    red = _reduction(size_average, reduce, reduction)
    _check_reduction(red)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    _no_grad_for("multi_margin_loss", "weight", weight)
    return apply(MULTI_MARGIN, (input, target, weight),
                 {"p": int(p), "margin": float(margin), "reduction": red})


def multilabel_margin_loss(input, target, size_average=None, reduce=None,
                           reduction="mean") -> Tensor:
    """Multi-label hinge loss; ``target`` holds class indices, ended by the first ``-1``."""
    red = _reduction(size_average, reduce, reduction)
    _check_reduction(red)
    _no_grad_for("multilabel_margin_loss", "target", target)
    if target.dtype.name != "int64":  # JAX's indexing would word it
        raise RuntimeError(f"expected scalar type Long but found {torch_kind(target.dtype.name)}")
    return apply(MULTILABEL_MARGIN, (input, target), {"reduction": red})


# --------------------------------------------------------------------------- composed


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``y = 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``y = -1``."""
    red = _reduction(size_average, reduce, reduction)
    eps = 1e-12
    dim = input1.ndim - 1
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + eps
    mag2 = (input2 * input2).sum(dim) + eps
    cos = prod / (mag1 * mag2).sqrt()
    zeros = cos.new_zeros(())
    pos = (1 - cos).where(target == 1, zeros)
    neg = (cos - margin).clamp_min(0).where(target == -1, zeros)
    return _reduce(pos + neg, red)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean") -> Tensor:
    """``x`` where ``y = 1``, ``max(0, margin - x)`` where ``y = -1``."""
    red = _reduction(size_average, reduce, reduction)
    zeros = input.new_zeros(())
    below = (margin - input).clamp_min(0).where(target != 1, zeros)
    return _reduce(below + input.where(target != -1, zeros), red)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean") -> Tensor:
    """``max(0, -y (x1 - x2) + margin)``."""
    red = _reduction(size_average, reduce, reduction)
    if not (input1.ndim == input2.ndim == target.ndim):
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same "
                           f"dimension but got sizes: input1: {input1.shape}, input2: "
                           f"{input2.shape}, target: {target.shape} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), red)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean") -> Tensor:
    """Multi-label one-versus-all logistic loss, averaged over the classes."""
    red = _reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    dim = input.ndim - 1
    loss = loss.sum(dim) / input.shape[dim]
    return _reduce(loss, red)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean") -> Tensor:
    """Negative log-likelihood of ``target ~ Poisson(input)`` (``exp(input)`` when
    ``log_input``); ``full`` adds Stirling's term for targets above 1."""
    red = _reduction(size_average, reduce, reduction)
    _check_reduction(red)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, red)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean") -> Tensor:
    """Negative log-likelihood of ``target ~ N(input, var)``: ``0.5 (log(max(var, eps)) +
    (input - target)^2 / max(var, eps))`` (plus ``0.5 log(2 pi)`` when ``full``)."""
    if not isinstance(var, Tensor):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = input.new_full((), float(var))
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.shape[:-1] == var.shape[:-1] and var.shape[-1] == 1) and var.numel() != 1:
            raise ValueError("var is of incorrect size")
    _check_reduction(reduction)
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = var.clone()
    with _autograd.grad_mode.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean") -> Tensor:
    """``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the ``p``-norm distance
    (``swap``: ``d(a, n)`` is ``min(d(a, n), d(p, n))``)."""
    red = _reduction(size_average, reduce, reduction)
    return triplet_margin_with_distance_loss(
        anchor, positive, negative, margin=margin, swap=swap, reduction=red,
        distance_function=lambda a, b: pairwise_distance(a, b, p, eps))


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean") -> Tensor:
    """``max(0, margin + d(a, p) - d(a, n))`` for any ``distance_function`` (default
    ``pairwise_distance``)."""
    if margin <= 0:
        raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, "
                         f"got {margin} instead")
    _check_reduction(reduction)
    d = distance_function if distance_function is not None else pairwise_distance
    dist_pos = d(anchor, positive)
    dist_neg = d(anchor, negative)
    if swap:
        dist_neg = dist_neg.minimum(d(positive, negative))
    return _reduce((margin + dist_pos - dist_neg).clamp_min(0), reduction)
