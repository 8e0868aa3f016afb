"""Adaptive max pooling behind ``hookgrad.nn.functional.adaptive_max_pool1d/2d``.

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
from .nn_conv import _Const, _check_pool_input
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


def _adaptive_max2d(x, bins_h, bins_w, width):
    (ih, mh), (iw, mw) = [(np.asarray(i), np.asarray(m)) for i, m in (bins_h, bins_w)]
    oh, kh = ih.shape
    ow, kw = iw.shape
    lead = x.shape[:-2]
    win = jnp.take(x, ih.reshape(-1), axis=-2, mode="clip")      # (..., oh*kh, W)
    win = jnp.take(win, iw.reshape(-1), axis=-1, mode="clip")    # (..., oh*kh, ow*kw)
    win = win.reshape(lead + (oh, kh, ow, kw))
    win = jnp.moveaxis(win, -2, -3).reshape(lead + (oh, ow, kh * kw))
    real = (mh[:, None, :, None] & mw[None, :, None, :]).reshape(oh, ow, kh * kw)
    fill = -jnp.inf if jnp.issubdtype(x.dtype, jnp.floating) else jnp.iinfo(x.dtype).min
    win = jnp.where(real, win, jnp.asarray(fill, x.dtype))
    arg = jnp.argmax(win, axis=-1)
    vals = jnp.take_along_axis(win, arg[..., None], axis=-1)[..., 0]
    # flat index h * W + w of the chosen element
    flat_pos = (ih[:, None, :, None] * width + iw[None, :, None, :]).reshape(oh, ow, kh * kw)
    pos = jnp.asarray(flat_pos, jax.dtypes.canonicalize_dtype(jnp.int64))
    ind = jnp.take_along_axis(jnp.broadcast_to(pos, win.shape), arg[..., None], axis=-1)
    return vals, ind[..., 0]


ADAPTIVE_MAX2D = defop("adaptive_max_pool2d", _adaptive_max2d, "AdaptiveMaxPool2DBackward0")


def _bin_consts(n, o):
    idx, mask = _bins(n, o)
    return (_Const(idx), _Const(mask))


def _adaptive_max2d_impl(input, output_size, return_indices):
    if not isinstance(output_size, (list, tuple)):
        output_size = (output_size,) * 2
    if len(output_size) != 2:
        raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must "
                           "be 2")
    h, w = input.shape[-2:]
    oh, ow = (int(n if o is None else o) for n, o in zip((h, w), output_size))
    if oh < 0 or ow < 0:
        raise RuntimeError(f"adaptive_max_pool2d(): Expected output_size to be non-negative, "
                           f"but got {[oh, ow]}")
    vals, ind = apply(ADAPTIVE_MAX2D, (input,), {"bins_h": _bin_consts(h, oh),
                                                 "bins_w": _bin_consts(w, ow), "width": w})
    return (vals, ind) if return_indices else vals


def _check_adaptive_max2d_input(input):
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: "
                           f"{list(input.shape)}")
    for d in range(1, input.ndim) if input.ndim == 4 else range(input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"adaptive_max_pool2d(): Expected input to have non-zero size "
                               f"for non-batch dimensions, but input has sizes "
                               f"{list(input.shape)} with dimension {d} being empty")


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
    _check_adaptive_max2d_input(input)
    return _adaptive_max2d_impl(input, output_size, return_indices)


def adaptive_max_pool1d(input, output_size, return_indices=False) -> Tensor | tuple[Tensor, Tensor]:
    """Max pooling of ``(N, C, L)`` (or ``(C, L)``) to ``output_size`` bins.

    ::

        adaptive_max_pool1d(input, output_size, return_indices=False)
    """
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "adaptive_max_pool1d)")
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != 1:
            raise RuntimeError(f"adaptive_max_pool1d() argument 'output_size' should contain "
                               f"one int (got {len(output_size)})")
        output_size = output_size[0]
    _check_pool_input(input, 1, "adaptive_max_pool1d")
    r = _adaptive_max2d_impl(input.unsqueeze(-2), (1, output_size), return_indices)
    if return_indices:
        return r[0].squeeze(-2), r[1].squeeze(-2)
    return r.squeeze(-2)

