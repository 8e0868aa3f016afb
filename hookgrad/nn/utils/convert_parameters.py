"""``parameters_to_vector`` and ``vector_to_parameters``."""
from __future__ import annotations

from collections.abc import Iterable

from ..._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Flattens ``parameters`` into one 1-D Tensor (recorded: gradients flow back)."""
    from ..._ops.stacking import cat
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copies consecutive slices of the 1-D ``vec`` into ``parameters`` (their ``.data``)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[pointer:pointer + n].view_as(p).data
        pointer += n


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
