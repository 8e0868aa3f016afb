"""Channel rearrangements behind ``hookgrad.nn.functional``: ``pixel_shuffle``,
``pixel_unshuffle`` and ``channel_shuffle`` (reshapes and transposes, one node each as in
PyTorch).
"""
from __future__ import annotations

import jax.numpy as jnp

from .._tensor import Tensor
from .dispatch import apply
from .registry import defop, export


def _pixel_shuffle(x, r):
    *lead, c, h, w = x.shape
    n = len(lead)
    y = x.reshape(*lead, c // (r * r), r, r, h, w)
    y = jnp.transpose(y, tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
    return y.reshape(*lead, c // (r * r), h * r, w * r)


def _pixel_unshuffle(x, r):
    *lead, c, h, w = x.shape
    n = len(lead)
    y = x.reshape(*lead, c, h // r, r, w // r, r)
    y = jnp.transpose(y, tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    return y.reshape(*lead, c * r * r, h // r, w // r)


def _channel_shuffle(x, groups):
    n, c, *rest = x.shape
    y = x.reshape(n, groups, c // groups, *rest)
    return jnp.swapaxes(y, 1, 2).reshape(x.shape)


PIXEL_SHUFFLE = defop("pixel_shuffle", _pixel_shuffle, "PixelShuffleBackward0", ())
PIXEL_UNSHUFFLE = defop("pixel_unshuffle", _pixel_unshuffle, "PixelUnshuffleBackward0", ())
CHANNEL_SHUFFLE = defop("channel_shuffle", _channel_shuffle, "ChannelShuffleBackward0", ())


def _check_factor(name, input, factor, what):
    if input.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {input.ndim} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def _check_divides(name, input, d, what, by, k):
    if input.shape[d] % k:
        raise RuntimeError(f"{name} expects {what} to be divisible by {by}, but "
                           f"input.size({d})={input.shape[d]} is not divisible by {k}")


@export(method=False)
def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """Rearranges ``(*, C * r^2, H, W)`` into ``(*, C, H * r, W * r)``, ``r`` the
    ``upscale_factor``."""
    r = int(upscale_factor)
    _check_factor("pixel_shuffle", input, r, "upscale_factor")
    _check_divides("pixel_shuffle", input, -3, "its input's 'channel' dimension",
                   "the square of upscale_factor", r * r)
    return apply(PIXEL_SHUFFLE, (input,), {"r": r})


@export(method=False)
def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """Rearranges ``(*, C, H * r, W * r)`` into ``(*, C * r^2, H, W)``: the inverse of
    ``pixel_shuffle``."""
    r = int(downscale_factor)
    _check_factor("pixel_unshuffle", input, r, "downscale_factor")
    for what, d in (("height", -2), ("width", -1)):
        _check_divides("pixel_unshuffle", input, d, what, "downscale_factor", r)
    return apply(PIXEL_UNSHUFFLE, (input,), {"r": r})


@export(method=False)
def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Splits the ``C`` channels of ``(N, C, *)`` into ``groups`` and interleaves them:
    channel ``g * (C / groups) + i`` moves to ``i * groups + g``."""
    groups = int(groups)
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    return apply(CHANNEL_SHUFFLE, (input,), {"groups": groups})


@export(method=False)
def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``channel_shuffle`` (PyTorch's kernel without autograd support; here it records the
    same node)."""
    return channel_shuffle(input, groups)
