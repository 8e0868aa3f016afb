"""``torch.vander``: the Vandermonde matrix of a vector, built as PyTorch's kernel builds it
(a column of ones, the powers as a running product copied in place, then reversed), so its
graph is PyTorch's (``FlipBackward0 <- CopySlices``), and so is its backward: the copy
modifies what the product saved, and PyTorch's version error is raised."""
from __future__ import annotations

from .. import _dtype
from .._factory import zeros
from .._tensor import Tensor
from .registry import export


@export(method=False)
def vander(x, N=None, increasing=False) -> Tensor:
    """``vander(x, N=None, increasing=False)``: the matrix whose columns are powers of the
    1-D ``x``: ``x ** (N - 1), ..., x, 1`` (ascending when ``increasing``); ``N`` columns
    (``len(x)`` by default). Integer and bool inputs give ``int64``."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0]
    N = n if N is None else int(N)
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = x.dtype if x.dtype.is_floating_point or x.dtype.is_complex else _dtype.int64
    result = zeros((n, N), dtype=dtype)
    if N > 0:
        result[:, 0] = 1
        if N > 1:
            result[:, 1:].copy_(x.unsqueeze(1))
            result[:, 1:].copy_(result[:, 1:].cumprod(1))
    return result if increasing else result.flip(-1)
