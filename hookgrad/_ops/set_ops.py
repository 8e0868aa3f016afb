"""Set and counting ops: unique, unique_consecutive, bincount, histc, bucketize,
searchsorted.

``unique``, ``unique_consecutive`` and ``bincount`` without a static length have shapes that
depend on the data: they run eagerly only (inside ``hookgrad.compile`` they raise, as
``masked_select`` does). Their values are gathered from the input by a node-less op: PyTorch
records a node whose backward raises, and so does hookgrad.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from .dispatch import NOT_IMPLEMENTED, apply
from .promotion import refuses_complex
from .registry import defop, export, to_tensor_like
from .shape import wrap_dim

_TAKE = defop("unique", lambda x, idx, dim: jnp.take(x, idx, axis=dim), NOT_IMPLEMENTED, (),
              nondiff=(1,))
def _bincount(x, w, length):
    # PyTorch sums weights in float64 unless they are float32
    if w is not None and w.dtype != jnp.float32:
        w = w.astype(jnp.float64)
    return jnp.bincount(x, w, length=length)


# float64 on purpose: not narrowed to the default dtype
_BINCOUNT = defop("bincount", _bincount, NOT_IMPLEMENTED, (), promotes=False)
_HISTC = defop("histc", lambda x, bins, lo, hi: _histc(x, bins, lo, hi), None)
_SEARCH = defop("searchsorted", refuses_complex(
    lambda s, v, side, dtype: _search(s, v, side).astype(dtype), NotImplementedError,
    "\"searchsorted_out_cpu\" not implemented for '{kind}'"), None)


def _index_array(a):
    return jnp.asarray(np.asarray(a), _dtype.to_jax(_dtype.int64))


def _concrete(name, t, kernel=None):
    """``t``'s values; ``kernel``: PyTorch's, which has no complex form (its error)."""
    if isinstance(t._data, jax.core.Tracer):
        raise RuntimeError(f"{name} has a data-dependent output shape and cannot be traced "
                           "(inside hookgrad.compile); call it outside the compiled function")
    a = np.asarray(t._data)
    if kernel is not None and a.dtype.kind == "c":
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{_dtype.torch_kind(a.dtype)}'")
    return a


def _results(input, first, inverse, counts, dim, return_inverse, return_counts):
    values = apply(_TAKE, (input, Tensor._wrap(_index_array(first))), {"dim": dim or 0}) \
        if dim is not None else apply(_TAKE, (input.reshape(-1), Tensor._wrap(
            _index_array(first))), {"dim": 0})
    out = [values]
    if return_inverse:
        out.append(Tensor._wrap(_index_array(inverse)))
    if return_counts:
        out.append(Tensor._wrap(_index_array(counts)))
    return out[0] if len(out) == 1 else tuple(out)


def _rows(a, dim):
    """``a`` as a 2-d array of the slices along ``dim`` (one row per slice)."""
    return np.moveaxis(a, dim, 0).reshape(a.shape[dim], -1)


@export
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """``unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None)``:
    the distinct elements of ``input`` (flattened), or its distinct slices along ``dim``,
    in ascending order; with ``return_inverse`` each element's index into them, with
    ``return_counts`` how often each occurs. Eager only (data-dependent shape)."""
    a = _concrete("unique", input, "unique" if dim is None else "unique_dim")
    if dim is None:
        _, first, inverse, counts = np.unique(a.reshape(-1), return_index=True,
                                              return_inverse=True, return_counts=True)
        return _results(input, first, inverse.reshape(a.shape), counts, None,
                        return_inverse, return_counts)
    dim = wrap_dim(dim, input.ndim)
    _, first, inverse, counts = np.unique(_rows(a, dim), axis=0, return_index=True,
                                          return_inverse=True, return_counts=True)
    return _results(input, first, inverse.reshape(-1), counts, dim, return_inverse,
                    return_counts)


@export
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """``unique_consecutive(input, return_inverse=False, return_counts=False, dim=None)``:
    ``input`` (flattened, or its slices along ``dim``) with each run of equal consecutive
    entries kept once. Eager only (data-dependent shape)."""
    a = _concrete("unique_consecutive", input, "unique")
    if dim is None:
        rows = a.reshape(-1, 1)
    else:
        dim = wrap_dim(dim, input.ndim)
        rows = _rows(a, dim)
    starts = np.ones(len(rows), bool)
    starts[1:] = np.any(rows[1:] != rows[:-1], axis=1)
    first = np.flatnonzero(starts)
    inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(first, len(rows)))
    if dim is None:
        inverse = inverse.reshape(a.shape)
    return _results(input, first, inverse, counts, dim, return_inverse, return_counts)


@export
def bincount(input, weights=None, minlength=0) -> Tensor:
    """``bincount(input, weights=None, minlength=0)``: how often each value occurs in the
    1-d non-negative integer ``input`` (summing ``weights`` instead when given), in
    ``max(input.max() + 1, minlength)`` bins. Eager only (the length depends on the data)."""
    if input.dtype.is_floating_point or input.dtype.is_complex:
        raise NotImplementedError(f'"bincount_cpu" not implemented for '
                                  f"'{_dtype.torch_kind(input._data.dtype)}'")
    if input.ndim != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    a = _concrete("bincount", input)
    if a.size and a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and tuple(weights.shape) != tuple(input.shape):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    length = max(int(a.max()) + 1 if a.size else 0, int(minlength))
    return apply(_BINCOUNT, (input, weights), {"length": length})


def _histc(x, bins, lo, hi):
    x = x.reshape(-1)
    if lo == hi:  # PyTorch's: the data's own range
        lo, hi = jnp.min(x), jnp.max(x)
        lo, hi = jnp.where(lo == hi, lo - 1, lo), jnp.where(lo == hi, hi + 1, hi)
    inside = (x >= lo) & (x <= hi)
    idx = jnp.clip(((x - lo) * bins / (hi - lo)).astype(jnp.int32), 0, bins - 1)
    return jnp.zeros(bins, x.dtype).at[idx].add(inside.astype(x.dtype))


@export
def histc(input, bins=100, min=0, max=0) -> Tensor:
    """``histc(input, bins=100, min=0, max=0)``: the histogram of ``input`` in ``bins``
    equal-width bins over ``[min, max]`` (the data's range when both are 0); elements
    outside are ignored."""
    if not input.dtype.is_floating_point:  # the data's range comes first (complex: none)
        kernel = "aminmax_cpu" if input.dtype.is_complex and min == max == 0 else "histogram_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_dtype.torch_kind(input._data.dtype)}'")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    return apply(_HISTC, (input,), {"bins": int(bins), "lo": float(min), "hi": float(max)})


def _search(s, v, side):
    if s.ndim <= 1:
        return jnp.searchsorted(s, v, side=side)
    lead = s.shape[:-1]
    flat = jax.vmap(lambda a, b: jnp.searchsorted(a, b, side=side))(
        s.reshape(-1, s.shape[-1]), v.reshape(-1, v.shape[-1]))
    return flat.reshape(*lead, v.shape[-1])


def _index_dtype(out_int32):
    return _dtype.to_jax(_dtype.int32 if out_int32 else _dtype.int64)


@export(method=False)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None) -> Tensor:
    """``searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
    sorter=None)``: where each of ``input`` would be inserted into the innermost dimension
    of ``sorted_sequence`` to keep it sorted (the leftmost place, or the rightmost with
    ``right=True`` / ``side='right'``)."""
    if side is not None and side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                           f"{side}")
    if side == "left" and right:
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                           "got side of left while right was True")
    if sorter is not None:
        sorted_sequence = sorted_sequence.gather(-1, sorter)
    values = input if isinstance(input, Tensor) else Tensor._wrap(jnp.asarray(input))
    if sorted_sequence.ndim > 1 and tuple(sorted_sequence.shape[:-1]) != \
            tuple(values.shape[:-1]):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           "the first N-1 dimensions of boundaries tensor and input value "
                           "tensor must match, but we got boundaries tensor "
                           f"{list(sorted_sequence.shape)} and input value tensor "
                           f"{list(values.shape)}")
    side = side or ("right" if right else "left")
    return apply(_SEARCH, (sorted_sequence, values),
                 {"side": side, "dtype": _index_dtype(out_int32)})


@export(method=False)
def bucketize(input, boundaries, *, out_int32=False, right=False) -> Tensor:
    """``bucketize(input, boundaries, *, out_int32=False, right=False)``: the index of the
    bucket of 1-d ``boundaries`` each of ``input`` falls in: ``boundaries[i-1] < x <=
    boundaries[i]``, or ``boundaries[i-1] <= x < boundaries[i]`` with ``right=True``."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.ndim})")
    values = input if isinstance(input, Tensor) else Tensor._wrap(jnp.asarray(input))
    return apply(_SEARCH, (boundaries, values),
                 {"side": "right" if right else "left", "dtype": _index_dtype(out_int32)})
