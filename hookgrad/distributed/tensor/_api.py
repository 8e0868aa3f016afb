"""``DTensor``: PyTorch's distributed Tensor class, over a ``NamedSharding``-sharded array."""
from __future__ import annotations

from ..._tensor import Tensor

__all__ = ["DTensor"]


class DTensor(Tensor):
    """A Tensor laid out on a device mesh by one placement per mesh dimension.

    ``isinstance(t, DTensor)`` tells a distributed Tensor from a plain one. Build one with
    :func:`distribute_tensor` or ``DTensor.from_local``.
    """

    def __init__(self, *args, **kwargs):
        raise RuntimeError("hookgrad does not implement torch.distributed.tensor.DTensor(...) "
                           "yet (see docs/api_coverage.md for what it covers)")
