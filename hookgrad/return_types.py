"""Named-tuple results of ops that return several tensors (``hookgrad.return_types.max``)."""
from ._ops.reduction import return_types as _types

max = _types["max"]  # noqa: A001 - PyTorch's names
min = _types["min"]  # noqa: A001

__all__ = ["max", "min"]
