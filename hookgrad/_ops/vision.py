"""torchvision's detection kernels in JAX: non-maximum suppression and RoIAlign.

hookgrad defines ``torchvision::nms``, ``torchvision::roi_align`` and
``torchvision::_roi_align_backward`` over these (``hookgrad._extensions.torchvision``),
in place of torchvision's C++ extension, which is built for PyTorch and cannot load.
The semantics are torchvision's CPU kernels':

- ``nms``: boxes ``(x1, y1, x2, y2)``, visited by decreasing score (ties in index order);
  a box is kept unless a kept box with a higher score overlaps it with IoU above the
  threshold. Returns the kept indices (int64) by decreasing score.
- ``roi_align``: each RoI ``(batch_index, x1, y1, x2, y2)`` is scaled by
  ``spatial_scale`` (and shifted by -0.5 pixel when ``aligned``), split into
  ``pooled_height x pooled_width`` bins, and each bin averages ``grid_h x grid_w``
  bilinear samples at the centres of a regular grid (``sampling_ratio``, or
  ``ceil(roi_size / pooled_size)`` per RoI when it is <= 0); samples more than one pixel
  outside the feature map count as 0.

Bilinear sampling is separable, so a bin's average is ``Wy @ F @ Wx^T`` with ``Wy``
(``Wx``) the averaged interpolation weights over rows (columns): one einsum per RoI
batch, and its gradient (the backward kernel) is JAX's vjp of it.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from .dispatch import apply
from .indexing import _is_concrete
from .registry import defop

_LONG = np.int64


def _nms_keep(boxes, scores, *, iou_threshold):
    """(order, keep): box indices by decreasing score, and which of them are kept."""
    order = jnp.argsort(-scores, stable=True)
    b = boxes[order]
    x1, y1, x2, y2 = (b[:, i] for i in range(4))
    area = (x2 - x1) * (y2 - y1)
    w = jnp.maximum(jnp.minimum(x2[:, None], x2[None]) - jnp.maximum(x1[:, None], x1[None]), 0)
    h = jnp.maximum(jnp.minimum(y2[:, None], y2[None]) - jnp.maximum(y1[:, None], y1[None]), 0)
    inter = w * h
    overlaps = inter / (area[:, None] + area[None] - inter) > iou_threshold
    n = boxes.shape[0]
    later = jnp.arange(n)[None] > jnp.arange(n)[:, None]
    suppresses = overlaps & later

    def visit(i, removed):  # box i, if not removed, removes the later boxes it overlaps
        return removed | (suppresses[i] & ~removed[i])

    removed = jax.lax.fori_loop(0, n, visit, jnp.zeros(n, bool))
    return order, ~removed


NMS = defop("nms", _nms_keep, None)


def nms(boxes: Tensor, scores: Tensor, iou_threshold: float) -> Tensor:
    """Indices (int64) of the boxes kept by non-maximum suppression, by decreasing score."""
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise RuntimeError(f"boxes should be a 2d tensor with 4 elements in dimension 1 "
                           f"(x1, y1, x2, y2), got shape {list(boxes.shape)}")
    if scores.ndim != 1 or scores.shape[0] != boxes.shape[0]:
        raise RuntimeError("boxes and scores should have same number of elements in dimension "
                           f"0, got {boxes.shape[0]} and {list(scores.shape)}")
    if boxes.shape[0] == 0:
        return Tensor._wrap(jnp.zeros(0, _LONG))
    order, keep = apply(NMS, (boxes, scores), {"iou_threshold": float(iou_threshold)})
    if not _is_concrete(keep._data):
        raise RuntimeError("nms: the number of kept boxes depends on the data, so it cannot "
                           "be traced (hookgrad.compile, jax.jit); call it eagerly")
    kept = np.asarray(order._data)[np.asarray(keep._data)]
    return Tensor._wrap(jnp.asarray(kept, _LONG))


def _axis_weights(start, bin_size, grid, pooled, n_grid, size):
    """``(K, pooled, size)``: per RoI, the weight of each row (column) of the feature map
    in each bin's average of bilinear samples along that axis (samples of the grid past
    the RoI's own count masked)."""
    g = jnp.arange(n_grid)
    p = jnp.arange(pooled)
    gsz = grid[:, None, None].astype(start.dtype)
    pos = (start[:, None, None] + p[None, :, None] * bin_size[:, None, None]
           + (g[None, None, :] + 0.5) * bin_size[:, None, None] / jnp.maximum(gsz, 1))
    inside = (pos >= -1.0) & (pos <= size) & (g[None, None, :] < grid[:, None, None])
    pos = jnp.maximum(pos, 0)
    low = jnp.floor(pos).astype(jnp.int32)
    at_edge = low >= size - 1
    low = jnp.where(at_edge, size - 1, low)
    high = jnp.where(at_edge, size - 1, low + 1)
    frac = jnp.where(at_edge, 0.0, pos - low).astype(start.dtype)
    rows = jnp.arange(size)
    w = ((1 - frac)[..., None] * (rows == low[..., None])
         + frac[..., None] * (rows == high[..., None]))       # (K, pooled, n_grid, size)
    return jnp.where(inside[..., None], w, 0).sum(axis=2)


def _roi_geometry(rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
    """Per RoI: batch index, starts, bin sizes and sample-grid counts along y and x."""
    offset = 0.5 if aligned else 0.0
    x1, y1, x2, y2 = (rois[:, i] * spatial_scale - offset for i in range(1, 5))
    rw, rh = x2 - x1, y2 - y1
    if not aligned:  # legacy: RoIs are at least 1x1
        rw, rh = jnp.maximum(rw, 1.0), jnp.maximum(rh, 1.0)
    bh, bw = rh / pooled_height, rw / pooled_width
    if sampling_ratio > 0:
        gh = gw = jnp.full(rois.shape[:1], sampling_ratio, jnp.int32)
    else:
        gh, gw = jnp.ceil(bh).astype(jnp.int32), jnp.ceil(bw).astype(jnp.int32)
    return rois[:, 0].astype(jnp.int32), (y1, bh, gh), (x1, bw, gw)


def _roi_align(input, rois, *, spatial_scale, pooled_height, pooled_width, sampling_ratio,
               aligned, grid):
    batch, y, x = _roi_geometry(rois, spatial_scale, pooled_height, pooled_width,
                                sampling_ratio, aligned)
    wy = _axis_weights(*y, pooled_height, grid[0], input.shape[2])
    wx = _axis_weights(*x, pooled_width, grid[1], input.shape[3])
    count = jnp.maximum(y[2] * x[2], 1).astype(input.dtype)
    out = jnp.einsum("kph,kchw,kqw->kcpq", wy.astype(input.dtype), input[batch],
                     wx.astype(input.dtype))
    return out / count[:, None, None, None]


def _roi_align_backward(grad, rois, *, batch_size, channels, height, width, **geometry):
    # RoIAlign is linear in the input: its vjp at zeros is the gradient anywhere
    zeros = jnp.zeros((batch_size, channels, height, width), grad.dtype)
    _, vjp = jax.vjp(lambda f: _roi_align(f, rois, **geometry), zeros)
    return vjp(grad)[0]


ROI_ALIGN = defop("roi_align", _roi_align, None)
ROI_ALIGN_BACKWARD = defop("roi_align_backward", _roi_align_backward, None)


def _grid_bound(rois, pooled_height, pooled_width, spatial_scale, sampling_ratio, aligned):
    """The static sample-grid size along y and x: ``sampling_ratio``, or (adaptive) the
    largest per-RoI count, which needs the RoIs' values."""
    if sampling_ratio > 0:
        return (int(sampling_ratio),) * 2
    if rois.shape[0] == 0:
        return 1, 1
    if not _is_concrete(rois._data):
        raise RuntimeError("roi_align: with sampling_ratio <= 0 the number of samples per bin "
                           "depends on the RoIs' sizes, so it cannot be traced (hookgrad."
                           "compile, jax.jit); pass sampling_ratio > 0, or call it eagerly")
    _, y, x = _roi_geometry(np.asarray(rois._data, np.float64), spatial_scale, pooled_height,
                            pooled_width, sampling_ratio, aligned)
    return max(int(np.max(y[2])), 1), max(int(np.max(x[2])), 1)


def _check_rois(input, rois, name):
    if rois.ndim != 2 or rois.shape[1] != 5:
        raise RuntimeError(f"{name}: rois must have shape as Tensor[K, 5], got "
                           f"{list(rois.shape)}")
    if input.dtype != rois.dtype:
        raise RuntimeError(f"Expected tensor for input to have the same type as tensor for "
                           f"rois; but type {input.dtype} does not equal {rois.dtype}")


def _geometry(rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
    grid = _grid_bound(rois, pooled_height, pooled_width, spatial_scale, sampling_ratio,
                       aligned)
    return {"spatial_scale": float(spatial_scale), "pooled_height": int(pooled_height),
            "pooled_width": int(pooled_width), "sampling_ratio": int(sampling_ratio),
            "aligned": bool(aligned), "grid": grid}


def roi_align(input: Tensor, rois: Tensor, spatial_scale: float, pooled_height: int,
              pooled_width: int, sampling_ratio: int, aligned: bool) -> Tensor:
    """RoIAlign of ``input`` ``(N, C, H, W)`` over ``rois`` ``(K, 5)``:
    ``(K, C, pooled_height, pooled_width)``."""
    _check_rois(input, rois, "roi_align")
    if input.ndim != 4:
        raise RuntimeError(f"roi_align: expected a 4D input (N, C, H, W), got "
                           f"{list(input.shape)}")
    return apply(ROI_ALIGN, (input, rois), _geometry(rois, spatial_scale, pooled_height,
                                                     pooled_width, sampling_ratio, aligned))


def roi_align_backward(grad: Tensor, rois: Tensor, spatial_scale: float, pooled_height: int,
                       pooled_width: int, batch_size: int, channels: int, height: int,
                       width: int, sampling_ratio: int, aligned: bool) -> Tensor:
    """The gradient of :func:`roi_align` with respect to its input
    ``(batch_size, channels, height, width)``, given ``grad`` of its output."""
    _check_rois(grad, rois, "_roi_align_backward")
    statics = _geometry(rois, spatial_scale, pooled_height, pooled_width, sampling_ratio,
                        aligned)
    statics.update(batch_size=int(batch_size), channels=int(channels), height=int(height),
                   width=int(width))
    return apply(ROI_ALIGN_BACKWARD, (grad, rois), statics)
