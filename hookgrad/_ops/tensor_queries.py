"""Questions about a tensor answered with a Python bool: ``is_signed``, ``is_nonzero``,
``is_same_size``, ``is_conj``, ``is_neg``."""
from __future__ import annotations

from .._tensor import Tensor
from .registry import export


@export
def is_signed(input) -> bool:
    """Whether ``input``'s dtype is a signed type (floating, complex, or signed integer)."""
    return bool(input.dtype.is_signed)


@export
def is_nonzero(input) -> bool:
    """Whether the single element of ``input`` is nonzero (``False`` or ``0`` is zero)."""
    n = input.numel()
    if n != 1:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous" if n == 0 else
                           "Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item() != 0)


@export
def is_same_size(input, other: Tensor) -> bool:
    """Whether ``input`` and ``other`` have the same shape."""
    return tuple(input.shape) == tuple(other.shape)


@export
def is_conj(input) -> bool:
    """Whether ``input``'s conjugate bit is set: never, as hookgrad conjugates eagerly."""
    return False


@export
def is_neg(input) -> bool:
    """Whether ``input``'s negative bit is set: never, as hookgrad negates eagerly."""
    return False
