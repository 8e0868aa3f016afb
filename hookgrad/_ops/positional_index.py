"""``Tensor.index(positions, dims)``: functorch.dim's binding of positional dimensions.

With integers for ``dims`` it selects: ``x.index((0, 2), (1, 3))`` is ``x[1, :, 3]``, as
PyTorch's (a ``SelectBackward0`` per position). Binding first-class ``Dim`` objects makes
a functorch.dim Tensor, which hookgrad does not have.
"""
from __future__ import annotations

from .._tensor import Tensor
from .registry import export
from .shape import wrap_dim


@export(function=False)
def index(self, positions, dims) -> Tensor:
    """``index(positions, dims)``: select index ``dims[k]`` along dimension
    ``positions[k]`` (a position and an index, or tuples of them).

    >>> hookgrad.arange(24.).reshape(2, 3, 4).index((0, 2), (1, 3))   # x[1, :, 3]
    tensor([15., 19., 23.])
    """
    positions = tuple(positions) if isinstance(positions, (tuple, list)) else (positions,)
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if len(positions) != len(dims):
        raise TypeError(f"dims ({len(positions)}) and indices ({len(dims)}) must have the same "
                        "length")
    if not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
        raise NotImplementedError(
            "hookgrad does not implement functorch.dim's first-class dimensions yet: "
            "Tensor.index binds integer indices only (x.index(0, 1) is x[1]), not Dim objects")
    where = [slice(None)] * self.dim()
    for p, d in zip(positions, dims):
        where[wrap_dim(p, self.dim())] = d
    return self[tuple(where)]
