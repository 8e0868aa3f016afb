"""``hookgrad.nn.functional.embedding_bag``: sums, means or maxima of bags of embeddings.

The bag of each index comes from ``offsets`` (or from the rows of a 2-D input) and is
computed on the host: it is the static segment layout of one gather and one segment
reduction (``jax.ops.segment_*``), which JAX differentiates. So ``offsets`` must have
concrete values: a Tensor in eager mode; inside ``hookgrad.compile`` a Python list or
tuple (a constant of the program). A 2-D input (bags of equal size) needs no
values at all.
"""
from __future__ import annotations


import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from .dispatch import apply
from .nn_conv import _Const
from .nn_layers import _check_indices_and_renorm, _kind
from .registry import defop
from .. import _errors


def _embedding_bag(w, idx, psw, seg, nbags, mode, padding_idx, scale_grad_by_freq):
    seg = jnp.asarray(np.asarray(seg))
    rows = jnp.take(w, idx, axis=0)
    if scale_grad_by_freq:
        # same value, gradient divided by how often each index occurs in the input
        counts = jnp.zeros((w.shape[0],), w.dtype).at[idx].add(1)
        scaled = rows / counts[idx][:, None]
        rows = jax.lax.stop_gradient(rows) + (scaled - jax.lax.stop_gradient(scaled))
    keep = jnp.ones(idx.shape, bool) if padding_idx is None else idx != padding_idx
    if mode == "max":
        neg = jnp.asarray(-jnp.inf, w.dtype)
        out = jax.ops.segment_max(jnp.where(keep[:, None], rows, neg), seg, nbags)
        return jnp.where(jnp.isneginf(out), jnp.zeros((), w.dtype), out)  # empty bags: 0
    if psw is not None:
        rows = rows * psw[:, None]
    out = jax.ops.segment_sum(jnp.where(keep[:, None], rows, 0), seg, nbags)
    if mode == "mean":
        count = jax.ops.segment_sum(keep.astype(w.dtype), seg, nbags)
        out = out / jnp.maximum(count, 1)[:, None]
    return out


EMBEDDING_BAG = defop("embedding_bag", _embedding_bag, "EmbeddingBagBackward0",
                      nondiff=(1,))


def _segments(n, offsets, include_last_offset):
    """Bag id of each of the ``n`` indices (``nbags`` for indices past the last bag)."""
    if isinstance(offsets, Tensor):
        offsets = offsets._data
    if isinstance(offsets, jax.core.Tracer):
        raise RuntimeError("embedding_bag: offsets must have concrete values (they fix the "
                           "bag layout, a static shape), but got a traced array: inside "
                           "hookgrad.compile pass offsets as a Python list or tuple, or use a "
                           "2-D input (one bag per row)")
    off = np.asarray(offsets).astype(np.int64).reshape(-1)
    if off.size and off[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the "
                           f"mini-batch has to start from position 0. However, got {off[0]}")
    if off.size and off[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but "
                           f"got offsets[-1] of {off[-1]}")
    if np.any(np.diff(off) < 0):
        raise RuntimeError("offsets must be non-decreasing")
    nbags = off.size - 1 if include_last_offset else off.size
    nbags = max(nbags, 0)
    seg = np.searchsorted(off, np.arange(n), side="right") - 1
    if include_last_offset and off.size:
        seg = np.where(np.arange(n) >= off[-1], nbags, seg)
    return seg.astype(np.int32), nbags


def _bag_index_error(input, n):
    """PyTorch's embedding_bag error for ``bad``, naming its first place in the (flattened)
    ``input``: every entry equal to a bad value is bad, so its first one is the first bad."""
    def error(bad):
        arr = input._data
        where = ("An index" if isinstance(arr, jax.core.Tracer)  # checked after the run
                 else f"Index {int(np.argmax(np.asarray(arr).reshape(-1) == bad))}")
        return RuntimeError(f"{where} of input takes value {bad} which is not in the valid "
                            f"range [0, {n})")
    return error


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None) -> Tensor:
    """Sums, means or maxima of bags of rows of ``weight``, without building the
    intermediate embeddings' graph.

    ::

        embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                      scale_grad_by_freq=False, mode='mean', sparse=False,
                      per_sample_weights=None, include_last_offset=False,
                      padding_idx=None) -> Tensor

    ``input`` is 2-D (each row a bag) or 1-D with ``offsets`` (bag ``i`` starts at
    ``offsets[i]``). ``offsets`` must have values: a Tensor in eager mode, a list or
    tuple inside ``hookgrad.compile``. ``sparse`` gradients are returned dense.

    Example::

        >>> w = hookgrad.randn(10, 3)
        >>> F.embedding_bag(hookgrad.tensor([1, 2, 4, 5, 4, 3, 2, 9]), w,
        ...                 hookgrad.tensor([0, 4])).shape
        hookgrad.Size([2, 3])
    """
    # NOTE: long on purpose: PyTorch's argument checks, in its order, before one op call.
    if weight.dtype.name.startswith("int") and input.dtype.is_floating_point:
        _errors.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                     "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                     "`embedding_bag(input, weight, ...)`.")
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) "
                         f"is not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found "
                             f"offsets of type {type(offsets)}")
        b, length = input.shape
        seg, nbags = np.repeat(np.arange(b, dtype=np.int32), length), b
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if np.ndim(offsets) != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        seg, nbags = None, None
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")
    if input.dtype.is_floating_point or input.dtype.is_complex:
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {_kind(input)} instead "
                           f"(while checking arguments for embedding_bag)")
    n = weight.shape[0]
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{n} "
                               f"through {n - 1}, but got {padding_idx}")
        padding_idx = padding_idx % n
    if seg is None:
        seg, nbags = _segments(input.shape[0], offsets, include_last_offset)
    _check_indices_and_renorm(input, weight, max_norm, norm_type, _bag_index_error(input, n))
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                  "per_sample_weights is only supported for mode='sum' "
                                  f"(got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    return apply(EMBEDDING_BAG, (weight, input, per_sample_weights),
                 {"seg": _Const(seg), "nbags": int(nbags), "mode": mode,
                  "padding_idx": padding_idx,
                  "scale_grad_by_freq": bool(scale_grad_by_freq)})

