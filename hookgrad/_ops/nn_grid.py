"""Spatial transformer ops behind ``hookgrad.nn.functional``: ``grid_sample`` (bilinear,
nearest and bicubic sampling with zeros / border / reflection padding) and ``affine_grid``.

The sampling follows PyTorch's kernel: grid coordinates in ``[-1, 1]`` are unnormalized
(``align_corners`` decides whether -1 and 1 are the corner pixels' centres or edges),
padded (clipped or reflected), and each output reads the taps around its source point.
Gradients (input and grid) are JAX's vjp of that forward.
"""
from __future__ import annotations


import jax.numpy as jnp

from .. import _errors
from .._tensor import Tensor
from .dispatch import apply
from .registry import defop

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                  "old behavior is desired. See the documentation of grid_sample for details.")


def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    if twice_low == twice_high:
        return jnp.zeros_like(coord)
    lo, span = twice_low / 2, (twice_high - twice_low) / 2
    coord = jnp.abs(coord - lo)
    extra = jnp.fmod(coord, span)
    flips = jnp.floor(coord / span)
    return jnp.where(jnp.fmod(flips, 2) == 0, extra + lo, span - extra + lo)


def _pad_coord(coord, size, padding_mode, align_corners):
    if padding_mode == "border":
        return jnp.clip(coord, 0, size - 1)
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return jnp.clip(coord, 0, size - 1)
    return coord


def _gather(x, idx, sizes):
    """``x[n, :, idx...]`` for integer index arrays ``idx`` (one per spatial dim, each
    ``(N, *out)``), zero where an index is out of bounds."""
    n, c = x.shape[:2]
    inside = jnp.ones(idx[0].shape, bool)
    flat = jnp.zeros(idx[0].shape, jnp.int32)
    for i, s in zip(idx, sizes):
        inside = inside & (i >= 0) & (i < s)
        flat = flat * s + jnp.clip(i, 0, s - 1).astype(jnp.int32)
    xf = x.reshape(n, c, -1)
    out_shape = idx[0].shape[1:]
    vals = jnp.take_along_axis(xf, flat.reshape(n, 1, -1), axis=2)
    vals = vals.reshape((n, c) + out_shape)
    return jnp.where(inside[:, None], vals, jnp.zeros((), x.dtype))


def _cubic_weights(t, a=-0.75):
    def near(d):
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d):
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _grid_sample(x, grid, mode, padding_mode, align_corners):
    sizes = x.shape[2:]
    nd = len(sizes)
    # grid[..., k] addresses spatial dim nd - 1 - k (x is the width)
    coords = [_unnormalize(grid[..., nd - 1 - d], sizes[d], align_corners) for d in range(nd)]
    if mode == "bicubic":
        base = [jnp.floor(c) for c in coords]
        weights = [_cubic_weights(c - b) for c, b in zip(coords, base)]
        out = 0
        for i in range(4):
            for j in range(4):
                taps = [base[0] - 1 + i, base[1] - 1 + j]
                taps = [_pad_coord(t, s, padding_mode, align_corners)
                        for t, s in zip(taps, sizes)]
                w = weights[0][i] * weights[1][j]
                out = out + _gather(x, [t.astype(jnp.int32) for t in taps], sizes) * w[:, None]
        return out
    coords = [_pad_coord(c, s, padding_mode, align_corners) for c, s in zip(coords, sizes)]
    if mode == "nearest":
        return _gather(x, [jnp.round(c).astype(jnp.int32) for c in coords], sizes)
    lo = [jnp.floor(c) for c in coords]
    frac = [c - f for c, f in zip(coords, lo)]
    out = 0
    for corner in range(2 ** nd):
        bits = [(corner >> (nd - 1 - d)) & 1 for d in range(nd)]
        w = 1
        for b, f in zip(bits, frac):
            w = w * (f if b else 1 - f)
        idx = [(f + b).astype(jnp.int32) for f, b in zip(lo, bits)]
        out = out + _gather(x, idx, sizes) * w[:, None]
    return out


def _affine_grid(theta, size, align_corners):
    spatial = size[2:]
    axes = []
    for s in reversed(spatial):   # x (width) first
        v = jnp.linspace(-1.0, 1.0, s, dtype=theta.dtype) if s > 1 else \
            jnp.zeros((1,), theta.dtype)
        axes.append(v if align_corners else v * (s - 1) / s)
    mesh = jnp.meshgrid(*axes[::-1], indexing="ij")[::-1]     # spatial order, then x first
    base = jnp.stack(list(mesh) + [jnp.ones(spatial, theta.dtype)], axis=-1)
    return jnp.einsum("...k,njk->n...j", base, theta)


GRID_SAMPLE_2D = defop("grid_sampler_2d", _grid_sample, "GridSampler2DBackward0")
GRID_SAMPLE_3D = defop("grid_sampler_3d", _grid_sample, "GridSampler3DBackward0")
AFFINE_GRID = defop("affine_grid_generator", _affine_grid, "AffineGridGeneratorBackward0", ())


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros",
                align_corners=None) -> Tensor:
    """Samples ``input`` ``(N, C, H_in, W_in)`` (or ``(N, C, D, H, W)``) at the points of
    ``grid`` ``(N, H_out, W_out, 2)`` (or ``(N, D, H, W, 3)``), given as ``(x, y[, z])`` in
    ``[-1, 1]``.

    ::

        grid_sample(input, grid, mode='bilinear', padding_mode='zeros', align_corners=None)

    ``mode``: ``'bilinear'``, ``'nearest'``, ``'bicubic'`` (4-D only); ``padding_mode``:
    ``'zeros'``, ``'border'``, ``'reflection'``.
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        _errors.warn(_ALIGN_WARNING)
        align_corners = False
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number "
                           f"of dimensions, but got input with sizes {list(input.shape)} and "
                           f"grid with sizes {list(grid.shape)}")
    nd = input.ndim - 2
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if grid.shape[-1] != nd:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last dimension, "
                           f"but got grid with sizes {list(grid.shape)}")
    if mode == "bicubic" and nd != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    op = GRID_SAMPLE_2D if nd == 2 else GRID_SAMPLE_3D
    return apply(op, (input, grid), {"mode": mode, "padding_mode": padding_mode,
                                     "align_corners": bool(align_corners)})


def affine_grid(theta, size, align_corners=None) -> Tensor:
    """The sampling grid ``(N, H, W, 2)`` (or ``(N, D, H, W, 3)``) of the affine maps
    ``theta`` ``(N, 2, 3)`` (or ``(N, 3, 4)``) for an output of ``size``, for
    ``grid_sample``.

    ::

        affine_grid(theta, size, align_corners=None)
    """
    if align_corners is None:
        _errors.warn(_ALIGN_WARNING)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = [int(s) for s in size]
    if len(size) in (4, 5):
        nd = len(size) - 2
        if theta.ndim != 3 or theta.shape[-2] != nd or theta.shape[-1] != nd + 1:
            raise ValueError(f"Expected a batch of {nd}D affine matrices of shape "
                             f"Nx{nd}x{nd + 1} for size {size}. Got {theta.shape}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(size[2:]) == 1:
        _errors.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                     "grids when align_corners=True. This is not an intended use case of "
                     "affine_grid. See the documentation of affine_grid for details.")
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return apply(AFFINE_GRID, (theta,), {"size": tuple(size),
                                         "align_corners": bool(align_corners)})

