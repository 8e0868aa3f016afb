"""``fully_shard``: FSDP's parameter sharding as a rule set of a sharded compiled step.

PyTorch's FSDP2 (``fully_shard``) shards each parameter's first dimension over the
data-parallel ranks, all-gathers it for the forward and backward and reduce-scatters
its gradient. Under ``hookgrad.compile`` that is a sharding of the state: every
parameter, its ``.grad`` and its optimizer state split over the mesh's data axis, and XLA
inserts the all-gathers and reduce-scatters. :func:`fsdp_rules` is that rule set (for
``compile(param_shardings=...)``); :func:`fully_shard` attaches it to a Module, so any
compiled step running the Module uses it.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import jax
from jax.sharding import PartitionSpec

from .. import _missing
from .._compile import sharding as _sharding
from . import _fsdp_processes

__all__ = ["fully_shard", "fsdp_rules", "OffloadPolicy", "CPUOffloadPolicy",
           "MixedPrecisionPolicy", "FullyShardedDataParallel"]


def _jax_mesh(mesh):
    return getattr(mesh, "jax_mesh", mesh)


def fsdp_rules(mesh: Any, axis: str = "data") -> Callable[[str, Any], PartitionSpec]:
    """``param_shardings`` sharding every parameter over ``axis``: along its first
    dimension whose size the axis divides (FSDP pads instead; XLA needs even shards),
    replicated if none does.

    Example::

        >>> step = hookgrad.compile(step, mesh=mesh, in_shardings=P("data"),
        ...                         param_shardings=fsdp_rules(mesh, "data"))
    """
    mesh = _sharding.auto_mesh(_jax_mesh(mesh))
    if axis not in mesh.axis_names:
        raise ValueError(f"fsdp_rules: {axis!r} is not an axis of the mesh (axes "
                         f"{tuple(mesh.axis_names)})")
    n = mesh.shape[axis]

    def rule(name, tensor):
        for d, size in enumerate(tensor.shape):
            if size % n == 0:
                return PartitionSpec(*([None] * d), axis)
        return None
    return rule


def _mesh_processes(mesh):
    """The processes a ``fully_shard`` mesh spans in a job of several (default: all)."""
    if mesh is None:
        return tuple(range(jax.process_count()))
    jm = _jax_mesh(mesh)
    if jm.devices.ndim != 1:
        raise NotImplementedError(
            "hookgrad does not implement torch.distributed.fsdp.fully_shard over a "
            f"{jm.devices.ndim}-D mesh across processes yet (HSDP): pass a 1-D mesh")
    return tuple(sorted({d.process_index for d in jm.devices.flat}))


def fully_shard(module: Any, *, mesh: Any = None, batch_axis: str | None = "data",
                reshard_after_forward: bool = True, **kwargs: Any) -> Any:
    """Shard ``module``'s parameters (and their ``.grad`` and optimizer state) over the
    mesh's ``batch_axis`` in every compiled step that runs it; the step's array
    arguments are split over that axis along their first dimension. Returns ``module``.

    ::

        fully_shard(module, *, mesh=None, batch_axis="data", reshard_after_forward=True)

    ``mesh``: a ``DeviceMesh`` or ``jax.sharding.Mesh`` (default: a 1-D mesh named
    ``batch_axis`` over all devices). ``reshard_after_forward`` and PyTorch's other
    options are accepted; XLA decides when gathered parameters are freed.

    In a job of several processes (``init_process_group``) it is PyTorch's FSDP2 between
    them: each process keeps its rows of every parameter (dimension 0 split as
    ``torch.chunk`` splits it) as the module's parameters, gathers them for the forward
    and gets the processes' averaged gradient for its rows; each process runs the module
    on its own batch, eagerly or in compiled steps. The parameters are those shards (plain
    Tensors, not DTensors): ``get_model_state_dict(model,
    options=StateDictOptions(full_state_dict=True))`` gathers the full ones.

    Example::

        >>> fully_shard(model, mesh=init_device_mesh("cuda", (8,), mesh_dim_names=("data",)))
        >>> step = hookgrad.compile(step)   # runs model: sharded FSDP-style
    """
    from . import is_initialized
    if is_initialized() and jax.process_count() > 1:
        return _fsdp_processes.shard_module(module, _mesh_processes(mesh))
    if mesh is None:
        from .device_mesh import init_device_mesh
        mesh = init_device_mesh(jax.default_backend().replace("gpu", "cuda"),
                                (len(jax.devices()),), mesh_dim_names=(batch_axis,))
    jm = _jax_mesh(mesh)
    setattr(module, _sharding.MODULE_ATTR, _sharding.Config(
        jm, param_shardings=fsdp_rules(jm, batch_axis), batch_axis=batch_axis,
        source="fully_shard"))
    return module


@dataclasses.dataclass(frozen=True)
class MixedPrecisionPolicy:
    """FSDP2's dtypes for parameters in forward/backward, gradient reduction and outputs
    (None: keep the parameter's dtype)."""
    param_dtype: Any = None
    reduce_dtype: Any = None
    output_dtype: Any = None
    cast_forward_inputs: bool = True


@dataclasses.dataclass
class OffloadPolicy:
    """FSDP2's base offload policy: no offloading."""


@dataclasses.dataclass
class CPUOffloadPolicy(OffloadPolicy):
    """FSDP2's policy keeping sharded parameters in host memory between uses."""
    pin_memory: bool = True


# FSDP1's wrapper class: hookgrad shards through fully_shard and compiled steps instead
FullyShardedDataParallel = _missing.not_implemented_class(
    "torch.distributed.fsdp.FullyShardedDataParallel")

__getattr__ = _missing.module_getattr(__name__)
