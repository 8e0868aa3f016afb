"""Loss ops behind ``hookgrad.nn.functional``: regression losses, binary and categorical
cross entropy, negative log-likelihood, KL divergence.

One row per op; the backward is JAX's vjp of the forward. Where PyTorch composes a loss
from several ops, the fused row carries the name of PyTorch's last node, one row per
reduction when that name depends on it. Value checks (targets in range, probabilities in
[0, 1]) run eagerly and are skipped on traced arrays.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _errors
from .._dtype import torch_kind
from .._tensor import Tensor
from .dispatch import apply, pack_before_error
from .gather import check_index, check_traced_values
from .reduction import LOG_SOFTMAX
from .registry import defop, export
from .shape import VIEW

_REDUCE = {"mean": jnp.mean, "sum": jnp.sum, "none": lambda x: x}


# --------------------------------------------------------------------------- losses


def _reduction(size_average, reduce, reduction):
    """The reduction the legacy ``size_average``/``reduce`` pair names (with PyTorch's
    deprecation warning), else ``reduction``."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        legacy = ("mean" if size_average else "sum") if reduce else "none"
        _errors.warn(f"size_average and reduce args will be deprecated, please use "
                     f"reduction='{legacy}' instead.")
        return legacy
    return reduction


def _check_reduction(reduction, allowed=("mean", "sum", "none")):
    if reduction not in allowed:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _warn_size(input, target):
    if input.shape != target.shape:
        _errors.warn(f"Using a target size ({target.shape}) that is different to the input "
                     f"size ({input.shape}). This will likely lead to incorrect results due to "
                     "broadcasting. Please ensure they have the same size.")


def _per_reduction(name, fwd, nodes):
    return {r: defop(f"{name}_{r}", fwd, node) for r, node in nodes.items()}


def _weighted(loss, w, reduction):
    # PyTorch's weighted elementwise losses: the mean is normalised by the weight sum
    loss = loss * w
    if reduction == "mean":
        return jnp.sum(loss) / jnp.sum(w)
    return _REDUCE[reduction](loss)


def _mse(x, y, reduction):
    return _REDUCE[reduction](jnp.square(x - y))


def _huber(x, y, reduction, delta):
    d = jnp.abs(x - y)
    return _REDUCE[reduction](jnp.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)))


def _smooth_l1(x, y, reduction, beta):
    d = jnp.abs(x - y)
    return _REDUCE[reduction](jnp.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta))


def _bce_logits(x, t, w, pw, reduction):
    lw = 1.0 if pw is None else 1.0 + (pw - 1.0) * t
    loss = (1.0 - t) * x + lw * jax.nn.softplus(-x)
    if w is not None:
        loss = loss * w
    return _REDUCE[reduction](loss)


def _bce(x, t, w, reduction):
    # logs clamped at -100 so that 0 and 1 give finite losses, as PyTorch
    loss = -(t * jnp.maximum(jnp.log(x), -100.0) + (1.0 - t) * jnp.maximum(jnp.log1p(-x),
                                                                            -100.0))
    if w is not None:
        loss = loss * w
    return _REDUCE[reduction](loss)


def _kl_div(x, t, reduction, log_target):
    loss = jnp.exp(t) * (t - x) if log_target else jax.scipy.special.xlogy(t, t) - t * x
    if reduction == "batchmean":
        return jnp.sum(loss) / (x.shape[0] if x.ndim else 1)
    return _REDUCE[reduction](loss)


MSE = defop("mse_loss", _mse, "MseLossBackward0")
HUBER = defop("huber_loss", _huber, "HuberLossBackward0")
SMOOTH_L1 = defop("smooth_l1_loss", _smooth_l1, "SmoothL1LossBackward0")
BCE_LOGITS = defop("binary_cross_entropy_with_logits", _bce_logits,
                   "BinaryCrossEntropyWithLogitsBackward0")
BCE = defop("binary_cross_entropy", _bce, "BinaryCrossEntropyBackward0")
# composite in PyTorch: the node is that of the last op
L1 = _per_reduction("l1_loss", lambda x, y, reduction: _REDUCE[reduction](jnp.abs(x - y)),
                    {"mean": "MeanBackward0", "sum": "SumBackward0", "none": "AbsBackward0"})
WEIGHTED = _per_reduction(
    "weighted_loss", lambda x, y, w, kind, reduction, param: _weighted(
        {"mse": lambda: jnp.square(x - y), "l1": lambda: jnp.abs(x - y),
         "huber": lambda: _huber(x, y, "none", param)}[kind](), w, reduction),
    {"mean": "DivBackward0", "sum": "SumBackward0", "none": "MulBackward0"})
WEIGHTED_HUBER_MEAN = defop("weighted_huber_mean", lambda x, y, w, delta: jnp.mean(
    _huber(x, y, "none", delta) * w), "MeanBackward0")
KL_DIV = _per_reduction("kl_div", _kl_div, {"mean": "MeanBackward0", "sum": "SumBackward0",
                                            "batchmean": "DivBackward0", "none": "SubBackward0"})
KL_DIV_LOG_NONE = defop("kl_div_log_target_none", _kl_div, "MulBackward0")


def _weighted_loss(kind, input, target, weight, reduction, param=None):
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean',"
                         f" 'sum'.")
    if kind == "huber" and reduction == "mean":  # PyTorch takes a plain mean here
        return apply(WEIGHTED_HUBER_MEAN, (input, target, weight), {"delta": param})
    return apply(WEIGHTED[reduction], (input, target, weight),
                 {"kind": kind, "reduction": reduction, "param": param})


@export(method=False)
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean",
             weight=None) -> Tensor:
    """Mean squared error, ``(input - target) ** 2`` reduced.

    ::

        mse_loss(input, target, size_average=None, reduce=None, reduction='mean',
                 weight=None) -> Tensor
    """
    _warn_size(input, target)
    if input._arr.dtype.kind in "biu" and target._arr.dtype.kind in "biu":
        kind = torch_kind(np.promote_types(input._arr.dtype, target._arr.dtype))
        raise NotImplementedError(f"\"mse_cpu\" not implemented for '{kind}'")
    red = _reduction(size_average, reduce, reduction)
    if weight is not None:
        return _weighted_loss("mse", input, target, weight, red)
    _check_reduction(red)
    return apply(MSE, (input, target), {"reduction": red})


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None) -> Tensor:
    """Mean absolute error, ``|input - target|`` reduced."""
    _warn_size(input, target)
    red = _reduction(size_average, reduce, reduction)
    if weight is not None:
        return _weighted_loss("l1", input, target, weight, red)
    _check_reduction(red)
    return apply(L1[red], (input, target), {"reduction": red})


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0) -> Tensor:
    """Quadratic below ``beta`` (``0.5 d^2 / beta``), linear above (``d - 0.5 beta``)."""
    _warn_size(input, target)
    red = _reduction(size_average, reduce, reduction)
    _check_reduction(red)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return apply(L1[red], (input, target), {"reduction": red})
    return apply(SMOOTH_L1, (input, target), {"reduction": red, "beta": float(beta)})


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None) -> Tensor:
    """Quadratic below ``delta`` (``0.5 d^2``), linear above (``delta (d - 0.5 delta)``)."""
    _warn_size(input, target)
    if weight is not None:
        return _weighted_loss("huber", input, target, weight, reduction, float(delta))
    _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    return apply(HUBER, (input, target), {"reduction": reduction, "delta": float(delta)})


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None) -> Tensor:
    """Sigmoid + binary cross entropy in one numerically stable op.

    ::

        binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                          reduce=None, reduction='mean',
                                          pos_weight=None) -> Tensor

    ``pos_weight`` weighs the positive term (broadcast along the last dim).
    """
    red = _reduction(size_average, reduce, reduction)
    _check_reduction(red)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    return apply(BCE_LOGITS, (input, target, weight, pos_weight), {"reduction": red})


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean") -> Tensor:
    """Binary cross entropy between probabilities ``input`` and ``target`` (logs clamped at
    -100)."""
    red = _reduction(size_average, reduce, reduction)
    _check_reduction(red)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         f"size.")
    for name, t in (("input", input), ("target", target)):  # PyTorch's kernel checks both
        if isinstance(t._data, jax.core.Tracer):   # compiled: checked after the run
            check_traced_values(t._data, lambda a: ~((a >= 0) & (a <= 1)), RuntimeError(
                f"all elements of {name} should be between 0 and 1"))
        elif t.numel():
            lo, hi = _minmax(t._data)
            if not (float(lo) >= 0.0 and float(hi) <= 1.0):  # PyTorch's node packs first
                pack_before_error(BCE, (input, target, weight))
                raise RuntimeError(f"all elements of {name} should be between 0 and 1")
    return apply(BCE, (input, target, weight), {"reduction": red})


@jax.jit
def _minmax(a):
    return jnp.min(a), jnp.max(a)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False) -> Tensor:
    """Kullback-Leibler divergence with ``input`` given as log-probabilities.

    ::

        kl_div(input, target, size_average=None, reduce=None, reduction='mean',
               log_target=False) -> Tensor
    """
    if size_average is not None or reduce is not None:
        red = _reduction(size_average, reduce, reduction)
    else:
        red = reduction
        if red == "mean":
            _errors.warn("reduction: 'mean' divides the total loss by both the batch size and "
                         "the support size.'batchmean' divides only by the batch size, and "
                         "aligns with the KL div math definition.'mean' will be changed to "
                         "behave the same as 'batchmean' in the next major release.")
    _check_reduction(red, ("mean", "sum", "none", "batchmean"))
    op = KL_DIV_LOG_NONE if (log_target and red == "none") else KL_DIV[red]
    return apply(op, (input, target), {"reduction": red, "log_target": bool(log_target)})


# --------------------------------------------------------------------------- nll / cross entropy


def _nll(logp, target, weight, reduction, ignore_index):
    # logp: (N, C, ...) ; target: (N, ...); or unbatched (C,) ; ()
    if logp.ndim == 1:
        out = _nll(logp[None], target.reshape(1), weight, reduction, ignore_index)
        return out[0] if reduction == "none" else out
    t = jnp.where(target == ignore_index, 0, target)
    picked = -jnp.take_along_axis(logp, jnp.expand_dims(t, 1), axis=1).squeeze(1)
    w = jnp.ones_like(picked) if weight is None else weight[t].astype(logp.dtype)
    w = jnp.where(target == ignore_index, jnp.zeros((), logp.dtype), w)
    loss = picked * w
    if reduction == "mean":
        return jnp.sum(loss) / jnp.sum(w)
    return _REDUCE[reduction](loss)


def _soft_ce(logp, p, weight, reduction):
    # classes on dim 1, or dim 0 of an unbatched (C,) input
    c = min(logp.ndim - 1, 1)
    if weight is not None:
        p = p * weight.reshape((1,) * c + (-1,) + (1,) * (logp.ndim - 1 - c))
    loss = -jnp.sum(logp * p, axis=c)
    if reduction == "mean":
        return jnp.sum(loss) / (logp.size // logp.shape[c])
    return _REDUCE[reduction](loss)


def _nll_total_weight(logp, target, weight, reduction, ignore_index):
    # what PyTorch's kernel returns beside the loss and saves: the summed weight of the
    # counted targets (0 from the batched CPU kernel with reduction='none')
    if reduction == "none" and logp.ndim > 1:
        return (jnp.zeros((), logp.dtype),)
    t = jnp.where(target == ignore_index, 0, target)
    w = jnp.ones(t.shape, logp.dtype) if weight is None else weight[t].astype(logp.dtype)
    return (jnp.sum(jnp.where(target == ignore_index, jnp.zeros((), logp.dtype), w)),)


# the target and the class weights are not differentiable: no edges, as in PyTorch
_NLL_NAMES = ("self target weight -> self target weight reduction=reduction:enum ignore_index "
              "total_weight=result1")
NLL = defop("nll_loss", _nll, "NllLossBackward0", nondiff=(1, 2), names=_NLL_NAMES,
            extras=_nll_total_weight)
NLL2D = defop("nll_loss2d", _nll, "NllLoss2DBackward0", nondiff=(1, 2), names=_NLL_NAMES,
              extras=_nll_total_weight)
SOFT_CE = _per_reduction("soft_cross_entropy", _soft_ce, {
    "mean": "DivBackward1", "sum": "NegBackward0", "none": "NegBackward0"})


def _check_targets(x, t, weight, ignore_index):
    # PyTorch's checks in its order: batch size, the target's rank and shape per input
    # rank, then the target's dtype, the class weights, then the class indices' range
    if x.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {x.ndim})")
    if x.ndim != 1 and x.shape[0] != (t.shape[0] if t.ndim else 0):
        raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size "
                         f"({t.shape[0] if t.ndim else 0}).")
    if x.ndim <= 2 and t.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if x.ndim == 4 and t.ndim != 3:
        raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {t.ndim}")
    if x.ndim == 4 and tuple(x.shape[2:]) != tuple(t.shape[1:]):
        raise RuntimeError(f"size mismatch (got input: {list(x.shape)} , target: "
                           f"{list(t.shape)}")
    if x.ndim > 2 and tuple(x.shape[2:]) != tuple(t.shape[1:]):
        raise RuntimeError(f"Expected target size {[x.shape[0], *x.shape[2:]]}, got "
                           f"{list(t.shape)}")
    if t.dtype.name not in ("int64", "uint8"):
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{torch_kind(t.dtype.name)}")
    if x.ndim == 1 and t.ndim == 1 and t.shape[0] != 1:
        raise ValueError("For 1D input, 1D target must have size 1, but got target size: "
                         f"{t.shape[0]}")
    if weight is not None:
        check_class_weight(x, weight)
    check_index(t, 0, x.shape[0 if x.ndim == 1 else 1], _target_out_of_bounds,
                ignore=ignore_index)


def check_class_weight(x, weight, prefix=""):
    """PyTorch's error for class weights that are not one per class of ``x`` (class dim 1,
    0 unbatched); its spatial kernel words it without the sizes."""
    n = x.shape[0 if x.ndim == 1 else 1]
    if x.ndim > 2 and not prefix:  # the spatial kernel counts elements only
        if weight.numel() != n:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
    elif weight.ndim != 1 or weight.shape[0] != n:
        raise RuntimeError(f"{prefix}weight tensor should be defined either for all {n} classes "
                           f"or no classes but got weight tensor of shape: {list(weight.shape)}")


def _target_out_of_bounds(bad):
    return IndexError(f"Target {bad} is out of bounds.")


@export(method=False)
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean") -> Tensor:
    """Negative log-likelihood of class indices ``target`` under log-probabilities ``input``
    (``(N, C)``, ``(N, C, d1, ...)`` or ``(C,)``).

    ::

        nll_loss(input, target, weight=None, size_average=None, ignore_index=-100,
                 reduce=None, reduction='mean') -> Tensor
    """
    red = _reduction(size_average, reduce, reduction)
    _check_reduction(red)
    x, t = input, target
    if x._arr.dtype.kind in "biu" and x.ndim <= 2:  # no integer kernel
        raise NotImplementedError(f"\"nll_loss_out_frame\" not implemented for "
                                  f"'{torch_kind(x._arr.dtype)}'")
    # NOTE: unbatched input goes to the op as it is: PyTorch records one NllLossBackward0
    # on the (C,) input, without unsqueeze/squeeze nodes around it
    _check_targets(x, t, weight, ignore_index)
    op = NLL if x.ndim <= 2 else NLL2D
    if weight is not None and weight.requires_grad:
        raise RuntimeError(f"The function '{op.name}_forward' is not differentiable with "
                           "respect to argument 'weight'. This input cannot have "
                           "requires_grad True.")
    if x.ndim > 2 and weight is not None and weight.ndim != 1:
        weight = weight.reshape(-1)  # the spatial kernel takes any shape of C elements
    out_shape = None
    if x.ndim == 3 or x.ndim > 4:  # as PyTorch: viewed as (N, C, 1, -1), the result back
        out_shape = (x.shape[0],) + tuple(x.shape[2:])
        x = apply(VIEW, (x,), {"shape": (x.shape[0], x.shape[1], 1, math.prod(out_shape[1:]))})
        t = t.reshape(t.shape[0], 1, -1)
    out = apply(op, (x, t, weight), {"reduction": red, "ignore_index": int(ignore_index)})
    if out_shape is not None and red == "none":
        out = apply(VIEW, (out,), {"shape": out_shape})
    return out


@export(method=False)
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0) -> Tensor:
    """``log_softmax`` over the class dim (1, or 0 unbatched) then ``nll_loss`` (class
    indices) or the soft-target sum (class probabilities).

    ::

        cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                      reduce=None, reduction='mean', label_smoothing=0.0) -> Tensor
    """
    red = _reduction(size_average, reduce, reduction)
    _check_reduction(red)
    if label_smoothing > 1.0:  # C++'s default float format: 2.0 reads "2"
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{float(label_smoothing):g}")
    if not label_smoothing > 0.0:  # PyTorch smooths only by a positive amount (not NaN)
        label_smoothing = 0.0
    dim = 0 if input.ndim == 1 else 1
    n = input.shape[dim]
    logp = apply(LOG_SOFTMAX, (input,), {"dim": dim})
    if target.shape == input.shape:  # class probabilities, as PyTorch tells them apart
        if not target.dtype.is_floating_point:
            raise RuntimeError("Expected floating point type for target with class "
                               f"probabilities, got {torch_kind(target.dtype.name)}")
        if weight is not None:
            check_class_weight(input, weight, "cross_entropy: ")
        p = target
        if label_smoothing:
            p = p * (1 - label_smoothing) + label_smoothing / n
        return apply(SOFT_CE[red], (logp, p, weight), {"reduction": red})
    loss = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=red)
    if not label_smoothing:
        return loss
    lp, t = (logp, target) if input.ndim > 1 else (logp.unsqueeze(0), target.unsqueeze(0))
    smooth = apply(_SMOOTH[red], (lp, t, weight), {"reduction": red,
                                                   "ignore_index": int(ignore_index)})
    if input.ndim == 1 and red == "none":
        smooth = smooth.squeeze(0)
    return loss * (1 - label_smoothing) + smooth * (label_smoothing / n)


def _smooth_term(logp, target, weight, reduction, ignore_index):
    keep = target != ignore_index
    if weight is not None:
        logp = logp * weight.reshape((1, -1) + (1,) * (logp.ndim - 2))
    loss = jnp.where(keep, -jnp.sum(logp, axis=1), jnp.zeros((), logp.dtype))
    if reduction == "mean":
        if weight is None:
            return jnp.sum(loss) / jnp.sum(keep)
        w = jnp.where(keep, weight[jnp.where(keep, target, 0)], 0)
        return jnp.sum(loss) / jnp.sum(w)
    return _REDUCE[reduction](loss)


_SMOOTH = _per_reduction("label_smoothing_term", _smooth_term, {
    "mean": "DivBackward0", "sum": "SumBackward0", "none": "MaskedFillBackward0"})


