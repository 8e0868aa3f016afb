"""``Tensor.sum_to_size``: a tensor summed down to a size it broadcasts from (the
reduction that undoes a broadcast)."""
from __future__ import annotations

from .._tensor import Tensor
from .registry import FUNCTIONS, export
from .shape import _shape_arg


@export(function=False)
def sum_to_size(self, *size) -> Tensor:
    """``sum_to_size(*size)``: ``self`` summed over the dimensions that ``size`` broadcasts
    along (``self`` itself when the sizes are equal); ``size`` must expand to ``self``'s."""
    size = tuple(_shape_arg(size))
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s not in (1, d) for s, d in zip(size, shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    if size == shape:
        return self
    dims = tuple(range(lead)) + tuple(lead + i for i, (s, d) in enumerate(zip(size, shape[lead:]))
                                      if s == 1 and d != 1)
    return FUNCTIONS["sum"](self, dims, keepdim=True).view(size)
