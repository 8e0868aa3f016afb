"""``hookgrad.distributed``: PyTorch's process-group entry points on ``jax.distributed``.

hookgrad has no collective or RPC layer of its own. Several processes (one per host, or
one per GPU) form one JAX runtime with ``jax.distributed.initialize``; from then on
``jax.devices()`` lists every process's devices, a ``DeviceMesh`` spans them, and a
sharded ``hookgrad.compile`` step is one SPMD program whose collectives XLA inserts. The functions here map PyTorch's names onto that:

========================  ==============================================================
``init_process_group``    ``jax.distributed.initialize`` (nothing to start for one process)
``get_rank``              ``jax.process_index()``
``get_world_size``        ``jax.process_count()``
``barrier``               ``jax.experimental.multihost_utils.sync_global_devices``
``destroy_process_group`` ``jax.distributed.shutdown``
========================  ==============================================================

A *rank* is a process, as in PyTorch; a process may drive several devices (all the
GPUs of a host, or a TPU host's chips), so ``get_world_size()`` counts processes and
``len(jax.devices())`` devices. See docs/distributed.md.
"""
from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

import jax

from .. import _missing
from ._comm import GradBucket, ReduceOp, Work, all_reduce, hook_world_size
from .device_mesh import DeviceMesh, init_device_mesh
from . import tensor  # noqa: F401  (fills Tensor.placements' slot)

__all__ = ["init_process_group", "is_initialized", "is_available", "get_rank",
           "get_world_size", "barrier", "destroy_process_group", "DeviceMesh",
           "init_device_mesh", "GradBucket", "ReduceOp", "Work", "all_reduce"]

_STATE = {"initialized": False, "started_jax": False}
_NOT_INIT = ("Default process group has not been initialized, please make sure to call "
             "init_process_group.")


def is_available() -> bool:
    """Whether the distributed package is available (always: it is ``jax.distributed``)."""
    return True


def is_initialized() -> bool:
    """Whether :func:`init_process_group` ran (and :func:`destroy_process_group` did not)."""
    return _STATE["initialized"]


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: timedelta | None = None, world_size: int = -1,
                       rank: int = -1, store: Any = None, group_name: str = "",
                       pg_options: Any = None, device_id: Any = None) -> None:
    """Join this process to the others: ``jax.distributed.initialize``.

    ::

        init_process_group(backend=None, init_method=None, timeout=None, world_size=-1,
                           rank=-1, store=None, group_name="", pg_options=None,
                           device_id=None)

    ``init_method`` ``"tcp://HOST:PORT"`` names the coordinator (process 0's address);
    ``"env://"`` or ``None`` reads ``MASTER_ADDR``/``MASTER_PORT``, ``WORLD_SIZE`` and
    ``RANK`` as PyTorch's launchers (``torchrun``) set them. With a world of one process
    nothing is started. ``backend`` ``"gloo"`` (or ``None`` on a CPU-only machine) selects
    JAX's gloo CPU collectives; ``"nccl"`` is what JAX uses on GPUs anyway. Managed
    clusters (TPU pods, SLURM) need no arguments: ``jax.distributed.initialize``
    detects them when no address is given and ``WORLD_SIZE`` is unset.

    Example::

        >>> hookgrad.distributed.init_process_group("gloo", init_method="tcp://10.0.0.1:29500",
        ...                                         world_size=2, rank=0)
    """
    if _STATE["initialized"]:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None:
        raise NotImplementedError("init_process_group(store=...): hookgrad's processes meet "
                                  "through jax.distributed's coordinator; pass init_method="
                                  "'tcp://HOST:PORT' (or MASTER_ADDR/MASTER_PORT) instead")
    address = _coordinator(init_method)
    if world_size == -1 and "WORLD_SIZE" in os.environ:
        world_size = int(os.environ["WORLD_SIZE"])
    if rank == -1 and "RANK" in os.environ:
        rank = int(os.environ["RANK"])
    if world_size not in (-1, 1) or (world_size == -1 and address is None and _cluster()):
        if backend in ("gloo", "cpu:gloo") or (backend is None and
                                                jax.default_backend() == "cpu"):
            jax.config.update("jax_cpu_collectives_implementation", "gloo")
        kw = {}
        if timeout is not None:
            kw["initialization_timeout"] = int(timeout.total_seconds())
        jax.distributed.initialize(
            coordinator_address=address, num_processes=None if world_size == -1 else world_size,
            process_id=None if rank == -1 else rank, **kw)
        _STATE["started_jax"] = True
    elif rank not in (-1, 0):
        raise ValueError(f"init_process_group: rank {rank} is out of range for a world of "
                         "size 1 (expected 0 or -1)")
    _STATE["initialized"] = True


def _coordinator(init_method):
    if init_method is None or init_method == "env://":
        addr, port = os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")
        return f"{addr}:{port}" if addr and port else None
    if init_method.startswith("tcp://"):
        return init_method[len("tcp://"):]
    raise ValueError(f"init_process_group: init_method {init_method!r} is not supported; use "
                     "'tcp://HOST:PORT' or 'env://'")


def _cluster():
    # a cluster jax.distributed detects by itself (SLURM, TPU pods, Open MPI)
    return any(v in os.environ for v in ("SLURM_JOB_ID", "TPU_WORKER_HOSTNAMES",
                                         "OMPI_COMM_WORLD_SIZE"))


def _require():
    if not _STATE["initialized"]:
        raise ValueError(_NOT_INIT)


def get_rank(group: Any = None) -> int:
    """This process's rank, ``jax.process_index()``."""
    _require()
    return jax.process_index()


def get_world_size(group: Any = None) -> int:
    """The number of processes, ``jax.process_count()``; inside a DDP communication hook,
    the number of replicas it reduces over (the devices of the mesh's data axis)."""
    replicas = hook_world_size()
    if replicas is not None:
        return replicas
    _require()
    return jax.process_count()


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None,
            timeout: timedelta | None = None) -> None:
    """Block until every process reaches it (``sync_global_devices``)."""
    _require()
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils
        multihost_utils.sync_global_devices("hookgrad.distributed.barrier")


def destroy_process_group(group: Any = None) -> None:
    """Leave the process group: ``jax.distributed.shutdown()`` if it was started here."""
    _require()
    if _STATE["started_jax"]:
        jax.distributed.shutdown()
        _STATE["started_jax"] = False
    _STATE["initialized"] = False


# point-to-point style collectives on process groups: hookgrad's collectives are XLA's,
# inserted by sharded compiled steps
all_gather_into_tensor = _missing.not_implemented("torch.distributed.all_gather_into_tensor")
all_to_all_single = _missing.not_implemented("torch.distributed.all_to_all_single")
get_process_group_ranks = _missing.not_implemented("torch.distributed.get_process_group_ranks")

from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
