"""``hash_tensor``: an order-independent hash of a tensor's elements (or of each row along
``dim``): the elements widened to 64 bits (``float64`` or ``int64``), their bits read as
``uint64`` and reduced with xor."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from .dispatch import apply
from .registry import defop, export
from .shape import wrap_dim


def _xor_hash(x, dims, keepdim):
    wide = x.astype(jnp.float64 if jnp.issubdtype(x.dtype, jnp.floating) else jnp.int64)
    bits = jax.lax.bitcast_convert_type(wide, jnp.uint64)
    out = jax.lax.reduce(bits, np.uint64(0), jax.lax.bitwise_xor, dims)
    return jnp.expand_dims(out, dims) if keepdim else out


HASH_TENSOR = defop("hash_tensor", _xor_hash, None)


@export
def hash_tensor(input, dim=None, *, keepdim=False, mode=0) -> Tensor:  # noqa: A002
    """``hash_tensor(input, dim=None, *, keepdim=False, mode=0)``: the xor of the elements'
    64-bit patterns (``mode=0``, the only mode), over all elements or the dimensions
    ``dim``; a ``uint64`` tensor."""
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    if input.dtype.is_complex:
        raise NotImplementedError(f"\"xor_sum_cpu\" not implemented for "
                                  f"'{_dtype.torch_kind(input._data.dtype)}'")
    if not _dtype.x64_enabled():
        raise RuntimeError("hash_tensor needs JAX's 64-bit mode (its result is uint64), which "
                           "is off (HOOKGRAD_X64=0 or JAX_ENABLE_X64)")
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("hash_tensor: Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
        dims = tuple(range(input.ndim))
    else:
        dims = tuple(sorted({wrap_dim(d, input.ndim) for d in (
            dim if isinstance(dim, (tuple, list)) else (dim,))}))
        for d in dims:
            if input.ndim and input.shape[d] == 0:
                raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero "
                                 "size.")
    return apply(HASH_TENSOR, (input,), {"dims": dims, "keepdim": bool(keepdim)})
