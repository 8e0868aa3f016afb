"""What a DDP communication hook works with: ``GradBucket``, ``ReduceOp``, and the mesh axis
its ``all_reduce`` reduces over.

A hook runs while JAX traces the backward of one shard of the batch inside ``shard_map``
(``nn.parallel.DistributedDataParallel.register_comm_hook``): ``all_reduce`` there is
``jax.lax.psum`` over the mesh's data axis, which :func:`reducing` names for the hook's
duration. Outside a hook collectives run between processes (``_collectives``).
"""
from __future__ import annotations

import contextlib
import enum
import math
from collections.abc import Iterator
from typing import Any

import jax

__all__ = ["GradBucket", "ReduceOp", "Work"]

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
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"


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


def in_hook() -> bool:
    """Whether a DDP communication hook is running (its collectives reduce over the mesh)."""
    return _AXIS[0] is not None


def hook_reduce(data: Any, op: ReduceOp) -> Any:
    """``data`` reduced by ``op`` over the mesh axis of the running communication hook."""
    if op not in _REDUCE:
        raise ValueError(f"all_reduce(): {op} is not supported inside a DDP communication "
                         f"hook (expected one of {[o.name for o in _REDUCE]})")
    return _REDUCE[op](data, _AXIS[0][0])


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
