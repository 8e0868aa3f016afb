"""``nonzero_static``: ``nonzero``'s indices in a fixed number of rows, padded with
``fill_value``, so its shape does not depend on the data and it traces."""
from __future__ import annotations

import jax.numpy as jnp

from .._tensor import Tensor
from .dispatch import apply
from .registry import defop, export


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
