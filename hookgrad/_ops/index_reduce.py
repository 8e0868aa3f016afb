"""``index_reduce``: reduce ``source``'s slices into ``input`` at ``index`` along a dim
(``prod``, ``mean``, ``amax``, ``amin``; with ``input``'s own slice or without).

Each output slice reduces the sources aimed at it as one masked reduction over a dense
``(len(input), len(index))`` membership mask, so JAX's derivatives of ``prod``, ``sum`` and
``max`` are PyTorch's: products with zeros, and gradients split evenly among tied maxima."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _errors
from .._dtype import TORCH_KINDS
from .registry import OpCall, defop, variants
from .gather import check_index_source
from .promotion import same_source_dtype
from .shape import wrap_dim

_REDUCES = ("prod", "mean", "amax", "amin")


def _index_reduce(x, index, src, dim, reduce, include_self):
    x, src = jnp.moveaxis(x, dim, 0), jnp.moveaxis(src, dim, 0)
    member = index[None, :] == jnp.arange(x.shape[0])[:, None]          # (n, k)
    count = member.sum(1).reshape((-1,) + (1,) * (x.ndim - 1))
    mask = member.reshape(member.shape + (1,) * (x.ndim - 1))            # (n, k, 1...)
    srcs = jnp.broadcast_to(src[None], mask.shape[:2] + src.shape[1:])
    if reduce == "prod":
        out = jnp.prod(jnp.where(mask, srcs, 1), axis=1)
        out = x * out if include_self else out
    elif reduce == "mean":
        total = jnp.sum(jnp.where(mask, srcs, 0), axis=1) + (x if include_self else 0)
        n = (count + include_self).astype(total.dtype)
        n = jnp.maximum(n, 1)
        out = total / n if jnp.issubdtype(x.dtype, jnp.inexact) else jax.lax.div(total, n)
    else:
        big = jnp.inf if jnp.issubdtype(x.dtype, jnp.inexact) else jnp.iinfo(x.dtype).max
        fill = -big if reduce == "amax" else big
        cands = jnp.where(mask, srcs, fill)
        if include_self:  # one more candidate: ties with it share the gradient evenly too
            cands = jnp.concatenate([x[:, None], cands], axis=1)
        out = (jnp.max if reduce == "amax" else jnp.min)(cands, axis=1)
    if not include_self:
        out = jnp.where(count == 0, x, out)
    return jnp.moveaxis(out.astype(x.dtype), 0, dim)


INDEX_REDUCE = defop("index_reduce", _index_reduce, "IndexReduceBackward0", nondiff=(1,),
                     names="self index source -> index self dim source reduce include_self "
                           "result")
_warned = []


@variants(inplace=True)
def index_reduce(input, dim, index, source, reduce, *, include_self=True) -> OpCall:
    """``index_reduce(input, dim, index, source, reduce, *, include_self=True)``: ``input``
    with each slice ``source[i]`` along ``dim`` reduced into slice ``index[i]`` by
    ``reduce`` (``'prod'``, ``'mean'``, ``'amax'`` or ``'amin'``), together with
    ``input``'s own slice when ``include_self``; slices no index names are kept."""
    if not _warned:  # PyTorch warns once per process
        _warned.append(True)
        _errors.warn("index_reduce() is in beta and the API may change at any time.",
                     UserWarning)
    if reduce not in _REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    d = wrap_dim(dim, input.ndim)
    if index.dtype.name not in ("int32", "int64"):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{TORCH_KINDS[index.dtype.name]}")
    if index.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with type: {TORCH_KINDS[index.dtype.name]} and size: "
                         f"{list(index.shape)}")
    check_index_source("index_reduce", input, d, index, source)
    same_source_dtype("index_reduce_", input, source)
    index = index if index.ndim == 1 else index.reshape(-1)  # saved as itself, as PyTorch's
    return INDEX_REDUCE, (input, index, source), {
        "dim": d, "reduce": reduce, "include_self": bool(include_self)}
