"""``nn.CrossMapLRN2d``'s computation: local response normalization across channels as the
Lua-Torch layer PyTorch keeps as an ``autograd.Function`` (``CrossMapLRN2dBackward``).

Its forward sums squares over a running channel window that, past the first ``pre_pad``
channels, always keeps channel 0 (the window is slid by adding the next channel and
dropping the one ``pre_pad`` back, except channel 0); its backward is that Function's own
formula over a centred window of ``size`` channels, not the derivative of the forward.
Both are reproduced here (a ``jax.custom_vjp``), so values and gradients are PyTorch's.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .registry import defop


def _window_sums(v, lo, hi):
    """``sum(v[:, lo[c]:hi[c] + 1])`` for each channel ``c`` (static bounds)."""
    cs = jnp.concatenate([jnp.zeros_like(v[:, :1]), jnp.cumsum(v, axis=1)], axis=1)
    return cs[:, hi + 1] - cs[:, lo]


def _scale(x, size, alpha, k):
    c = x.shape[1]
    pre_pad = int((size - 1) / 2 + 1)
    ch = np.arange(c)
    hi = np.minimum(c - 1, ch + pre_pad - 1)
    lo = np.where(ch > pre_pad, ch - pre_pad + 1, 0)
    sq = x * x
    total = _window_sums(sq, lo, hi) + jnp.where((ch > pre_pad)[None, :, None, None],
                                                 sq[:, :1], 0.0)
    return total * (alpha / size) + k


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3, 4))
def _cross_map_lrn(x, size, alpha, beta, k):
    return x * _scale(x, size, alpha, k) ** -beta


def _fwd(x, size, alpha, beta, k):
    scale = _scale(x, size, alpha, k)
    out = x * scale ** -beta
    return out, (x, out, scale)


def _bwd(size, alpha, beta, k, res, g):
    x, out, scale = res
    c = x.shape[1]
    shift = int(size - (size - 1) / 2)
    ch = np.arange(c)
    lo = np.clip(ch - shift, 0, c)
    hi = np.clip(ch + size - 1 - shift, -1, c - 1)
    ratio = g * out / scale
    accum = jnp.where((hi >= lo)[None, :, None, None], _window_sums(ratio, lo, np.maximum(hi, lo)),
                      0.0)
    return (scale ** -beta * g - (2 * alpha * beta / size) * x * accum,)


_cross_map_lrn.defvjp(_fwd, _bwd)

CROSS_MAP_LRN2D = defop("cross_map_lrn2d", _cross_map_lrn, "CrossMapLRN2dBackward")
