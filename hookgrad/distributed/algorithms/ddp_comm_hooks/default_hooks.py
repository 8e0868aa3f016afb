"""PyTorch's default DDP communication hooks on ``jax.lax.psum``.

Each receives a ``GradBucket`` holding this replica's gradients and reduces them to their
mean over the data axis of the mesh (or over the processes, when DDP runs one replica per
process); the compression hooks cast to float16 / bfloat16
first, so the all-reduce moves half the bytes, and cast the result back.
"""

from typing import Any

import jax
import jax.numpy as jnp

from ... import _between_processes, _collectives
from ..._comm import _AXIS, GradBucket, hook_world_size

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook"]


def _mean(bucket: GradBucket, dtype: Any):
    from ...._tensor import Tensor
    from ....futures import Future
    n = hook_world_size()
    group = None
    if n is None and _collectives._STATE["initialized"]:  # between processes
        group = _collectives.resolve(None)
        n = group.size()
    if n is None:
        raise RuntimeError("DDP communication hooks run inside DistributedDataParallel's "
                           "backward; register one with ddp.register_comm_hook(state, hook)")
    buf = bucket.buffer()
    data = buf._data
    # NOTE: divided before the reduction, as PyTorch's hooks do, so a float16 sum of
    # many replicas cannot overflow where the mean would not
    low = data if dtype is None else data.astype(dtype)
    low = low / jnp.asarray(n, low.dtype)
    if group is None:
        reduced = jax.lax.psum(low, _AXIS[0][0])
    elif n > 1:
        reduced = _between_processes.collective(low, group.ranks(), "reduce", "sum")
    else:
        reduced = low
    buf._data = reduced.astype(data.dtype)
    fut = Future()
    fut.set_result(buf)
    return fut


def allreduce_hook(process_group: Any, bucket: GradBucket):
    """The mean of the bucket over the replicas (``psum`` of ``buffer / world_size``):
    what DDP does without a hook.

    ::

        allreduce_hook(process_group, bucket) -> Future[Tensor]

    Example::

        >>> ddp.register_comm_hook(None, allreduce_hook)
    """
    return _mean(bucket, None)


def fp16_compress_hook(process_group: Any, bucket: GradBucket):
    """The mean of the bucket over the replicas, all-reduced in float16 and cast back.

    ::

        fp16_compress_hook(process_group, bucket) -> Future[Tensor]

    Example::

        >>> ddp.register_comm_hook(None, fp16_compress_hook)
    """
    return _mean(bucket, jnp.float16)


def bf16_compress_hook(process_group: Any, bucket: GradBucket):
    """The mean of the bucket over the replicas, all-reduced in bfloat16 and cast back.

    ::

        bf16_compress_hook(process_group, bucket) -> Future[Tensor]

    Example::

        >>> ddp.register_comm_hook(None, bf16_compress_hook)
    """
    return _mean(bucket, jnp.bfloat16)


from .... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
