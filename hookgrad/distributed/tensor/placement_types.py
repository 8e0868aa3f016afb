"""PyTorch's DTensor placements, ``Shard(dim)``, ``Replicate()`` and ``Partial()``, and their
translation to and from a ``jax.sharding.PartitionSpec``."""
from __future__ import annotations

from typing import Any

from jax.sharding import NamedSharding, PartitionSpec

__all__ = ["Placement", "Shard", "Replicate", "Partial"]


class Placement:
    """How a Tensor lies along one dimension of a device mesh."""

    def is_shard(self, dim: int | None = None) -> bool:
        return False

    def is_replicate(self) -> bool:
        return False

    def is_partial(self, reduce_op: str | None = None) -> bool:
        return False


class Shard(Placement):
    """Split along tensor dimension ``dim`` over the mesh dimension: ``Shard(dim)``."""

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def is_shard(self, dim: int | None = None) -> bool:
        return dim is None or dim == self.dim

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Shard) and other.dim == self.dim

    def __hash__(self) -> int:
        return hash(("Shard", self.dim))

    def __repr__(self) -> str:
        return f"Shard(dim={self.dim})"

    def __str__(self) -> str:
        return f"S({self.dim})"


class Replicate(Placement):
    """The whole Tensor on every device of the mesh dimension: ``Replicate()``."""

    def is_replicate(self) -> bool:
        return True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Replicate)

    def __hash__(self) -> int:
        return hash("Replicate")

    def __repr__(self) -> str:
        return "Replicate()"

    def __str__(self) -> str:
        return "R"


class Partial(Placement):
    """Pending reduction over the mesh dimension: ``Partial(reduce_op="sum")``. A JAX array
    holds one global value: a ``Partial`` DTensor's array holds the reduced value,
    replicated over that mesh dimension."""

    def __init__(self, reduce_op: str = "sum") -> None:
        self.reduce_op = reduce_op

    def is_partial(self, reduce_op: str | None = None) -> bool:
        return reduce_op is None or reduce_op == self.reduce_op

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Partial) and other.reduce_op == self.reduce_op

    def __hash__(self) -> int:
        return hash(("Partial", self.reduce_op))

    def __repr__(self) -> str:
        return f"Partial({self.reduce_op})"

    def __str__(self) -> str:
        return f"P({self.reduce_op})"


def to_spec(placements: Any, ndim: int, axis_names: tuple[str, ...]) -> PartitionSpec:
    """The ``PartitionSpec`` of ``placements`` (one per mesh axis) for an ``ndim``-D array;
    several mesh axes sharding one dimension split it in mesh order. A ``Partial`` axis
    holds the reduced value, replicated (a JAX array holds one global value)."""
    entries: list[list[str]] = [[] for _ in range(ndim)]
    for i, (p, axis) in enumerate(zip(placements, axis_names)):
        if isinstance(p, Shard):
            d = p.dim + ndim if p.dim < 0 else p.dim
            if not 0 <= d < ndim:
                raise IndexError(f"Shard({p.dim}) at placements[{i}]: dimension out of range "
                                 f"for a tensor of {ndim} dimension(s)")
            entries[d].append(axis)
        elif not isinstance(p, (Replicate, Partial)):
            raise TypeError(f"placements[{i}]: expected Shard, Replicate or Partial, got "
                            f"{type(p).__name__}")
    return PartitionSpec(*[None if not e else e[0] if len(e) == 1 else tuple(e)
                           for e in entries])


def of_array(arr: Any) -> tuple[Placement, ...] | None:
    """The placements of ``arr`` along its mesh's axes, if it lies on a mesh."""
    sharding = getattr(arr, "sharding", None)
    if not isinstance(sharding, NamedSharding):
        return None
    by_axis: dict[str, Placement] = {}
    for d, entry in enumerate(sharding.spec):
        for ax in (() if entry is None else (entry,) if isinstance(entry, str) else entry):
            by_axis[ax] = Shard(d)
    return tuple(by_axis.get(ax, Replicate()) for ax in sharding.mesh.axis_names)


from ... import _missing as _m  # noqa: E402

# a shard of a shard (FSDP over tensor parallelism): JAX's shardings have no such
# placement, so none is ever made; the class is there for isinstance checks
_StridedShard = _m.not_implemented_class("torch.distributed.tensor.placement_types._StridedShard",
                                         (Shard,))
__getattr__ = _m.module_getattr(__name__)
