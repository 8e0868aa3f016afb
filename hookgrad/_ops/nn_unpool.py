"""``max_unpool1d/2d/3d``: the partial inverse of max pooling, behind
``hookgrad.nn.functional``. Each value is written at its flat index (what ``max_pool``
returned with ``return_indices=True``) of a zero output of the unpooled size.
"""
from __future__ import annotations

import jax.numpy as jnp

from .._tensor import Tensor
from .dispatch import apply
from .nn_conv import _ntuple
from .registry import defop


def _max_unpool(x, idx, out_size):
    lead = x.shape[:-len(out_size)]
    n = 1
    for s in out_size:
        n *= s
    xf = x.reshape(lead + (-1,))
    flat = jnp.zeros(lead + (n,), x.dtype)
    rows = jnp.indices(xf.shape[:-1])
    # unique_indices: each input's gradient is the output gradient at its index, also
    # where overlapping windows chose one element twice (PyTorch's backward is that gather)
    out = flat.at[tuple(r[..., None] for r in rows) + (idx.reshape(xf.shape),)].set(
        xf, unique_indices=True)
    return out.reshape(lead + tuple(out_size))


MAX_UNPOOL2D = defop("max_unpool2d", _max_unpool, "MaxUnpool2DBackward0", nondiff=(1,))
MAX_UNPOOL3D = defop("max_unpool3d", _max_unpool, "MaxUnpool3DBackward0", nondiff=(1,))


def _unpool_output_size(input, kernel, stride, padding, output_size):
    nd = len(kernel)
    default = [(input.shape[-nd + d] - 1) * stride[d] + kernel[d] - 2 * padding[d]
               for d in range(nd)]
    if output_size is None:
        return default
    output_size = [int(s) for s in output_size]
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                         f"elements, but it has a length of '{len(output_size)}'")
    for d in range(nd):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                             f'{lo} and {hi})')
    return output_size


def _max_unpoolnd(nd, input, indices, kernel_size, stride, padding, output_size):
    kernel = _ntuple(kernel_size, nd)
    stride = kernel if stride is None else _ntuple(stride, nd)
    size = _unpool_output_size(input, kernel, stride, _ntuple(padding, nd), output_size)
    if nd == 1:   # PyTorch unpools 1-D as 2-D with a unit height
        size = [1] + list(size)
        input, indices = input.unsqueeze(-2), indices.unsqueeze(-2)
    op = MAX_UNPOOL3D if nd == 3 else MAX_UNPOOL2D
    out = apply(op, (input, indices), {"out_size": tuple(size)})
    return out.squeeze(-2) if nd == 1 else out


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """Puts each value of ``(N, C, L_in)`` back at its ``indices`` in a zero
    ``(N, C, L_out)``: the inverse of ``max_pool1d(..., return_indices=True)``."""
    return _max_unpoolnd(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """Puts each value of ``(N, C, H_in, W_in)`` back at its flat ``indices`` in a zero
    ``(N, C, H_out, W_out)``: the inverse of ``max_pool2d(..., return_indices=True)``.

    ::

        max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None)
    """
    return _max_unpoolnd(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """Puts each value of ``(N, C, D, H, W)`` back at its flat ``indices``: the inverse of
    ``max_pool3d(..., return_indices=True)``."""
    return _max_unpoolnd(3, input, indices, kernel_size, stride, padding, output_size)
