"""PyTorch's loss kernels as top-level functions (``torch.kl_div``, ``torch.hinge_embedding_loss``,
...): ATen's signatures, where ``reduction`` is an int (0 none, 1 mean, 2 sum) and there is
no ``size_average``/``reduce``. Each runs the op of its ``nn.functional`` form.
"""
from __future__ import annotations

from .._tensor import Tensor
from .dispatch import apply
from .nn_ctc import ctc_loss_unreduced, reduce_ctc
from .nn_loss import KL_DIV, KL_DIV_LOG_NONE, binary_cross_entropy_with_logits as _bce_logits
from .nn_loss_margin import (cosine_embedding_loss as _cosine_embedding,
                             hinge_embedding_loss as _hinge_embedding,
                             margin_ranking_loss as _margin_ranking,
                             poisson_nll_loss as _poisson_nll,
                             triplet_margin_loss as _triplet_margin)
from .registry import export


# NOTE: ATen's schemas give ``reduction`` the default Mean, but PyTorch's Python binding
# reads that default as 0: an omitted ``reduction`` leaves the loss unreduced. The
# defaults below are what a caller of PyTorch gets.


def reduction_name(reduction: int) -> str:
    """ATen's reduction enum as ``nn.functional``'s string: 1 mean, 2 sum; ATen's kernels
    leave the loss unreduced for any other value."""
    return {1: "mean", 2: "sum"}.get(int(reduction), "none")


@export(method=False)
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None,
                                     reduction: int = 0) -> Tensor:
    """Binary cross entropy of ``sigmoid(input)`` and ``target``; ``reduction``: 0 none,
    1 mean, 2 sum."""
    return _bce_logits(input, target, weight, reduction=reduction_name(reduction),
                       pos_weight=pos_weight)


@export(method=False)
def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *,
           log_target: bool = False) -> Tensor:
    """Kullback-Leibler divergence of ``target`` from ``input`` (log-probabilities);
    ``reduction``: 0 none, 1 the mean over every element, 2 sum."""
    red = reduction_name(reduction)
    op = KL_DIV_LOG_NONE if (log_target and red == "none") else KL_DIV[red]
    return apply(op, (input, target), {"reduction": red, "log_target": bool(log_target)})


@export(method=False)
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 0) -> Tensor:
    """``1 - cos(x1, x2)`` where ``target`` is 1, ``max(0, cos(x1, x2) - margin)`` where -1."""
    return _cosine_embedding(input1, input2, target, margin, reduction=reduction_name(reduction))


@export(method=False)
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: int = 0) -> Tensor:
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where -1."""
    return _hinge_embedding(input, target, margin, reduction=reduction_name(reduction))


@export(method=False)
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``."""
    return _margin_ranking(input1, input2, target, margin, reduction=reduction_name(reduction))


@export(method=False)
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    """Negative log likelihood of ``target`` under a Poisson law of rate ``input`` (its log
    when ``log_input``); ``full`` adds Stirling's term."""
    return _poisson_nll(input, target, log_input, full, eps=eps,
                        reduction=reduction_name(reduction))


@export(method=False)
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        reduction: int = 0) -> Tensor:
    """``max(d(a, p) - d(a, n) + margin, 0)`` with ``d`` the ``p``-norm distance."""
    return _triplet_margin(anchor, positive, negative, margin, p, eps, swap,
                           reduction=reduction_name(reduction))


@export(method=False)
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: int = 0, zero_infinity: bool = False) -> Tensor:
    """The connectionist temporal classification loss (``nn.functional.ctc_loss``) with
    ``reduction`` as an int; 1 divides each loss by its target length, then averages."""
    loss = ctc_loss_unreduced(log_probs, targets, input_lengths, target_lengths, blank,
                              zero_infinity)
    return reduce_ctc(loss, target_lengths, reduction_name(reduction))
