"""``tril_indices`` and ``triu_indices``: the coordinates of a matrix's lower or upper
triangle, as a ``2 x N`` tensor in row-major order."""
from __future__ import annotations

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from .registry import export


def _indices(name, lower, row, col, offset, dtype, device):
    for arg, v in (("row", row), ("col", col)):
        if v < 0:
            raise RuntimeError(f"{arg} must be non-negative, got{v}")
    dtype = _dtype.int64 if dtype is None else dtype
    if dtype.is_floating_point or dtype.is_complex or dtype is _dtype.bool:
        raise NotImplementedError(f"\"{name}\" not implemented for "
                                  f"'{_dtype.torch_kind(dtype.np)}'")
    below = np.tri(row, col, offset if lower else offset - 1, dtype=bool)
    rows, cols = np.nonzero(below if lower else ~below)
    from .._factory import tensor
    return tensor(np.stack([rows, cols]), dtype=dtype, device=device)


@export(method=False)
def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None) -> Tensor:
    """``tril_indices(row, col, offset=0)``: the indices of the lower triangle of a
    ``row x col`` matrix (on and below diagonal ``offset``), as a ``2 x N`` tensor."""
    return _indices("tril_indices", True, row, col, offset, dtype, device)


@export(method=False)
def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None) -> Tensor:
    """``triu_indices(row, col, offset=0)``: the indices of the upper triangle of a
    ``row x col`` matrix (on and above diagonal ``offset``), as a ``2 x N`` tensor."""
    return _indices("triu_indices", False, row, col, offset, dtype, device)
