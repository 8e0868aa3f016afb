"""``Tensor.name``: PyTorch's read-only name slot of a Tensor, which the Python API never
sets: None on every Tensor (unrelated to named tensors' ``names``)."""
from __future__ import annotations

from .shape import TENSOR_PROPERTIES


def _name(self):
    """``name``: None (a read-only attribute: setting it raises ``AttributeError``)."""
    return None


TENSOR_PROPERTIES["name"] = _name
