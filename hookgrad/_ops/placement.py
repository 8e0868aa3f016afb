"""Writing values at positions: ``masked_scatter``, ``put``, ``fill_diagonal_``, and
``unfold``'s sliding windows (its backward places gradients back the same way)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _errors
from .._dtype import torch_kind
from .._tensor import Tensor
from .registry import OpCall, defop, export, shape_broadcast_error, variants
from .shape import expanded_shape, wrap_dim
from .views import view_apply


def _masked_scatter(x, mask, src):
    x = jnp.broadcast_to(x, jnp.broadcast_shapes(x.shape, mask.shape))  # a 0-d self too
    m = jnp.broadcast_to(mask, x.shape).reshape(-1)
    # the k-th True position takes source element k (source read in row-major order)
    idx = jnp.clip(jnp.cumsum(m) - 1, 0, max(src.size - 1, 0))
    vals = src.reshape(-1)[idx] if src.size else jnp.zeros_like(x.reshape(-1))
    return jnp.where(m, vals.astype(x.dtype), x.reshape(-1)).reshape(x.shape)


_MASKED_SCATTER = defop("masked_scatter", _masked_scatter, "MaskedScatterBackward0",
                        {0: (1,), 2: (1,)}, nondiff=(1,),
                        names="self mask source -> mask source_sym_sizes")


def _check_source(input, source):
    if source.dtype is not input.dtype:  # PyTorch's message has no space after "got"
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{torch_kind(input.dtype.np)} and {torch_kind(source.dtype.np)}")


def _check_mask(mask):
    if mask.dtype.name == "uint8":
        _errors.warn("masked_scatter_ received a mask with dtype torch.uint8, this behavior "
                     "is now deprecated,please use a mask with dtype torch.bool instead.")
    if mask.dtype.name != "bool":
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {torch_kind(mask.dtype.np)}")


def _mask_expands_to_self(input, mask, source):
    """``masked_scatter_`` expands ``mask`` to ``self``'s shape (``self`` does not grow):
    PyTorch expands a mask of another dtype before refusing it, a bool one inside ATen
    (whose message names the type as C++ does)."""
    _check_source(input, source)
    if mask.dtype.name != "bool":
        expanded_shape(mask, tuple(input.shape))
    _check_mask(mask)
    expanded_shape(mask, tuple(input.shape), internal=True)


@variants(inplace=True, inplace_check=_mask_expands_to_self)
def masked_scatter(input, mask, source) -> OpCall:
    """``masked_scatter(input, mask, source)``: ``input`` with the positions where the
    boolean ``mask`` (broadcast) is True filled, in order, by the elements of ``source``."""
    _check_source(input, source)
    _check_mask(mask)
    err = shape_broadcast_error(tuple(mask.shape), tuple(input.shape))
    if err is not None:
        raise err
    if not isinstance(mask._data, jax.core.Tracer):
        shape = np.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
        count = int(np.count_nonzero(np.broadcast_to(np.asarray(mask._data), shape)))
        if count > source.numel():
            raise RuntimeError("Number of elements of source < number of ones in mask")
    return _MASKED_SCATTER, (input, mask, source), None


def _put(x, index, src, accumulate):
    flat = x.reshape(-1)
    idx = index.reshape(-1)
    idx = jnp.where(idx < 0, idx + flat.size, idx)
    vals = src.reshape(-1).astype(x.dtype)
    out = flat.at[idx].add(vals) if accumulate else flat.at[idx].set(vals)
    return out.reshape(x.shape)


# NOTE: as PyTorch's, keeps ``source`` only for its own gradient; never ``self``
_PUT = defop("put", _put, "PutBackward0", {2: (2,)}, nondiff=(1,),
             names="self index source -> accumulate index source")


@variants(inplace=True)
def put(input, index, source, accumulate=False) -> OpCall:
    """``put(input, index, source, accumulate=False)``: ``input`` (as if flattened) with the
    elements at ``index`` replaced by ``source`` (or added to, with ``accumulate``)."""
    if index.numel() != source.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, "
                         f"index.numel() = {index.numel()}")
    n = input.numel()
    if not isinstance(index._data, jax.core.Tracer) and index.numel():
        bad = np.asarray(index._data).reshape(-1)
        bad = bad[(bad >= n) | (bad < -n)]
        if bad.size:
            raise IndexError(f"out of range: tried to access index {int(bad[0])} on a tensor "
                             f"of {n} elements.")
    return _PUT, (input, index, source), {"accumulate": bool(accumulate)}


@export(function=False)
def fill_diagonal_(self, fill_value, wrap=False) -> Tensor:
    """``fill_diagonal_(fill_value, wrap=False)``: the main diagonal (``i == j == ...``) of
    ``self`` set to ``fill_value``, written through a diagonal view; ``wrap`` restarts it
    every ``cols + 1`` rows of a tall matrix."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    if self.ndim > 2:
        view = self
        while view.ndim > 1:
            view = view.diagonal(0, 0, 1)
        view.fill_(fill_value)
        return self
    rows, cols = self.shape
    step = cols + 1
    starts = range(0, rows, step) if wrap and rows > cols else (0,)
    for r in starts:
        self.narrow(0, r, min(cols, rows - r)).diagonal().fill_(fill_value)
    return self


def _unfold(x, dim, size, step):
    n = (x.shape[dim] - size) // step + 1
    starts = jnp.arange(n) * step
    idx = starts[:, None] + jnp.arange(size)[None, :]           # [n, size]
    win = jnp.take(x, idx.reshape(-1), axis=dim)
    win = win.reshape(*x.shape[:dim], n, size, *x.shape[dim + 1:])
    return jnp.moveaxis(win, dim + 1, -1)


_UNFOLD = defop("unfold", _unfold, "UnfoldBackward0", (),
                names="self -> dimension=dim self_sym_sizes size step")


@export(function=False)
def unfold(self, dimension, size, step) -> Tensor:
    """``unfold(dimension, size, step)``: the windows of ``size`` elements taken every
    ``step`` along ``dimension``, as a new last dimension: a view of ``self``."""
    dim = wrap_dim(dimension, max(self.ndim, 1))
    length = self.shape[dim] if self.ndim else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {length} but size "
                           f"is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if self.ndim == 0:
        return self.reshape(1)
    return view_apply(_UNFOLD, self, {"dim": dim, "size": int(size), "step": int(step)})
