"""Ops on DTensors: the op runs on the global arrays (JAX's computation follows the data,
XLA inserts the collectives) and its Tensor outputs become DTensors on the inputs' mesh.

The stage sits in the modes stage's slot (``_ops/stages/modes.py``) from the first DTensor on
(``_api.as_dtensor`` puts it there), so a program that never makes one pays one slot test
per op. As in PyTorch, every Tensor argument of an op on DTensors must be a DTensor on the
same mesh, save one-element Tensors and what :func:`implicit_replication` allows.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ..._ops import dispatch
from ..._ops.stages import modes
from ..._tensor import Tensor
from ._api import STAGE, DTensor, as_dtensor

__all__ = ["implicit_replication"]

_slot = modes.INTERCEPT
_implicit = [False]


@contextlib.contextmanager
def implicit_replication() -> Iterator[None]:
    """Inside the block, a plain Tensor in an op on DTensors counts as replicated."""
    old = _implicit[0]
    _implicit[0] = True
    try:
        yield
    finally:
        _implicit[0] = old


def _apply(op: Any, args: Any, statics: Any, out: Any) -> Any:
    mesh = None
    for a in args:
        if isinstance(a, DTensor):
            if mesh is None:
                mesh = a.device_mesh
            elif a.device_mesh != mesh:
                raise RuntimeError(f"DTensor does not support cross-mesh operation on "
                                   f"{_name(op)}! Got meshes: {mesh} {a.device_mesh}. Please "
                                   "make sure all the arguments have the same DeviceMesh.")
    if mesh is not None and not _implicit[0]:
        for a in args:
            if isinstance(a, Tensor) and not isinstance(a, DTensor) and a.numel() != 1:
                raise RuntimeError(
                    f"{_name(op)} got mixed torch.Tensor and DTensor, need to convert all "
                    "torch.Tensor to DTensor before calling distributed operators!")
    _slot[0] = None  # the op itself runs as without DTensors (no re-entry here)
    try:
        res = dispatch.apply(op, args, statics, out)
    finally:
        _slot[0] = _apply
    if mesh is None:
        return res
    if out is not None:
        return res  # in place: the DTensor keeps its class; its placements follow its array
    if isinstance(res, tuple):
        return tuple(as_dtensor(r, mesh) if isinstance(r, Tensor) else r for r in res)
    return as_dtensor(res, mesh) if isinstance(res, Tensor) else res


STAGE[0] = modes.SUBCLASS_STAGE[0] = _apply


def _name(op: Any) -> str:
    return f"aten.{op.name}"
