"""``select_scatter``, ``slice_scatter``, ``diagonal_scatter``, ``as_strided_scatter``: a copy of ``input`` with
``src`` written where the view op would look (the out-of-place form of writing through
that view); the gradient splits between ``input`` (outside the view) and ``src``."""
from __future__ import annotations

import jax.numpy as jnp

from .._tensor import Tensor
from . import indexing, shape, views
from .dispatch import apply
from .registry import defop, export


def _at(x, dim, where):
    # dims, indices and bounds come as given (PyTorch's nodes save them so)
    return (slice(None),) * (dim % x.ndim) + (where,)


def _diagonal_set(x, src, offset, dim1, dim2):
    y = jnp.moveaxis(x, (dim1, dim2), (-2, -1))
    i = jnp.arange(src.shape[-1])
    y = y.at[..., i + max(-offset, 0), i + max(offset, 0)].set(src.astype(x.dtype))
    return jnp.moveaxis(y, (-2, -1), (dim1, dim2))


SELECT_SCATTER = defop("select_scatter", lambda x, s, dim, index: x.at[_at(x, dim, index)].set(
    s.astype(x.dtype)), "SelectScatterBackward0", (), names="self src -> dim index")
SLICE_SCATTER = defop("slice_scatter", lambda x, s, dim, start, end, step: x.at[_at(
    x, dim, slice(start, end, step))].set(s.astype(x.dtype)), "SliceScatterBackward0", (),
    names="self src -> dim end start step")
DIAGONAL_SCATTER = defop("diagonal_scatter", lambda x, s, offset, dim1, dim2: _diagonal_set(
    x, s, offset, dim1, dim2), "DiagonalScatterBackward0", (),
    names="self src -> dim1 dim2 offset")


def _scatter(op, input, src, view, statics):
    """``op`` applied once ``src`` is known to have the shape of ``view`` (the view op's
    result on ``input``, computed for its checks and its shape)."""
    if tuple(src.shape) != tuple(view.shape):
        raise RuntimeError("expected src to have a size equal to the slice of self. src size "
                           f"= {list(src.shape)}, slice size = {list(view.shape)}")
    return apply(op, (input, src), statics)


@export
def select_scatter(input, src, dim, index) -> Tensor:
    """``select_scatter(input, src, dim, index)``: ``input`` with ``src`` written into the
    slice ``index`` of dimension ``dim``."""
    view = indexing.select(input.detach(), dim, index)
    return _scatter(SELECT_SCATTER, input, src, view, {"dim": int(dim), "index": int(index)})


@export
def slice_scatter(input, src, dim=0, start=None, end=None, step=1) -> Tensor:
    """``slice_scatter(input, src, dim=0, start=None, end=None, step=1)``: ``input`` with
    ``src`` written into ``input[..., start:end:step]`` along ``dim``."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = shape.wrap_dim(dim, input.ndim)
    view = indexing._slice(input.detach(), d, (d, start, end, step), True)
    given = {"dim": int(dim), "start": indexing.int_or_none(start),
             "end": indexing.int_or_none(end), "step": int(step)}
    return _scatter(SLICE_SCATTER, input, src, view, given)


@export
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1) -> Tensor:
    """``diagonal_scatter(input, src, offset=0, dim1=0, dim2=1)``: ``input`` with ``src``
    written into its diagonal ``offset`` of dimensions ``dim1`` and ``dim2``."""
    view = shape.diagonal(input.detach(), offset, dim1, dim2)
    return _scatter(DIAGONAL_SCATTER, input, src, view,
                    {"offset": int(offset), "dim1": int(dim1), "dim2": int(dim2)})


@export
def as_strided_scatter(input, src, size, stride, storage_offset=None) -> Tensor:
    """``as_strided_scatter(input, src, size, stride, storage_offset=None)``: ``input``
    with ``src`` written where ``input.as_strided(size, stride, storage_offset)`` would
    look."""
    view = shape.as_strided(input.detach(), size, stride, storage_offset)
    geom = (tuple(view.shape), view.stride(), view.storage_offset() - input.storage_offset())
    return _scatter(views.AS_STRIDED_SCATTER, input, src, view,
                    {"size": geom[0], "stride": geom[1], "offset": geom[2]})
