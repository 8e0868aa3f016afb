"""``hookgrad.distributed``: PyTorch's process-group entry points on ``jax.distributed``.

hookgrad has no collective or RPC layer of its own. Several processes (one per host, or
one per GPU) form one JAX runtime with ``jax.distributed.initialize``; from then on
``jax.devices()`` lists every process's devices, a ``DeviceMesh`` spans them, and a
sharded ``hookgrad.compile`` step is one SPMD program whose collectives XLA inserts, and
the collectives here exchange Tensors between processes as PyTorch's do. The functions map
PyTorch's names onto that:

========================  ==============================================================
``init_process_group``    ``jax.distributed.initialize`` (nothing to start for one process)
``get_rank``              ``jax.process_index()``
``get_world_size``        ``jax.process_count()``
``barrier``               a one-element ``all_reduce`` (every process must join it)
``destroy_process_group`` ``jax.distributed.shutdown``
``all_reduce`` & co.      a jitted exchange over one device per process (``_collectives``)
========================  ==============================================================

``init_process_group`` must run before anything starts JAX's backends (making an array,
``jax.devices()``); ``import hookgrad`` starts none.

A *rank* is a process, as in PyTorch; a process may drive several devices (all the
GPUs of a host, or a TPU host's chips), so ``get_world_size()`` counts processes and
``len(jax.devices())`` devices. See docs/distributed.md.
"""
from __future__ import annotations

import os
import socket
from datetime import timedelta
from typing import Any

import jax

from .. import _backend_start
from . import _between_processes, _point_to_point
from ._all_to_all import all_to_all, all_to_all_single
from ._collectives import (ProcessGroup, all_gather, all_gather_into_tensor, all_reduce,
                           broadcast, gather, get_process_group_ranks, group, new_group,
                           reduce, reduce_scatter, reduce_scatter_tensor, scatter)
from ._collectives import _STATE as _GROUP, require as _require, resolve as _resolve
from ._comm import GradBucket, ReduceOp, Work, hook_world_size
from ._object_collectives import (all_gather_object, broadcast_object_list, gather_object,
                                  scatter_object_list)
from ._point_to_point import irecv, isend, recv, send
from .device_mesh import DeviceMesh, init_device_mesh
from . import tensor  # noqa: F401  (fills Tensor.placements' slot)

__all__ = ["init_process_group", "is_initialized", "is_available", "get_rank",
           "get_world_size", "get_backend", "barrier", "destroy_process_group", "DeviceMesh",
           "init_device_mesh", "GradBucket", "ReduceOp", "Work", "ProcessGroup", "group",
           "new_group", "get_process_group_ranks", "all_reduce", "reduce", "all_gather",
           "all_gather_into_tensor", "broadcast", "reduce_scatter", "reduce_scatter_tensor",
           "gather", "scatter", "all_to_all", "all_to_all_single", "send", "recv", "isend",
           "irecv", "all_gather_object", "broadcast_object_list", "gather_object",
           "scatter_object_list", "is_gloo_available",
           "is_nccl_available", "is_mpi_available", "is_torchelastic_launched",
           "get_node_local_rank"]

_STATE = {"started_jax": False, "backend": None}
# PyTorch's backend names -> JAX's CPU collectives (GPUs and TPUs use their own: NCCL, ICI)
_CPU_COLLECTIVES = {None: "gloo", "gloo": "gloo", "cpu:gloo": "gloo", "nccl": "gloo",
                    "cuda:nccl": "gloo", "cpu:gloo,cuda:nccl": "gloo"}


def is_available() -> bool:
    """Whether the distributed package is available (always: it is ``jax.distributed``)."""
    return True


def is_gloo_available() -> bool:
    """Whether the ``gloo`` backend is available: JAX's CPU collectives (always)."""
    return True


def is_nccl_available() -> bool:
    """Whether the ``nccl`` backend is available: JAX's GPU collectives, with a GPU
    (answered without starting JAX's backends on a machine without one)."""
    from .. import cuda
    return cuda.is_available()


def is_mpi_available() -> bool:
    """Whether the ``mpi`` backend is available (hookgrad does not build one: False)."""
    return False


def is_torchelastic_launched() -> bool:
    """Whether this process was started by ``torchrun`` or
    ``python -m hookgrad.distributed.run`` (``TORCHELASTIC_RUN_ID`` is set)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    """This process's rank on its node: ``LOCAL_RANK`` as launchers set it, else
    ``fallback_rank``."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank "
                       "to allow `get_node_local_rank` to work, assuming you are not running "
                       "in a multi-device context and want the code to run locally instead.")


def is_initialized() -> bool:
    """Whether :func:`init_process_group` ran (and :func:`destroy_process_group` did not)."""
    return _GROUP["initialized"]


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
    ``"env://"`` or ``None`` reads ``MASTER_ADDR``/``MASTER_PORT``, ``WORLD_SIZE``,
    ``RANK`` and ``LOCAL_RANK`` as PyTorch's launchers (``torchrun``,
    ``python -m hookgrad.distributed.run``) set them. With a world of one process nothing
    is started. ``backend`` ``"gloo"``, ``"nccl"`` or None: CPUs exchange through JAX's gloo
    collectives, GPUs through NCCL, TPUs through their interconnect. With ``"nccl"`` and
    ``LOCAL_RANK`` set (or ``device_id``), the process drives that one GPU, as a
    ``torchrun`` script's ``torch.cuda.set_device(local_rank)`` does. Managed clusters
    (SLURM, TPU pods, Open MPI) need no arguments: ``jax.distributed.initialize`` detects
    them when no address is given and ``WORLD_SIZE`` is unset.

    It must run before anything starts JAX's backends (an array made, ``jax.devices()``
    asked): otherwise it raises, naming the line that did.

    Example::

        >>> hookgrad.distributed.init_process_group("gloo", init_method="tcp://10.0.0.1:29500",
        ...                                         world_size=2, rank=0)
    """
    if _GROUP["initialized"]:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None:
        raise NotImplementedError("init_process_group(store=...): hookgrad's processes meet "
                                  "through jax.distributed's coordinator; pass init_method="
                                  "'tcp://HOST:PORT' (or MASTER_ADDR/MASTER_PORT) instead")
    if backend is not None and str(backend).lower() not in _CPU_COLLECTIVES:
        raise ValueError(f"Invalid backend: '{backend}' (expected one of 'gloo', 'nccl', "
                         "'cpu:gloo,cuda:nccl' or None)")
    address = _coordinator(init_method)
    if world_size == -1 and "WORLD_SIZE" in os.environ:
        world_size = int(os.environ["WORLD_SIZE"])
    if rank == -1 and "RANK" in os.environ:
        rank = int(os.environ["RANK"])
    if world_size not in (-1, 1) or (world_size == -1 and address is None and _cluster()):
        if world_size != -1 and not 0 <= rank < world_size:
            raise ValueError(f"init_process_group: rank {rank} is out of range for a world "
                             f"of size {world_size} (expected 0 <= rank < {world_size}; set "
                             "rank= or RANK)")
        if address is None and not _cluster():
            raise ValueError("init_process_group: no coordinator address for a world of size "
                             f"{world_size}: pass init_method='tcp://HOST:PORT' or set "
                             "MASTER_ADDR and MASTER_PORT (torchrun and python -m "
                             "hookgrad.distributed.run set them)")
        _start_jax(backend, address, world_size, rank, timeout, device_id)
    elif rank not in (-1, 0):
        raise ValueError(f"init_process_group: rank {rank} is out of range for a world of "
                         "size 1 (expected 0 or -1)")
    _STATE["backend"] = "gloo" if backend is None else str(backend).lower()
    _GROUP["initialized"] = True


def _start_jax(backend, address, world_size, rank, timeout, device_id):
    if _backend_start.started():
        raise RuntimeError(
            "init_process_group must run before anything starts JAX's backends, and "
            f"something did: {_backend_start.started_by()}. Call init_process_group first "
            "in the script (right after the imports), before making tensors or asking for "
            "devices: jax.distributed can only join processes that have not started one.")
    if (0 if rank == -1 else rank) == 0 and address is not None:
        _check_port_free(address)
    jax.config.update("jax_cpu_collectives_implementation",
                      _CPU_COLLECTIVES[None if backend is None else str(backend).lower()])
    kw = {}
    if timeout is not None:
        kw["initialization_timeout"] = int(timeout.total_seconds())
    local = _local_device(backend, device_id)
    if local is not None:
        kw["local_device_ids"] = [local]
    jax.distributed.initialize(
        coordinator_address=address, num_processes=None if world_size == -1 else world_size,
        process_id=None if rank == -1 else rank, **kw)
    _STATE["started_jax"] = True


def _check_port_free(address):
    # rank 0 hosts JAX's coordinator there; JAX aborts the process when it cannot listen
    port = int(address.rsplit(":", 1)[1])
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("", port))
        except OSError as e:
            raise RuntimeError(
                f"init_process_group: rank 0 hosts the coordinator on port {port}, which is "
                f"in use ({e.strerror}); set MASTER_PORT (or init_method='tcp://HOST:PORT') "
                "to a free port") from None


def _local_device(backend, device_id):
    # torchrun's one-GPU-per-process layout: the process drives GPU LOCAL_RANK only
    if device_id is not None:
        return getattr(device_id, "index", device_id)
    if backend is not None and "nccl" in str(backend).lower() and "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    return None


def _coordinator(init_method):
    if init_method is None or init_method == "env://":
        addr, port = os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")
        if not (addr and port):
            return None
        if os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True":
            # PyTorch's torchrun holds MASTER_PORT for its own store: JAX's coordinator
            # takes the next port (hookgrad's launcher leaves MASTER_PORT free)
            port = int(port) + 1
        return f"{addr}:{port}"
    if init_method.startswith("tcp://"):
        return init_method[len("tcp://"):]
    raise ValueError(f"init_process_group: init_method {init_method!r} is not supported; use "
                     "'tcp://HOST:PORT' or 'env://'")


def _cluster():
    # a cluster jax.distributed detects by itself (SLURM, TPU pods, Open MPI)
    return any(v in os.environ for v in ("SLURM_JOB_ID", "TPU_WORKER_HOSTNAMES",
                                         "OMPI_COMM_WORLD_SIZE"))


def get_rank(group: Any = None) -> int:
    """This process's rank (``jax.process_index()``), or its rank in ``group`` (-1 when it
    is not a member)."""
    return _resolve(group).rank()


def get_world_size(group: Any = None) -> int:
    """The number of processes (``jax.process_count()``) or of ``group``'s (-1 when this
    process is not a member); inside a DDP communication hook, the number of replicas it
    reduces over (the mesh's data axis)."""
    replicas = hook_world_size()
    if replicas is not None:
        return replicas
    g = _resolve(group)
    return g.size() if g.rank() >= 0 else -1


def get_backend(group: Any = None) -> str:
    """The backend name the process group was initialized with (``"gloo"``, ``"nccl"``)."""
    _resolve(group)
    return _STATE["backend"]


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None,
            timeout: timedelta | None = None) -> Work | None:
    """Block until every process of ``group`` reaches it."""
    g = _resolve(group)
    if g.size() > 1 and g.rank() >= 0:
        from .._factory import zeros
        all_reduce(zeros(1), group=g)   # an exchange completes only when all have joined
    return Work([]) if async_op else None


def destroy_process_group(group: Any = None) -> None:
    """Leave the process group: ``jax.distributed.shutdown()`` if it was started here."""
    _require()
    if group is not None:
        return   # a subgroup holds nothing to release
    if _STATE["started_jax"]:
        jax.distributed.shutdown()
        _STATE["started_jax"] = False
    _between_processes.forget()
    _point_to_point.forget()
    _GROUP["initialized"] = False


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
