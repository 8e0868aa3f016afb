"""``hookgrad.distributed.tensor``: PyTorch's DTensor, thin over ``NamedSharding``.

A :class:`DTensor` holds a global ``jax.Array`` laid out on a device mesh as its
``Shard(dim)`` / ``Replicate()`` / ``Partial()`` placements say; eager ops and backward run
on it where its shards are (JAX's computation follows the data; XLA inserts the
collectives) and return DTensors. ``Tensor.placements`` reads the placements of any Tensor
whose array lies on a mesh (a compiled step's sharded state).
"""
from __future__ import annotations

from ..._tensor import PLACEMENTS
from . import _dispatch  # noqa: F401  (fills _api.STAGE)
from ._api import DTensor, distribute_tensor
from ._factories import empty, full, ones, rand, randn, zeros
from ._module import distribute_module
from .placement_types import Partial, Placement, Replicate, Shard, of_array

__all__ = ["DTensor", "distribute_tensor", "distribute_module", "Placement", "Shard",
           "Replicate", "Partial", "ones", "zeros", "empty", "full", "rand", "randn"]

PLACEMENTS[0] = of_array


from ... import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
