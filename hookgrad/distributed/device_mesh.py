"""``DeviceMesh`` / ``init_device_mesh``: PyTorch's device mesh as a ``jax.sharding.Mesh``.

PyTorch's mesh is an array of ranks (one process per device); a JAX process drives all
its local devices, so hookgrad's mesh is an array of JAX device ids, and ``jax_mesh`` is
the ``Mesh`` that ``hookgrad.compile(step, mesh=...)`` and ``NamedSharding`` take.
"""
from __future__ import annotations

import math
from typing import Any

import jax
import numpy as np
from jax.sharding import AxisType, Mesh

__all__ = ["DeviceMesh", "init_device_mesh"]

_PLATFORM = {"cuda": "gpu", "gpu": "gpu", "cpu": "cpu", "tpu": "tpu"}


def _devices(device_type):
    platform = _PLATFORM.get(device_type)
    if platform is None:
        raise RuntimeError(f"DeviceMesh: unknown device type {device_type!r}; expected one of "
                           f"{sorted(_PLATFORM)}")
    try:
        return jax.devices(platform)
    except RuntimeError as e:
        raise RuntimeError(f"DeviceMesh: JAX has no {device_type!r} devices ({e})") from None


class DeviceMesh:
    """A named, n-dimensional arrangement of devices.

    ::

        DeviceMesh(device_type, mesh, *, mesh_dim_names=None)

    ``mesh``: nested lists (or an array) of JAX device ids of ``device_type``. ``jax_mesh``
    is the ``jax.sharding.Mesh`` (axes named ``mesh_dim_names``, or ``dim_0``, ``dim_1``,
    ...). Pass the DeviceMesh or its ``jax_mesh`` as ``hookgrad.compile``'s ``mesh``.

    Example::

        >>> mesh = DeviceMesh("cpu", [[0, 1, 2, 3], [4, 5, 6, 7]], mesh_dim_names=("dp", "tp"))
        >>> mesh.shape
        (2, 4)
    """

    def __init__(self, device_type: str, mesh: Any, *, mesh_dim_names: tuple[str, ...] | None
                 = None, _init_backend: bool = True) -> None:
        ids = np.asarray(getattr(mesh, "_data", mesh), dtype=np.int64)
        if ids.ndim == 0:
            ids = ids.reshape(1)
        names = tuple(mesh_dim_names) if mesh_dim_names is not None else \
            tuple(f"dim_{i}" for i in range(ids.ndim))
        if len(set(names)) != len(names):
            raise RuntimeError("Each mesh_dim_name must be unique. Found repeated mesh_dim_name "
                               f"in mesh_dim_names {names}")
        if len(names) != ids.ndim:
            raise RuntimeError("mesh_shape and mesh_dim_names should have same length! Found "
                               f"len(mesh_dim_names): {len(names)} and len(mesh_shape):"
                               f"{ids.ndim}.")
        by_id = {d.id: d for d in _devices(device_type)}
        missing = sorted(set(ids.flat) - set(by_id))
        if missing:
            raise RuntimeError(f"DeviceMesh: no {device_type!r} device with id {missing}; JAX "
                               f"has {sorted(by_id)}")
        if len(set(ids.flat)) != ids.size:
            raise RuntimeError(f"DeviceMesh: a device appears twice in {ids.tolist()}")
        self.device_type = device_type
        self.mesh_dim_names = tuple(mesh_dim_names) if mesh_dim_names is not None else None
        self._ids = ids
        devices = np.empty(ids.shape, dtype=object)
        for idx, i in np.ndenumerate(ids):
            devices[idx] = by_id[int(i)]
        self.jax_mesh = Mesh(devices, names, axis_types=(AxisType.Auto,) * ids.ndim)

    @property
    def mesh(self):
        """The device ids, as a Tensor (PyTorch's mesh holds ranks)."""
        from .._tensor import Tensor
        return Tensor._wrap(jax.numpy.asarray(self._ids.astype(np.int32)))

    @property
    def ndim(self) -> int:
        return self._ids.ndim

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._ids.shape)

    def size(self, mesh_dim: int | None = None) -> int:
        """The number of devices, or along dimension ``mesh_dim``."""
        return self._ids.size if mesh_dim is None else self._ids.shape[mesh_dim]

    def get_rank(self) -> int:
        """This process's rank (``jax.process_index()``)."""
        return jax.process_index()

    def __getitem__(self, names: str | tuple[str, ...]) -> DeviceMesh:
        """The sub-mesh along the named dimension(s) through this process's first device."""
        names = (names,) if isinstance(names, str) else tuple(names)
        axes = self.jax_mesh.axis_names
        for n in names:
            if n not in axes:
                raise KeyError(f"Invalid mesh_dim_name {n!r} specified. Valid mesh_dim_names are "
                               f"{axes}.")
        local = {d.id for d in jax.local_devices()}
        hits = np.argwhere(np.isin(self._ids, list(local)))
        at = hits[0] if len(hits) else np.zeros(self.ndim, dtype=int)
        index = tuple(slice(None) if a in names else int(at[i]) for i, a in enumerate(axes))
        sub = np.transpose(self._ids[index] if self.ndim > 1 else self._ids,
                           [[a for a in axes if a in names].index(n) for n in names])
        return DeviceMesh(self.device_type, sub, mesh_dim_names=names)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, DeviceMesh) and self.device_type == other.device_type and
                self.jax_mesh.axis_names == other.jax_mesh.axis_names and
                np.array_equal(self._ids, other._ids))

    def __hash__(self) -> int:
        return hash((self.device_type, self.jax_mesh.axis_names, self._ids.tobytes()))

    def __repr__(self) -> str:
        names = f", mesh_dim_names={self.mesh_dim_names}" if self.mesh_dim_names else ""
        return f"DeviceMesh('{self.device_type}', {self._ids.tolist()}{names})"


def init_device_mesh(device_type: str, mesh_shape: tuple[int, ...], *,
                     mesh_dim_names: tuple[str, ...] | None = None,
                     backend_override: Any = None) -> DeviceMesh:
    """A :class:`DeviceMesh` over all of JAX's ``device_type`` devices (every process's),
    laid out by ``jax.make_mesh`` (topology-aware on GPUs and TPUs).

    ::

        init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None,
                         backend_override=None)

    Example::

        >>> mesh = init_device_mesh("cuda", (2, 4), mesh_dim_names=("dp", "tp"))
        >>> step = hookgrad.compile(step, mesh=mesh, in_shardings=P("dp"))
    """
    shape = tuple(int(s) for s in mesh_shape)
    if mesh_dim_names is not None:
        if len(set(mesh_dim_names)) != len(mesh_dim_names):
            raise RuntimeError("Each mesh_dim_name must be unique. Found repeated mesh_dim_name "
                               f"in mesh_dim_names {tuple(mesh_dim_names)}")
        if len(shape) != len(mesh_dim_names):
            raise RuntimeError("mesh_shape and mesh_dim_names should have same length! Found "
                               f"len(mesh_dim_names): {len(mesh_dim_names)} and len(mesh_shape):"
                               f"{len(shape)}.")
    if device_type and not device_type.isalpha():
        raise RuntimeError(f"Device type with index is not supported but got {device_type}. "
                           "If you maintained a 'torch.device' object, it's recommended to pass "
                           "in 'device.type'.")
    devices = _devices(device_type)
    if math.prod(shape) != len(devices):
        raise RuntimeError(f"init_device_mesh: mesh_shape {shape} holds {math.prod(shape)} "
                           f"devices but JAX has {len(devices)} {device_type!r} device(s); the "
                           "mesh must use them all (on CPU, XLA_FLAGS="
                           "--xla_force_host_platform_device_count=N simulates N)")
    names = tuple(mesh_dim_names) if mesh_dim_names is not None else \
        tuple(f"dim_{i}" for i in range(len(shape)))
    try:
        jm = jax.make_mesh(shape, names, axis_types=(AxisType.Auto,) * len(shape),
                           devices=devices)
        ids = np.vectorize(lambda d: d.id, otypes=[np.int64])(jm.devices)
    except (ValueError, NotImplementedError, AssertionError):
        ids = np.array([d.id for d in devices]).reshape(shape)
    return DeviceMesh(device_type, ids, mesh_dim_names=mesh_dim_names)


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
