"""``nn.functional.linear_cross_entropy``: the cross entropy of a linear layer's logits.

PyTorch's ``options`` select a chunked kernel that never holds all the logits at once; here
the loss is always the reference composition ``cross_entropy(linear(...))``, which XLA
compiles as one program (``options`` are checked as PyTorch checks them, then unused).
"""
from __future__ import annotations

import math

from .. import _dtype, _errors
from .._tensor import Tensor
from .nn import linear
from .nn_loss import cross_entropy


def _check_shapes(input, linear_weight, linear_bias):
    """``(batch dims, number of classes, out_features)``, with PyTorch's checks."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and {linear_weight.shape[-1]}, "
                           "respectively")
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, (N, "
                           f"{in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    return batches, classes, out_features


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options=None) -> Tensor:
    """The cross entropy of ``linear(input, linear_weight, linear_bias)`` and ``target``.

    ``linear_weight`` is ``(C, in_features)`` or ``(C, d_1, ..., d_K, in_features)`` for a
    K-dimensional loss; ``ignore_index=None`` means -100 for class-index targets (and must
    stay None for class probabilities). ``options`` (a ``LinearCrossEntropyOptions``) asks
    PyTorch for its chunked kernel; hookgrad computes the same loss as one XLA program.
    """
    batches, classes, out_features = _check_shapes(input, linear_weight, linear_bias)
    logits_shape = (*batches, classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    if options is not None and (out_features or reduction not in {"mean", "sum", "none"}
                                or label_smoothing != 0.0 or target.dtype != _dtype.int64):
        _errors.warn("linear_cross_entropy: ``options`` ignored; chunked path needs reduction "
                     "in {'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, "
                     f"out_features == (). Got reduction={reduction!r}, "
                     f"label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                     f"out_features={out_features}, tracing=False, linear_bias.shape="
                     f"{None if linear_bias is None else tuple(linear_bias.shape)}.")
    if out_features:
        rows = math.prod(out_features, start=classes)
        linear_weight = linear_weight.reshape((rows, input.shape[-1]))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)
