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


class _OneValue(Placement):
    """A placement that one attribute (``_field``) tells apart from the others of its kind:
    equal to one of its kind with the same value, and printed by filling PyTorch's ``repr``
    and ``str`` (``_formats``) with that value."""
    _field = ""
    _formats = ("", "")
    _kind = None   # the class that declares ``_field``: its subclasses are of its kind

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "_field" in vars(cls):
            cls._kind = cls

    def _value(self):
        return getattr(self, self._field)

    def _has(self, value) -> bool:
        return value is None or value == self._value()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, self._kind) and other._value() == self._value()

    def __hash__(self) -> int:
        return hash((self._kind.__name__, self._value()))

    def __repr__(self) -> str:
        return self._formats[0].format(self._value())

    def __str__(self) -> str:
        return self._formats[1].format(self._value())


class Shard(_OneValue):
    """Split along tensor dimension ``dim`` over the mesh dimension: ``Shard(dim)``."""
    _field, _formats = "dim", ("Shard(dim={})", "S({})")

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def is_shard(self, dim: int | None = None) -> bool:
        return self._has(dim)


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


class Partial(_OneValue):
    """Pending reduction over the mesh dimension: ``Partial(reduce_op="sum")``. A JAX array
    holds one global value: a ``Partial`` DTensor's array holds the reduced value,
    replicated over that mesh dimension."""
    _field, _formats = "reduce_op", ("Partial({})", "P({})")

    def __init__(self, reduce_op: str = "sum") -> None:
        self.reduce_op = reduce_op

    def is_partial(self, reduce_op: str | None = None) -> bool:
        return self._has(reduce_op)


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
