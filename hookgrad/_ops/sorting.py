"""Sorting and selection: sort, argsort, msort, topk, kthvalue, median.

Each op is two table rows, as PyTorch's kernels are a selection then a gradient by index:
the indices come from a node-less op (a stable ``jnp.argsort``), the values are a gather
by those indices recorded under PyTorch's node name (``SortBackward0``, ``TopkBackward0``,
...). Their backward is JAX's vjp of ``take_along_axis`` with the indices held fixed, and
the node saves the indices, as PyTorch's does (pack hooks see the same tensor).
"""
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from .._tensor import Tensor
from .dispatch import apply
from .parser_errors import invalid_arguments, not_a
from .promotion import real_input, real_only
from .reduction import _return_type, return_types
from .reduction_args import ALL_DIMS, NOT_INT, not_an_int_dim
from .registry import defop, export
from .shape import wrap_dim

# NOTE: ties. sort/argsort order ties as PyTorch's CPU sort does (stably, NaN largest).
# topk/kthvalue/median(dim) pick among tied elements in that stable order too; PyTorch's
# selection algorithm may return another of the tied indices (the values agree; in both,
# the gradient goes to the element whose index is returned).

for _n in ("sort", "topk", "kthvalue", "median"):
    return_types[_n] = _return_type(_n)


def _at_least_1d(fn):
    """``fn(x, dim, ...)`` also for 0-d ``x`` (PyTorch treats it as one element)."""
    def run(x, *args, dim, **kw):
        if x.ndim:
            return fn(x, *args, dim=dim, **kw)
        return jnp.squeeze(fn(x.reshape(1), *(a.reshape(1) for a in args), dim=0, **kw), 0)
    return run


@_at_least_1d
def _order(x, dim, descending, start, stop):
    # positions [start, stop) of the stable order along dim (NaN sorts as the largest)
    idx = jnp.argsort(x, axis=dim, stable=True, descending=descending)
    return jnp.moveaxis(jnp.moveaxis(idx, dim, 0)[start:stop], 0, dim)


@_at_least_1d
def _median_index(x, dim):
    # the lower median's index; a NaN in the slice is the median (PyTorch propagates it)
    n = x.shape[dim]
    idx = jnp.take(jnp.argsort(x, axis=dim, stable=True), (n - 1) // 2, axis=dim)
    if jnp.issubdtype(x.dtype, jnp.inexact):
        nan = jnp.isnan(x)
        idx = jnp.where(jnp.any(nan, axis=dim), jnp.argmax(nan, axis=dim), idx)
    return jnp.expand_dims(idx, dim)


@_at_least_1d
def _take(x, idx, dim):
    return jnp.take_along_axis(x, idx, axis=dim)


def _gather(x, idx, dim, keepdim):
    # ``dim`` as given, which PyTorch's node saves; without keepdim ``idx`` is the returned
    # indices, squeezed (also what it saves)
    dim = dim % x.ndim if x.ndim else 0
    if keepdim or x.ndim == 0:
        return _take(x, idx, dim=dim)
    return jnp.squeeze(_take(x, jnp.expand_dims(idx, dim), dim=dim), dim)


def _median_all(x):
    # the lower median, its gradient split evenly among the elements equal to it (NaNs
    # when it is NaN), as PyTorch's: m + mean of (x - m) over the ties is m, with JAX's
    # gradient 1/count on each tie
    flat = x.reshape(-1)
    if flat.size == 0:  # PyTorch's median of nothing is NaN
        return jnp.sum(flat) * jnp.nan
    m = jax.lax.stop_gradient(flat[_median_index(flat, dim=0)[0]])
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        return m
    tie = (flat == m) | (jnp.isnan(flat) & jnp.isnan(m))
    return m + jnp.sum(jnp.where(tie, flat - m, 0)) / jnp.sum(tie)


ORDER = defop("sort_order", _order, None)
MEDIAN_INDEX = defop("median_index", real_only("median_out", _median_index), None)
_GATHER_SAVE = {0: (1,)}  # the values' gradient needs the indices (saved, as PyTorch's)
SORT = defop("sort", _gather, "SortBackward0", _GATHER_SAVE, nondiff=(1,),
             names="self indices -> indices dim self_sym_sizes")
SORT_STABLE = defop("sort_stable", _gather, "SortBackward1", _GATHER_SAVE, nondiff=(1,),
                    names="self indices -> indices dim self_sym_sizes")
TOPK = defop("topk", _gather, "TopkBackward0", _GATHER_SAVE, nondiff=(1,),
             names="self indices -> indices dim self_sym_sizes")
KTHVALUE = defop("kthvalue", _gather, "KthvalueBackward0", _GATHER_SAVE, nondiff=(1,),
                 names="self indices -> indices dim keepdim self_sym_sizes")
MEDIAN_DIM = defop("median_dim", _gather, "MedianBackward1", _GATHER_SAVE, nondiff=(1,),
                   names="self indices -> indices dim keepdim self_sym_sizes")
MEDIAN = defop("median", real_only("median_cpu", _median_all), "MedianBackward0",
               names="self -> self result")


_SORT_COMPLEX = " Sort does not support complex dtypes on CPU"  # PyTorch's, its space too


def _size(input, dim):
    return input.shape[dim] if input.ndim else 1


def _select(op, input, idx, dim, keepdim=True):
    """The values at ``idx`` along ``dim`` (as given: the node saves it) and the indices."""
    if not keepdim and input.ndim:
        idx = idx.squeeze(dim)
    return apply(op, (input, idx), {"dim": dim, "keepdim": keepdim}), idx


_SORT_FORMS = ("(*, bool stable, int dim = -1, bool descending = False)",
               "(int dim = -1, bool descending = False)")


@export
def sort(input, dim=-1, descending=False, *, stable=None) -> Any:
    """``sort(input, dim=-1, descending=False, *, stable=False)``: a ``(values, indices)``
    named tuple, sorted along ``dim``; ties keep their order, NaN sorts as the largest.

    >>> hookgrad.sort(hookgrad.tensor([2.0, 0.5, 1.0])).indices
    tensor([1, 2, 0])
    """
    if dim.__class__ in NOT_INT:
        raise invalid_arguments("sort", _SORT_FORMS, dim=dim)
    d = wrap_dim(dim, input.ndim)
    if input._arr.dtype.kind == "c":
        real_input(input, RuntimeError, _SORT_COMPLEX)
    idx = apply(ORDER, (input,), {"dim": d, "descending": bool(descending), "start": 0,
                                  "stop": _size(input, d)})
    # PyTorch records the overload that takes ``stable`` as SortBackward1
    values, idx = _select(SORT if stable is None else SORT_STABLE, input, idx, int(dim))
    return return_types["sort"](values, idx)


@export
def argsort(input, dim=-1, descending=False, stable=False) -> Tensor:
    """``argsort(input, dim=-1, descending=False, stable=False)``: the indices that sort
    ``input`` along ``dim`` (always stably)."""
    d = wrap_dim(dim, input.ndim)
    if input._arr.dtype.kind == "c":
        real_input(input, RuntimeError, _SORT_COMPLEX)
    return apply(ORDER, (input,), {"dim": d, "descending": bool(descending), "start": 0,
                                   "stop": _size(input, d)})


@export
def msort(input) -> Tensor:
    """``msort(input)``: ``sort(input, dim=0).values``."""
    return sort(input, 0).values


@export
def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - torch's name
    """``topk(input, k, dim=-1, largest=True, sorted=True)``: the ``k`` largest (smallest
    with ``largest=False``) elements along ``dim`` as a ``(values, indices)`` named tuple,
    always in sorted order.

    >>> hookgrad.topk(hookgrad.tensor([1.0, 4.0, 2.0]), 2)
    hookgrad.return_types.topk(
    values=tensor([4., 2.]),
    indices=tensor([1, 2]))
    """
    d = wrap_dim(dim, input.ndim)
    if input._arr.dtype.kind == "c":
        real_input(input, RuntimeError, " topk does not support complex dtypes on CPU")
    if k.__class__ is float or k.__class__ is str:  # int() would truncate or fail
        raise not_a("topk", "k", k)
    k = int(k)
    if not 0 <= k <= _size(input, d):
        raise RuntimeError("selected index k out of range")
    idx = apply(ORDER, (input,), {"dim": d, "descending": bool(largest), "start": 0, "stop": k})
    return return_types["topk"](*_select(TOPK, input, idx, int(dim)))


@export
def kthvalue(input, k, dim=-1, keepdim=False) -> Any:
    """``kthvalue(input, k, dim=-1, keepdim=False)``: the ``k``-th smallest element along
    ``dim`` (``k`` from 1) and its index, as a ``(values, indices)`` named tuple."""
    d = wrap_dim(dim, input.ndim)
    if input._arr.dtype.kind == "c":
        real_input(input, NotImplementedError, "\"kthvalue_cpu\" not implemented for '{kind}'")
    k = int(k)
    if not 1 <= k <= _size(input, d):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    idx = apply(ORDER, (input,), {"dim": d, "descending": False, "start": k - 1, "stop": k})
    return return_types["kthvalue"](*_select(KTHVALUE, input, idx, int(dim), keepdim))


@export
def median(input, dim=ALL_DIMS, keepdim=False) -> Any:
    """``median(input)``: the lower median of all elements (NaN if there is one; the
    gradient is split evenly among elements equal to it); ``median(input, dim,
    keepdim=False)``: a ``(values, indices)`` named tuple along ``dim``."""
    if dim is ALL_DIMS and keepdim is False:
        return apply(MEDIAN, (input,))
    if dim is ALL_DIMS or dim is None or dim.__class__ in NOT_INT:
        raise not_an_int_dim("median", dim)
    d = wrap_dim(dim, input.ndim)
    if _size(input, d) == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    idx = apply(MEDIAN_INDEX, (input,), {"dim": d})
    return return_types["median"](*_select(MEDIAN_DIM, input, idx, int(dim), keepdim))


