"""The indices of non-zero elements and what selects by them: ``nonzero`` and
``masked_select``, whose shapes depend on the data (eager only), and ``nonzero_static``,
its indices in a fixed number of rows padded with ``fill_value``, which traces."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from .dispatch import apply
from .parser_errors import not_a
from .registry import defop, export, shape_broadcast_error


def _static(x, size, fill_value):
    if x.ndim == 0:  # no index columns
        return jnp.zeros((size, 0), jnp.int64)
    idx = jnp.nonzero(x, size=size, fill_value=fill_value)
    return jnp.stack(idx, axis=1).astype(jnp.int64)


NONZERO_STATIC = defop("nonzero_static", _static, None)


@export
def nonzero_static(input, *, size, fill_value=-1) -> Tensor:  # noqa: A002
    """``nonzero_static(input, *, size, fill_value=-1)``: the first ``size`` rows of
    ``nonzero(input)``, padded with rows of ``fill_value``: a fixed shape ``(size,
    input.dim())`` that compiles."""
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    return apply(NONZERO_STATIC, (input,), {"size": int(size), "fill_value": int(fill_value)})


def _masked_select(x, mask, count):
    x, mask = jnp.broadcast_arrays(x, mask)
    return x[jnp.nonzero(mask, size=count)]


# the count of True entries is static (one program per count); PyTorch saves mask and self
MASKED_SELECT = defop("masked_select", _masked_select, "MaskedSelectBackward0", nondiff=(1,),
                      names="self mask -> mask self")


@export
def nonzero(input, *, as_tuple=False) -> Tensor | tuple[Tensor, ...]:
    """Indices of non-zero elements (data-dependent shape: eager only)."""
    if not isinstance(input, Tensor):
        raise not_a("nonzero", "input", input, "Tensor")
    idx = np.nonzero(np.asarray(input._data))
    if as_tuple:
        return tuple(Tensor._wrap(jnp.asarray(i)) for i in idx)
    return Tensor._wrap(jnp.asarray(np.stack(idx, axis=1)))


@export
def masked_select(input, mask) -> Tensor:
    """``masked_select(input, mask)``: the 1-d tensor of elements where ``mask`` (broadcast)
    is True (data-dependent shape: eager only)."""
    if mask.dtype.name != "bool":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    err = shape_broadcast_error(tuple(mask.shape), tuple(input.shape))
    if err is not None:
        raise err
    b = tuple(np.broadcast_shapes(input.shape, mask.shape))
    if isinstance(mask._data, jax.core.Tracer):
        raise RuntimeError("masked_select has a data-dependent shape and cannot be traced; "
                           "use hookgrad.where instead")
    count = int(np.count_nonzero(np.broadcast_to(np.asarray(mask._data), b)))
    return apply(MASKED_SELECT, (input, mask), {"count": count})
