"""Index-taking ops: ``gather``, ``index_select``, ``take``, ``scatter``, ``scatter_add``.

Their nodes keep the (integer) indices: the backward needs only those and shapes.
"""
from __future__ import annotations

import jax.numpy as jnp

from .._tensor import Tensor
from .dispatch import apply
from .registry import defop, export, to_tensor_like
from .shape import wrap_dim

GATHER = defop("gather", lambda x, idx, dim: jnp.take_along_axis(x, idx, axis=dim),
               "GatherBackward0", {0: (1,)}, nondiff=(1,),
               names="self index -> index self dim sparse_grad=False")
INDEX_SELECT = defop("index_select", lambda x, idx, dim: jnp.take(x, idx, axis=dim),
                     "IndexSelectBackward0", {0: (1,)}, nondiff=(1,),
                     names="self index -> index dim self_sym_sizes")
TAKE = defop("take", lambda x, idx: jnp.take(x.reshape(-1), idx), "TakeBackward0", {0: (1,)},
             nondiff=(1,),
             names="self index -> index self")


def _scatter_add(x, idx, src, dim):
    # positions along every other dim are those of idx itself
    grids = jnp.meshgrid(*[jnp.arange(s) for s in idx.shape], indexing="ij")
    grids[dim] = idx
    src = src[tuple(slice(0, s) for s in idx.shape)]
    return x.at[tuple(grids)].add(src)


def _scatter(x, idx, src, dim):
    grids = jnp.meshgrid(*[jnp.arange(s) for s in idx.shape], indexing="ij")
    grids[dim] = idx
    if jnp.ndim(src) == 0:
        return x.at[tuple(grids)].set(jnp.asarray(src, x.dtype))
    src = src[tuple(slice(0, s) for s in idx.shape)]
    return x.at[tuple(grids)].set(src)


SCATTER_ADD = defop("scatter_add", _scatter_add, "ScatterAddBackward0", {0: (), 2: (1,)},
                    nondiff=(1,),
                    names="self index src -> index dim")
SCATTER = defop("scatter", _scatter, "ScatterBackward0", {0: (1,), 2: (1,)}, nondiff=(1,),
                names="self index src -> index dim")
SCATTER_VALUE = defop("scatter_value", _scatter, "ScatterBackward1", {0: (1,)}, nondiff=(1,),
                      names="self index value -> index dim")


def _check_index(name, index):
    if not isinstance(index, Tensor) or index.dtype.is_floating_point or \
            index.dtype.is_complex or index.dtype.name == "bool":
        kind = type(index).__name__ if not isinstance(index, Tensor) else index.dtype.name
        raise RuntimeError(f"{name}(): Expected dtype int64 for index, got {kind}")


@export
def gather(input, dim, index, *, sparse_grad=False) -> Tensor:
    """``gather(input, dim, index)``: ``out[i][j] = input[index[i][j]][j]`` (for dim 0)."""
    _check_index("gather", index)
    return apply(GATHER, (input, index), {"dim": wrap_dim(dim, input.ndim)})


@export
def index_select(input, dim, index) -> Tensor:
    """``index_select(input, dim, index)``: the entries ``index`` (1-d) of ``dim``."""
    _check_index("index_select", index)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    return apply(INDEX_SELECT, (input, index), {"dim": wrap_dim(dim, input.ndim)})


@export
def take(input, index) -> Tensor:
    """``take(input, index)``: elements of the flattened input at ``index``."""
    _check_index("take", index)
    return apply(TAKE, (input, index))


@export
def scatter_add(input, dim, index, src) -> Tensor:
    """``scatter_add(input, dim, index, src)``: ``src`` added into a copy of ``input`` at
    ``index`` along ``dim``."""
    _check_index("scatter_add", index)
    return apply(SCATTER_ADD, (input, index, src), {"dim": wrap_dim(dim, input.ndim)})


def _scatter_args(input, dim, index, src, value):
    _check_index("scatter", index)
    src = value if src is None else src
    op = SCATTER if isinstance(src, Tensor) else SCATTER_VALUE
    return op, (input, index, to_tensor_like(src)), {"dim": wrap_dim(dim, input.ndim)}


@export
def scatter(input, dim, index, src=None, value=None) -> Tensor:
    """``scatter(input, dim, index, src)`` / ``scatter(input, dim, index, value=v)``."""
    op, args, st = _scatter_args(input, dim, index, src, value)
    return apply(op, args, st)


@export(name="scatter_add_", function=False)
def _scatter_add_(self, dim, index, src) -> Tensor:
    _check_index("scatter_add", index)
    return apply(SCATTER_ADD, (self, index, src), {"dim": wrap_dim(dim, self.ndim)}, out=self)


@export(name="scatter_", function=False)
def _scatter_(self, dim, index, src=None, value=None) -> Tensor:
    op, args, st = _scatter_args(self, dim, index, src, value)
    return apply(op, args, st, out=self)
