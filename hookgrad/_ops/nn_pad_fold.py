"""Padding and sliding-window ops behind ``hookgrad.nn.functional``: ``pad`` (constant,
reflect, replicate, circular) and ``unfold``/``fold`` (im2col and its sum back).

Each op is one row of the table (a pure JAX forward and PyTorch's node name); backward
is JAX's vjp of the forward. Arguments are checked before anything runs, with PyTorch's
error types and wording.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _errors
from .._tensor import Tensor
from .dispatch import ALL, apply
from .nn_conv import _DN, _ntuple
from .registry import defop
from .stacking import constant_pad_nd


# --------------------------------------------------------------------------- padding


def _pad_mode(x, pads, mode):
    cfg = [(0, 0)] * (x.ndim - len(pads)) + list(pads)
    return jnp.pad(x, cfg, mode=mode)


_PAD_OPS = {}
# PyTorch's reflection and replication pads save their input (``_saved_self``, which pack
# hooks see); its circular pad is slice copies, which save nothing
for _mode, _jmode, _node, _save in (("reflect", "reflect", "ReflectionPad{}DBackward0", ALL),
                                    ("replicate", "edge", "ReplicationPad{}DBackward0", ALL),
                                    ("circular", "wrap", "torch::autograd::CopySlices", ())):
    for _n in (1, 2, 3):
        _PAD_OPS[_mode, _n] = defop(f"{_mode}_pad{_n}d", _pad_mode, _node.format(_n), _save)


def pad(input, pad, mode="constant", value=None) -> Tensor:
    """Pads the trailing dims of ``input``: ``pad = (left_last, right_last, left_2nd_last,
    right_2nd_last, ...)``.

    ::

        pad(input, pad, mode='constant', value=None) -> Tensor

    Modes: ``'constant'`` (negative sizes crop), ``'reflect'``, ``'replicate'``,
    ``'circular'``.
    """
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    n = len(pad) // 2
    if n > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           "dimension but got padding length " f"{len(pad)} and input of "
                           f"dimension {input.ndim}")
    pairs = tuple((pad[2 * (n - 1 - i)], pad[2 * (n - 1 - i) + 1]) for i in range(n))
    if mode == "constant":  # PyTorch's constant_pad_nd
        return constant_pad_nd(input, pad, 0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    if not (1 <= n <= 3 and input.ndim in (n + 1, n + 2)):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    dims = input.shape[-n:]
    for i, ((lo, hi), size) in enumerate(zip(pairs, dims)):
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                               f"input dimension, but got: padding ({lo}, {hi}) at dimension "
                               f"{input.ndim - n + i} of input {list(input.shape)}")
        if mode == "circular" and (lo > size or hi > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if lo < 0 or hi < 0:
            raise RuntimeError(f"negative padding is not supported in {mode} mode")
    return apply(_PAD_OPS[mode, n], (input,), {"pads": pairs, "mode": {
        "reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]})


# --------------------------------------------------------------------------- unfold / fold


def _unfold(x, kernel, dilation, padding, stride):
    patches = jax.lax.conv_general_dilated_patches(
        x, kernel, stride, [(p, p) for p in padding], rhs_dilation=dilation,
        dimension_numbers=_DN[2], precision=jax.lax.Precision.HIGHEST)
    return patches.reshape(patches.shape[0], patches.shape[1], -1)


def _fold(x, output_size, kernel, dilation, padding, stride):
    n, ck = x.shape[0], x.shape[1]
    c = ck // (kernel[0] * kernel[1])
    proto = jax.ShapeDtypeStruct((n, c) + tuple(output_size), x.dtype)
    # fold is the adjoint of unfold: the transpose of that linear map
    (y,) = jax.linear_transpose(lambda t: _unfold(t, kernel, dilation, padding, stride),
                                proto)(x)
    return y


UNFOLD = defop("unfold", _unfold, "Im2ColBackward0", ())
FOLD = defop("fold", _fold, "Col2ImBackward0", ())


def unfold(input, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Extracts sliding local blocks of ``(N, C, H, W)`` into ``(N, C * kH * kW, L)``."""
    if input.ndim not in (3, 4):
        # PyTorch's im2col reads the size of dim ndim (1 for a 0-d input) before it checks
        if input.ndim < 3:
            raise _errors.dim_out_of_range(max(input.ndim, 1), input.ndim)
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           "and other non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    st = {"kernel": _ntuple(kernel_size, 2), "dilation": _ntuple(dilation, 2),
          "padding": _ntuple(padding, 2), "stride": _ntuple(stride, 2)}
    for arg, name in (("kernel", "kernel size"), ("stride", "stride"), ("dilation", "dilation")):
        if min(st[arg]) <= 0:
            h, w = st[arg]
            raise RuntimeError(f"{name} should be greater than zero, but got {name.split()[0]}"
                               f"_height: {h} {name.split()[0]}_width: {w}")
    y = apply(UNFOLD, (x,), st)
    return y.squeeze(0) if unbatched else y


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sums sliding local blocks ``(N, C * kH * kW, L)`` back into ``(N, C, H, W)`` (the
    adjoint of ``unfold``)."""
    if input.ndim not in (2, 3):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           "batch size and non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    y = apply(FOLD, (x,), {"output_size": _ntuple(output_size, 2),
                           "kernel": _ntuple(kernel_size, 2), "dilation": _ntuple(dilation, 2),
                           "padding": _ntuple(padding, 2), "stride": _ntuple(stride, 2)})
    return y.squeeze(0) if unbatched else y


