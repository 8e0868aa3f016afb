"""Adaptive max pooling behind ``hookgrad.nn.functional.adaptive_max_pool1d/2d/3d``.

Bin ``i`` of ``o`` over ``n`` covers ``[floor(i n / o), ceil((i + 1) n / o))``, PyTorch's
bin edges. The bins are gathered into one padded window axis (positions past a bin's end
masked to ``-inf``); the first maximum of each window, in row-major order, is the one
PyTorch picks, so the gradient goes to the same element.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from .dispatch import apply
from .nn_conv import _Const, _check_pool_input, check_1d_rank, check_output_size
from .registry import defop


def _bins(n, o):
    """``(o, K)`` input positions of each bin (padded with its last one) and the mask of
    real ones."""
    starts = [(i * n) // o for i in range(o)]
    ends = [-((-(i + 1) * n) // o) for i in range(o)]
    k = max(e - s for s, e in zip(starts, ends))
    idx = np.array([[min(s + j, e - 1) for j in range(k)] for s, e in zip(starts, ends)],
                   np.int32)
    mask = np.array([[s + j < e for j in range(k)] for s, e in zip(starts, ends)])
    return idx, mask


def _outer(parts, combine):
    """``(o_1, ..., o_n, k_1 * ... * k_n)``: ``combine`` of each dimension's ``(o_i, k_i)``
    entries, broadcast against one another."""
    nd = len(parts)
    out = None
    for i, a in enumerate(parts):
        shape = [1] * (2 * nd)
        shape[i], shape[nd + i] = a.shape
        a = a.reshape(shape)
        out = a if out is None else combine(out, a)
    os_ = tuple(p.shape[0] for p in parts)
    return out.reshape(os_ + (-1,))


def _adaptive_max(x, bins, sizes):
    """Max over each bin of the trailing ``len(bins)`` dims; also the flat index of the
    (first) maximum within those dims."""
    nd = len(bins)
    idx = [np.asarray(i) for i, _ in bins]
    masks = [np.asarray(m) for _, m in bins]
    lead = x.shape[:-nd]
    win = x
    for d, i in enumerate(idx):
        win = jnp.take(win, i.reshape(-1), axis=len(lead) + d, mode="clip")
    split = sum((i.shape for i in idx), ())                    # (o1, k1, o2, k2, ...)
    win = win.reshape(lead + split)
    n = len(lead)
    order = [n + 2 * d for d in range(nd)] + [n + 2 * d + 1 for d in range(nd)]
    win = jnp.transpose(win, tuple(range(n)) + tuple(order))
    outs = tuple(i.shape[0] for i in idx)
    win = win.reshape(lead + outs + (-1,))
    real = _outer(masks, np.logical_and)
    fill = -jnp.inf if jnp.issubdtype(x.dtype, jnp.floating) else jnp.iinfo(x.dtype).min
    win = jnp.where(real, win, jnp.asarray(fill, x.dtype))
    arg = jnp.argmax(win, axis=-1)
    vals = jnp.take_along_axis(win, arg[..., None], axis=-1)[..., 0]
    strides = [int(np.prod(sizes[d + 1:])) for d in range(nd)]
    flat_pos = _outer([i * s for i, s in zip(idx, strides)], np.add)
    pos = jnp.asarray(flat_pos, jax.dtypes.canonicalize_dtype(jnp.int64))
    ind = jnp.take_along_axis(jnp.broadcast_to(pos, win.shape), arg[..., None], axis=-1)
    return vals, ind[..., 0]


ADAPTIVE_MAX2D = defop("adaptive_max_pool2d", _adaptive_max, "AdaptiveMaxPool2DBackward0",
                       names="self -> self result1")
ADAPTIVE_MAX3D = defop("adaptive_max_pool3d", _adaptive_max, "AdaptiveMaxPool3DBackward0",
                       names="self -> self result1")


def _bin_consts(n, o):
    idx, mask = _bins(n, o)
    return (_Const(idx), _Const(mask))


def _adaptive_max_impl(nd, input, output_size, return_indices):
    name = f"adaptive_max_pool{nd}d"
    if not isinstance(output_size, (list, tuple)):
        output_size = (output_size,) * nd
    if len(output_size) != nd:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {nd}")
    sizes = tuple(input.shape[-nd:])
    outs = [int(n if o is None else o) for n, o in zip(sizes, output_size)]
    if any(o < 0 for o in outs):
        raise RuntimeError(f"{name}(): Expected output_size to be non-negative, but got {outs}")
    op = ADAPTIVE_MAX2D if nd == 2 else ADAPTIVE_MAX3D
    vals, ind = apply(op, (input,), {"bins": tuple(_bin_consts(n, o)
                                                   for n, o in zip(sizes, outs)),
                                     "sizes": sizes})
    return (vals, ind) if return_indices else vals


def _check_adaptive_max_input(input, nd):
    name = f"adaptive_max_pool{nd}d"
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    for d in range(1, input.ndim) if input.ndim == nd + 2 else range(input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {d} being empty")


def adaptive_max_pool2d(input, output_size, return_indices=False) -> Tensor | tuple[Tensor, Tensor]:
    """Max pooling of ``(N, C, H, W)`` (or ``(C, H, W)``) to ``output_size`` (an int, a pair,
    ``None`` keeps that size), PyTorch's bins.

    ::

        adaptive_max_pool2d(input, output_size, return_indices=False)

    With ``return_indices=True`` also returns the flat index ``h * W + w`` of each maximum.

    Example::

        >>> F.adaptive_max_pool2d(hookgrad.randn(1, 64, 10, 9), (5, 7)).shape
        hookgrad.Size([1, 64, 5, 7])
    """
    check_output_size(output_size, input)
    _check_adaptive_max_input(input, 2)
    return _adaptive_max_impl(2, input, output_size, return_indices)


def adaptive_max_pool1d(input, output_size, return_indices=False) -> Tensor | tuple[Tensor, Tensor]:
    """Max pooling of ``(N, C, L)`` (or ``(C, L)``) to ``output_size`` bins.

    ::

        adaptive_max_pool1d(input, output_size, return_indices=False)
    """
    check_1d_rank(input, "adaptive_max_pool1d")
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != 1:
            raise RuntimeError(f"adaptive_max_pool1d() argument 'output_size' should contain "
                               f"one int (got {len(output_size)})")
        output_size = output_size[0]
    _check_pool_input(input, 1, "adaptive_max_pool1d")
    r = _adaptive_max_impl(2, input.unsqueeze(-2), (1, output_size), return_indices)
    if return_indices:
        return r[0].squeeze(-2), r[1].squeeze(-2)
    return r.squeeze(-2)



def adaptive_max_pool3d(input, output_size, return_indices=False) -> Tensor | tuple[Tensor, Tensor]:
    """Max pooling of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``) to ``output_size`` (an int,
    a triple, ``None`` keeps that size), PyTorch's bins.

    ::

        adaptive_max_pool3d(input, output_size, return_indices=False)

    With ``return_indices=True`` also returns the flat index ``(d * H + h) * W + w`` of each
    maximum.
    """
    check_output_size(output_size, input)
    _check_adaptive_max_input(input, 3)
    return _adaptive_max_impl(3, input, output_size, return_indices)


def adaptive_max_pool1d_with_indices(input, output_size,
                                     return_indices=False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool1d`` returning ``(output, indices)``."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size,
                                     return_indices=False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool2d`` returning ``(output, indices)``."""
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size,
                                     return_indices=False) -> tuple[Tensor, Tensor]:
    """``adaptive_max_pool3d`` returning ``(output, indices)``."""
    return adaptive_max_pool3d(input, output_size, True)
