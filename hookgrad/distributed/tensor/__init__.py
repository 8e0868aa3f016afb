"""``hookgrad.distributed.tensor``: PyTorch's DTensor entry points, thin over ``NamedSharding``.

A hookgrad Tensor may hold a sharded ``jax.Array``: :func:`distribute_tensor` places one on
a device mesh as ``Shard(dim)`` / ``Replicate()`` placements say, and eager ops and
backward run on it where its shards are (JAX's computation follows the data; XLA inserts
the collectives). ``Tensor.placements`` reads the placements back. There is no DTensor
class: the Tensor is an ordinary one whose array is global, so ``Partial`` does not occur.
"""
from __future__ import annotations

from typing import Any, Sequence

import jax
from jax.sharding import NamedSharding

from ..._tensor import PLACEMENTS, Tensor
from ..device_mesh import DeviceMesh
from ._api import DTensor
from .placement_types import Partial, Placement, Replicate, Shard, of_array, to_spec

__all__ = ["DTensor", "distribute_tensor", "Placement", "Shard", "Replicate", "Partial"]

PLACEMENTS[0] = of_array


def _default_mesh():
    from ..device_mesh import init_device_mesh
    kind = "cuda" if jax.default_backend() == "gpu" else jax.default_backend()
    return init_device_mesh(kind, (len(jax.devices()),))


def distribute_tensor(tensor: Tensor, device_mesh: DeviceMesh | None = None,
                      placements: Sequence[Placement] | None = None, *,
                      src_data_rank: int | None = 0) -> Tensor:
    """A leaf Tensor with ``tensor``'s values laid out on ``device_mesh`` by ``placements``.

    ::

        distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0)

    ``device_mesh``: a ``DeviceMesh`` or ``jax.sharding.Mesh`` (default: all devices, 1-D);
    ``placements``: one ``Shard(dim)`` or ``Replicate()`` per mesh dimension (default:
    replicated). The result ``requires_grad`` as ``tensor`` does; its ``placements`` and
    those of what ops compute from it say how it is split.

    Example::

        >>> mesh = init_device_mesh("cuda", (2, 4), mesh_dim_names=("dp", "tp"))
        >>> x = distribute_tensor(hookgrad.randn(8, 16), mesh, [Shard(0), Replicate()])
        >>> x.placements
        (Shard(dim=0), Replicate())
    """
    from ..._compile.sharding import auto_mesh, check_fits
    if not isinstance(tensor, Tensor):
        raise TypeError(f"distribute_tensor(): argument 'tensor' must be a Tensor, got "
                        f"{type(tensor).__name__}")
    if not tensor.is_leaf:
        raise RuntimeError("`distribute_tensor` should be used to distribute leaf tensors! but "
                           "found non-leaf tensor!")
    mesh = _default_mesh() if device_mesh is None else device_mesh
    jm = auto_mesh(getattr(mesh, "jax_mesh", mesh), "device_mesh")
    ndim = len(jm.axis_names)
    placements = [Replicate()] * ndim if placements is None else list(placements)
    if len(placements) != ndim:
        raise ValueError("`placements` must have the same length as `device_mesh.ndim`! Found "
                         f"placements length: {len(placements)}, and device_mesh.ndim: "
                         f"{ndim}.")
    spec = to_spec(placements, tensor.ndim, jm.axis_names)
    check_fits(tuple(tensor.shape), spec, jm, "distribute_tensor(): argument 'tensor'")
    out = Tensor._wrap(jax.device_put(tensor.detach()._data, NamedSharding(jm, spec)))
    if tensor.requires_grad:
        out.requires_grad_(True)
    return out


from ... import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
