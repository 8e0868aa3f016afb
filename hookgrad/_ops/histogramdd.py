"""``torch.histogramdd``: the histogram of points in ``D`` dimensions, as PyTorch computes it
in two steps (the bin edges, then the counts in them), each an op with no derivative."""
from __future__ import annotations

import jax.numpy as jnp

from .._dtype import TORCH_KINDS
from .._tensor import Tensor
from .dispatch import NOT_IMPLEMENTED, apply
from .linalg_decomp import return_type
from .registry import defop, export

histogramdd_result = return_type("histogramdd", ["hist", "bin_edges"])


def _edges_op(x, weight, *, bins, ranges):
    # PyTorch's op takes the input and the weight (for its node's edges; the weight is not
    # read)
    return _bin_edges(x.reshape(-1, x.shape[-1]), bins, ranges)


def _bin_edges(x, bins, ranges):
    edges = []
    for d, b in enumerate(bins):
        if ranges is None:
            lo, hi = (jnp.min(x[:, d]), jnp.max(x[:, d])) if x.shape[0] else (0.0, 0.0)
        else:
            lo, hi = ranges[2 * d], ranges[2 * d + 1]
        lo, hi = jnp.asarray(lo, x.dtype), jnp.asarray(hi, x.dtype)
        same = lo == hi  # an empty extent is widened to one unit, as NumPy's
        edges.append(jnp.linspace(jnp.where(same, lo - 0.5, lo), jnp.where(same, hi + 0.5, hi),
                                  b + 1).astype(x.dtype))
    return tuple(edges)


def _counts(x, weight, *edges, density):
    x = x.reshape(-1, x.shape[-1])  # (the points; a weight of the input's leading shape)
    hist, _ = jnp.histogramdd(x, bins=list(edges),
                              weights=None if weight is None else weight.reshape(-1),
                              density=density)
    return hist.astype(x.dtype)


def _counts_in_bins(x, weight, *, bins, ranges, density):
    # NOTE: the edges computed again in the program: PyTorch's op takes the input and the
    # weight only, so its node links those two (the edges are another op's results)
    return _counts(x, weight, *_bin_edges(x.reshape(-1, x.shape[-1]), bins, ranges),
                   density=density)


def _counts_at_edges(x, *edges_and_weight, density):
    return _counts(x, edges_and_weight[-1], *edges_and_weight[:-1], density=density)


_EDGES = defop("_histogramdd_bin_edges", _edges_op, NOT_IMPLEMENTED, ())
_FROM_COUNTS = defop("_histogramdd_from_bin_cts", _counts_in_bins, NOT_IMPLEMENTED, ())
_FROM_TENSORS = defop("_histogramdd_from_bin_tensors", _counts_at_edges, NOT_IMPLEMENTED, ())


def _check(input, dims, weight, ranges):
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogramdd\" not implemented for "
                                  f"'{TORCH_KINDS[input.dtype.name]}'")
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:-1]):
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the "
                           f"same shape as the input tensor excluding its innermost dimension, "
                           f"but got input with shape {list(input.shape)} and weight with shape "
                           f"{list(weight.shape)}")
    if ranges is not None:
        if len(ranges) != 2 * dims:
            raise RuntimeError(f"torch.histogramdd: for a {dims}-dimensional histogram range "
                               f"should have {2 * dims} elements, but got {len(ranges)}")
        for d in range(dims):
            if ranges[2 * d] > ranges[2 * d + 1]:
                raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                                   f"{ranges[2 * d]:g} max {ranges[2 * d + 1]:g} for dimension "
                                   f"{d}")


@export(method=False)
def histogramdd(input, bins, *, range=None, weight=None, density=False):  # noqa: A002
    """``histogramdd(input, bins, *, range=None, weight=None, density=False)``: the
    histogram of the points in ``input``'s last dimension: ``(hist, bin_edges)``. ``bins``:
    a count for every dimension, one per dimension, or one Tensor of edges per dimension;
    ``range``: ``[min_0, max_0, min_1, ...]`` (the data's extent by default)."""
    dims = input.shape[-1]
    _check(input, dims, weight, range)
    tensor_bins = isinstance(bins, (list, tuple)) and bins and isinstance(bins[0], Tensor)
    if isinstance(bins, int):
        bins = [bins] * dims
    if len(bins) != dims:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    # the node links what PyTorch's op takes, in its order: the input itself, the edges'
    # Tensors (``bins`` as Tensors), the weight
    if tensor_bins:
        edges = tuple(bins)
        hist = apply(_FROM_TENSORS, (input, *edges, weight), {"density": bool(density)})
    else:
        counts = tuple(int(b) for b in bins)
        ranges = None if range is None else tuple(float(r) for r in range)
        edges = apply(_EDGES, (input, weight), {"bins": counts, "ranges": ranges})
        edges = edges if isinstance(edges, tuple) else (edges,)
        hist = apply(_FROM_COUNTS, (input, weight),
                     {"bins": counts, "ranges": ranges, "density": bool(density)})
    return histogramdd_result(hist, tuple(edges))
