"""PyTorch's layer kernels as top-level functions, with ATen's signatures:
``torch.embedding(weight, indices, ...)``, ``torch.convolution``, ``torch.conv_tbc``,
``torch.bilinear``, ``torch.grid_sampler`` (modes as ints), ``torch.affine_grid_generator``,
``torch.max_pool1d_with_indices``, ``torch.adaptive_max_pool1d`` and the in-place
activations ``celu_``, ``selu_``, ``threshold_``.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from .dispatch import apply
from .linalg import einsum
from .nn import celu as _celu, selu as _selu, threshold as _threshold
from .nn_conv import (_Const, conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d,
                      conv_transpose3d, max_pool1d)
from .nn_grid import AFFINE_GRID, grid_sample
from .nn_layers import embedding as _embedding
from .nn_pool import adaptive_max_pool1d_with_indices
from .nn_sparse import _segments, embedding_bag as _embedding_bag
from .registry import defop, export


@export(method=False)
def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """The rows of ``weight`` at ``indices``; a non-negative ``padding_idx`` gets no
    gradient (-1: none)."""
    pad = None if padding_idx < 0 else int(padding_idx)
    return _embedding(indices, weight, pad, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


@export(method=False)
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y = x1^T A x2 + b`` with ``weight`` ``(out, in1, in2)``."""
    # PyTorch's checks and wording (einsum would only say that labels disagree)
    s1, s2, sw = tuple(input1.shape), tuple(input2.shape), tuple(weight.shape)
    if len(s1) != len(s2):
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {len(s1)} and "
                           f"{len(s2)}")
    for d, (a, b) in enumerate(zip(s1[:-1], s2[:-1])):
        if a != b:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: "
                               f"got {a} and {b}")
    for name, got, dim in (("input1", s1[-1], 1), ("input2", s2[-1], 2),
                           ("bias", None if bias is None else bias.shape[0], 0)):
        if got is not None and got != sw[dim]:
            raise RuntimeError(f"bilinear(): {name} size does not match weight size: got "
                               f"{got} but expected {sw[dim]}")
    y = einsum("...i,oij,...j->...o", input1, weight, input2)
    return y if bias is None else y + bias


_BAG_MODES = ("sum", "mean", "max")


def _bag_argmax(w, idx, seg, nbags, padding_idx):
    # each bag's row of the maximum, per column (the first one among ties); empty bags: 0
    rows = jnp.take(w, idx, axis=0)
    keep = jnp.ones(idx.shape, bool) if padding_idx is None else idx != padding_idx
    rows = jnp.where(keep[:, None], rows, -jnp.inf)
    seg = jnp.asarray(seg)
    top = jax.ops.segment_max(rows, seg, nbags)
    pos = jnp.arange(idx.shape[0])[:, None]
    first = jax.ops.segment_min(jnp.where(keep[:, None] & (rows == top[seg]), pos,
                                          idx.shape[0]), seg, nbags)
    found = first < idx.shape[0]
    return jnp.where(found, jnp.take(idx, jnp.minimum(first, idx.shape[0] - 1)), 0)


_BAG_ARGMAX = defop("embedding_bag_argmax", _bag_argmax, None)


@export(method=False)
def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor,
                  scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``(output, offset2bag, bag_size, max_indices)``: the bags' sums (``mode`` 0), means
    (1) or maxima (2), each index's bag, each bag's size (not counting ``padding_idx``) and,
    for maxima, the row each maximum came from (for means, the bag sizes again; for sums,
    zeros, and no ``offset2bag`` unless ``padding_idx`` is given), as PyTorch's CPU kernel
    returns them."""
    from .._factory import tensor, zeros
    if not isinstance(offsets, Tensor):
        raise TypeError(f"embedding_bag(): argument 'offsets' (position 3) must be Tensor, not "
                        f"{type(offsets).__name__}")
    out = _embedding_bag(indices, weight, offsets, scale_grad_by_freq=scale_grad_by_freq,
                         mode=_BAG_MODES[mode], sparse=sparse,
                         per_sample_weights=per_sample_weights,
                         include_last_offset=include_last_offset, padding_idx=padding_idx)
    seg, nbags = _segments(indices.shape[0], offsets, include_last_offset)
    pad = None if padding_idx is None else padding_idx % weight.shape[0]
    if mode == 0 and pad is None:
        offset2bag = zeros(0, dtype=indices.dtype)
    else:
        offset2bag = tensor(np.minimum(seg, max(nbags - 1, 0)), dtype=indices.dtype)
    if mode == 0:
        return out, offset2bag, zeros(nbags, dtype=indices.dtype), \
            zeros(nbags, dtype=indices.dtype)
    idx = np.asarray(indices.numpy())
    counted = (idx != pad) if pad is not None else np.ones(idx.shape, bool)
    sizes = tensor(np.bincount(seg[seg < nbags], counted[seg < nbags], nbags).astype(np.int64),
                   dtype=indices.dtype)
    if mode == 1:
        return out, offset2bag, sizes, sizes.clone()
    arg = apply(_BAG_ARGMAX, (weight.detach(), indices),
                {"seg": _Const(seg), "nbags": int(nbags), "padding_idx": pad})
    return out, offset2bag, sizes, arg


_CONV = {1: conv1d, 2: conv2d, 3: conv3d}
_CONV_T = {1: conv_transpose1d, 2: conv_transpose2d, 3: conv_transpose3d}


@export(method=False)
def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride, padding, dilation,
                transposed: bool, output_padding, groups: int) -> Tensor:
    """The convolution (``transposed``: its transpose) of ``input`` ``(N, C_in, *)`` with
    ``weight``, 1-, 2- or 3-D by ``weight``'s rank."""
    nd = weight.ndim - 2
    if nd not in _CONV:
        raise RuntimeError("weight should have at least three dimensions" if nd < 1 else
                           f"convolution(): expected a 3-D, 4-D or 5-D weight, but got "
                           f"weight of size {list(weight.shape)}")
    if transposed:
        return _CONV_T[nd](input, weight, bias, tuple(stride), tuple(padding),
                           tuple(output_padding), groups, tuple(dilation))
    return _CONV[nd](input, weight, bias, tuple(stride), tuple(padding), tuple(dilation), groups)


def _conv_tbc(x, w, b, pad):
    # time-batch-channel input, (width, in, out) weight: XLA takes the layouts as they are
    y = jax.lax.conv_general_dilated(x, w, (1,), [(pad, pad)],
                                     dimension_numbers=("WNC", "WIO", "WNC"))
    return y + b


CONV_TBC = defop("conv_tbc", _conv_tbc, "ConvTbcBackward0")


@export(method=False)
def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-D convolution of ``input`` ``(time, batch, in_channels)`` with ``weight``
    ``(width, in_channels, out_channels)``, padded by ``pad`` on both ends of time."""
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    return apply(CONV_TBC, (input, weight, bias), {"pad": int(pad)})


@export(method=False)
def max_pool1d_with_indices(input: Tensor, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """``(output, indices)`` of 1-D max pooling (``stride`` empty: ``kernel_size``)."""
    return max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode, True)


@export(method=False)
def adaptive_max_pool1d(input: Tensor, output_size) -> tuple[Tensor, Tensor]:
    """``(output, indices)`` of 1-D adaptive max pooling to ``output_size``."""
    return adaptive_max_pool1d_with_indices(input, output_size)


_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners, nd=None):
    if nd is not None and (input.ndim != nd + 2 or grid.ndim != nd + 2):
        raise RuntimeError(f"grid_sampler(): expected {nd + 2}D input and grid with same number "
                           f"of dimensions, but got input with sizes {list(input.shape)} and "
                           f"grid with sizes {list(grid.shape)}")
    if interpolation_mode not in range(3) or padding_mode not in range(3):
        raise RuntimeError(f"grid_sampler(): expected interpolation_mode and padding_mode in "
                           f"0, 1, 2, but got {interpolation_mode} and {padding_mode}")
    return grid_sample(input, grid, _MODES[interpolation_mode], _PADDINGS[padding_mode],
                       bool(align_corners))


@export(method=False)
def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """``nn.functional.grid_sample`` with ATen's mode numbers: ``interpolation_mode``
    0 bilinear, 1 nearest, 2 bicubic; ``padding_mode`` 0 zeros, 1 border, 2 reflection."""
    return _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


@export(method=False)
def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """``grid_sampler`` of a 4-D ``input``."""
    return _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners, 2)


@export(method=False)
def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """``grid_sampler`` of a 5-D ``input``."""
    return _grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners, 3)


@export(method=False)
def affine_grid_generator(theta: Tensor, size, align_corners: bool) -> Tensor:
    """The sampling grid of the affine maps ``theta`` for an output of ``size``
    (``nn.functional.affine_grid`` without its argument checks)."""
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    return apply(AFFINE_GRID, (theta,), {"size": tuple(int(s) for s in size),
                                         "align_corners": bool(align_corners)})


@export(method=False)
def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place ``celu``."""
    return _celu(input, alpha, inplace=True)


@export(method=False)
def selu_(input: Tensor) -> Tensor:
    """In-place ``selu``."""
    return _selu(input, inplace=True)


@export(method=False)
def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place ``threshold``: elements not above ``threshold`` become ``value``."""
    return _threshold(input, threshold, value, inplace=True)
