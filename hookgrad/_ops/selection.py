"""Selections by value that skip or count: ``mode`` (the most frequent value along a dim)
and ``nanmedian`` (the median ignoring NaN), as ``sorting``'s selections are: a node-less op
finds the indices, a gather by them records PyTorch's node (``ModeBackward0``,
``NanmedianBackward1``) and saves them."""
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from .dispatch import apply
from .parser_errors import not_a_dim
from .promotion import real_only
from .reduction import _return_type, return_types
from .reduction_args import ALL_DIMS, not_an_int_dim
from .registry import defop, export
from .shape import wrap_dim
from .sorting import _GATHER_SAVE, _at_least_1d, _gather, _select, _size

for _n in ("mode", "nanmedian"):
    return_types[_n] = _return_type(_n)


@_at_least_1d
def _mode_index(x, dim):
    # in sorted order, each element's position within its run of equal values; the longest
    # run's last element, the smallest value's among equally long runs (the first such in
    # sorted order), is the mode; a stable sort makes its index the largest of that value's
    x = jnp.moveaxis(x, dim, -1)
    order = jnp.argsort(x, axis=-1, stable=True)
    s = jnp.take_along_axis(x, order, axis=-1)
    pos = jnp.arange(s.shape[-1])
    differ = s[..., 1:] != s[..., :-1]
    if jnp.issubdtype(s.dtype, jnp.inexact):  # NaNs (sorted last) count as equal
        differ &= ~(jnp.isnan(s[..., 1:]) & jnp.isnan(s[..., :-1]))
    new = jnp.concatenate([jnp.ones(s.shape[:-1] + (1,), bool), differ], -1)
    start = jax.lax.cummax(jnp.where(new, pos, 0), axis=s.ndim - 1)
    best = jnp.argmax(pos - start, axis=-1, keepdims=True)
    return jnp.moveaxis(jnp.take_along_axis(order, best, axis=-1), -1, dim)


@_at_least_1d
def _nanmedian_index(x, dim):
    # the lower median of the values that are not NaN (NaN sorts last); all NaN: the middle
    k = jnp.sum(~jnp.isnan(x), axis=dim, keepdims=True) if jnp.issubdtype(
        x.dtype, jnp.inexact) else jnp.full((1,) * x.ndim, x.shape[dim])
    k = jnp.where(k == 0, x.shape[dim], k)
    order = jnp.argsort(x, axis=dim, stable=True)
    return jnp.take_along_axis(order, (k - 1) // 2, axis=dim)


def _nanmedian_all(x):
    # the lower median of the non-NaN elements, its gradient split evenly among the
    # elements equal to it (m + mean of (x - m) over the ties is m); all NaN: NaN
    flat = x.reshape(-1)
    if flat.size == 0:
        return jnp.sum(flat) * jnp.nan
    m = jax.lax.stop_gradient(flat[_nanmedian_index(flat, dim=0)[0]])
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return m
    tie = flat == m
    return m + jnp.sum(jnp.where(tie, flat - m, 0)) / jnp.maximum(jnp.sum(tie), 1)


MODE_INDEX = defop("mode_index", real_only("mode_cpu", _mode_index), None)
NANMEDIAN_INDEX = defop("nanmedian_index", real_only("median_out", _nanmedian_index), None)
MODE = defop("mode", _gather, "ModeBackward0", _GATHER_SAVE, nondiff=(1,),
             names="self indices -> indices dim keepdim self_sym_sizes")
NANMEDIAN_DIM = defop("nanmedian_dim", _gather, "NanmedianBackward1", _GATHER_SAVE,
                      nondiff=(1,), names="self indices -> indices dim keepdim self_sym_sizes")
NANMEDIAN = defop("nanmedian", real_only("median_cpu", _nanmedian_all), "NanmedianBackward0",
                  names="self -> self result")


def _reduced(name, input, dim):
    d = wrap_dim(dim, input.ndim)
    if _size(input, d) == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    return d


@export
def mode(input, dim=-1, keepdim=False) -> Any:
    """``mode(input, dim=-1, keepdim=False)``: a ``(values, indices)`` named tuple of the
    most frequent value along ``dim`` (the smallest among equally frequent ones) and the
    index of its last occurrence."""
    if dim.__class__ is bool:
        raise not_a_dim("mode", dim)
    d = _reduced("mode", input, dim)
    idx = apply(MODE_INDEX, (input,), {"dim": d})
    return return_types["mode"](*_select(MODE, input, idx, int(dim), keepdim))


@export
def nanmedian(input, dim=ALL_DIMS, keepdim=False) -> Any:
    """``nanmedian(input)``: the lower median of the elements that are not NaN (NaN if all
    are); ``nanmedian(input, dim, keepdim=False)``: a ``(values, indices)`` named tuple
    along ``dim``. :func:`median` when there is no NaN."""
    if dim is ALL_DIMS or dim is None or dim.__class__ is bool:
        if dim is not ALL_DIMS or keepdim is not False:
            raise not_an_int_dim("nanmedian", dim)
        return apply(NANMEDIAN, (input,))
    d = _reduced("median", input, dim)
    idx = apply(NANMEDIAN_INDEX, (input,), {"dim": d})
    return return_types["nanmedian"](*_select(NANMEDIAN_DIM, input, idx, int(dim), keepdim))
