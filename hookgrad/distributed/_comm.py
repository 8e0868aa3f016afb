"""What a DDP communication hook works with: ``GradBucket``, ``all_reduce`` and ``ReduceOp``.

A hook runs while JAX traces the backward of one shard of the batch inside ``shard_map``
(``nn.parallel.DistributedDataParallel.register_comm_hook``): ``all_reduce`` there is
``jax.lax.psum`` over the mesh's data axis, which :func:`reducing` names for the hook's
duration. Outside a hook, a world of one process has nothing to reduce.
"""
from __future__ import annotations

import contextlib
import enum
import math
from collections.abc import Iterator
from typing import Any

import jax

__all__ = ["GradBucket", "ReduceOp", "Work", "all_reduce"]

# the mesh axis and its size while a communication hook runs (None outside one)
_AXIS: list[tuple[str, int] | None] = [None]


@contextlib.contextmanager
def reducing(axis: str, size: int) -> Iterator[None]:
    """Collectives in the block reduce over mesh axis ``axis`` of ``size`` devices."""
    old = _AXIS[0]
    _AXIS[0] = (axis, size)
    try:
        yield
    finally:
        _AXIS[0] = old


def hook_world_size() -> int | None:
    """The number of replicas the running communication hook reduces over, else None."""
    return None if _AXIS[0] is None else _AXIS[0][1]


class ReduceOp(enum.Enum):
    """The reductions of :func:`all_reduce`."""
    SUM = "sum"
    AVG = "avg"
    MAX = "max"
    MIN = "min"


_REDUCE = {ReduceOp.SUM: jax.lax.psum, ReduceOp.AVG: jax.lax.pmean,
           ReduceOp.MAX: jax.lax.pmax, ReduceOp.MIN: jax.lax.pmin}


class Work:
    """A finished collective (JAX orders device work itself): ``wait()``, ``get_future()``."""

    def __init__(self, tensors: list[Any]) -> None:
        self._tensors = tensors

    def wait(self, timeout: Any = None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True

    def get_future(self):
        """A completed ``hookgrad.futures.Future`` holding the list of reduced tensors."""
        from ..futures import Future
        fut = Future()
        fut.set_result(self._tensors)
        return fut


def all_reduce(tensor: Any, op: ReduceOp = ReduceOp.SUM, group: Any = None,
               async_op: bool = False) -> Work | None:
    """Reduce ``tensor`` in place over the replicas.

    ::

        all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False)

    Inside a DDP communication hook this is ``jax.lax.psum`` (``pmean``, ``pmax``,
    ``pmin``) over the mesh's data axis, in ``tensor``'s dtype. Outside one, in a world of
    one process, ``tensor`` is already reduced. Returns a :class:`Work` if ``async_op``.

    Example::

        >>> def hook(state, bucket):
        ...     buf = bucket.buffer().div_(hookgrad.distributed.get_world_size())
        ...     return hookgrad.distributed.all_reduce(buf, async_op=True).get_future().then(
        ...         lambda fut: fut.value()[0])
    """
    from .._tensor import Tensor
    if not isinstance(tensor, Tensor):
        raise TypeError(f"all_reduce(): argument 'tensor' must be a Tensor, got "
                        f"{type(tensor).__name__}")
    if not isinstance(op, ReduceOp):
        raise ValueError(f"all_reduce(): op must be a ReduceOp, got {op!r}")
    if _AXIS[0] is not None:
        tensor._data = _REDUCE[op](tensor._data, _AXIS[0][0])
    elif jax.process_count() > 1:
        raise RuntimeError("hookgrad.distributed.all_reduce runs inside a DDP communication "
                           "hook; elsewhere a sharded hookgrad.compile step reduces by itself "
                           "(XLA inserts the collectives)")
    return Work([tensor]) if async_op else None


class GradBucket:
    """The gradients a communication hook reduces: one flat ``buffer()`` of all of the
    module's gradients (hookgrad has one bucket: ``index()`` 0, ``is_last()``)."""

    def __init__(self, buffer: Any, parameters: list[Any], shapes: list[tuple[int, ...]]):
        self._buffer = buffer
        self._parameters = parameters
        self._shapes = shapes

    def index(self) -> int:
        return 0

    def is_last(self) -> bool:
        return True

    def buffer(self):
        """The flattened gradients (a 1-D Tensor)."""
        return self._buffer

    def set_buffer(self, buffer: Any) -> None:
        self._buffer = buffer

    def parameters(self) -> list[Any]:
        return list(self._parameters)

    def gradients(self) -> list[Any]:
        """Views of :meth:`buffer` shaped as the parameters."""
        from .._tensor import Tensor
        out, at = [], 0
        data = self._buffer._data
        for s in self._shapes:
            n = math.prod(s)
            out.append(Tensor._wrap(data[at:at + n].reshape(s)))
            at += n
        return out
