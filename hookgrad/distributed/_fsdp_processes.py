"""``fully_shard`` in a job of several processes: FSDP2's algorithm on the collectives
between processes.

Each process keeps its rows of every parameter it manages (dimension 0 split as
``torch.chunk`` splits it: ``ceil(rows / world)`` rows per rank, the last ranks' shorter or
empty), and those shards are the module's parameters, which the optimizer steps. Before the
module's forward its parameters are all-gathered into full tensors (one differentiable
exchange each), the forward runs on them, and afterwards the shards are put back. The
backward of that all-gather averages the full gradient over the processes and keeps this
process's rows: the shard's ``.grad`` is PyTorch's reduce-scattered gradient. Hooks on the
module and its submodules run on each process's own batch, as PyTorch's do. Eagerly and in
compiled steps alike (there each exchange is an ordered host callback).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax
import jax.numpy as jnp

from .._engine.function import Function
from .._autograd.grad_mode import no_grad
from .._tensor import Tensor
from . import _between_processes

__all__ = ["shard_module", "shard_of", "mark", "full_value", "local_rows"]

_ROWS = "_fsdp_rows"   # the attribute of a shard Parameter holding its Rows


@dataclasses.dataclass(frozen=True)
class Rows:
    """Where a process's shard lies in the full parameter."""
    full_shape: tuple[int, ...]
    ranks: tuple[int, ...]
    chunk: int           # rows per rank before the last, padded shard
    start: int
    stop: int

    def pad(self, data):
        """``data`` (this rank's rows) padded to ``chunk`` rows."""
        missing = self.chunk - data.shape[0]
        return data if missing == 0 else jnp.concatenate(
            [data, jnp.zeros((missing,) + data.shape[1:], data.dtype)])


def local_rows(full_shape, ranks, me):
    """The :class:`Rows` of process ``me`` for a parameter of ``full_shape``."""
    n = len(ranks)
    chunk = max(1, math.ceil(full_shape[0] / n))
    r = ranks.index(me)
    start = min(full_shape[0], r * chunk)
    return Rows(tuple(full_shape), ranks, chunk, start, min(full_shape[0], start + chunk))


def _gather_rows(data, rows):
    gathered = _between_processes.collective(rows.pad(data), rows.ranks, "gather")
    return gathered.reshape((-1,) + tuple(rows.full_shape[1:]))[:rows.full_shape[0]]


class _Unshard(Function):
    """All-gather of a shard into the full parameter; backward: the full gradient averaged
    over the processes, this process's rows kept (FSDP's reduce-scatter)."""

    @staticmethod
    def forward(ctx, shard, rows):
        ctx.rows = rows
        return Tensor._wrap(_gather_rows(shard._data, rows))

    @staticmethod
    def backward(ctx, grad):
        rows = ctx.rows
        n = len(rows.ranks)
        g = grad._data
        padded = jnp.zeros((n * rows.chunk,) + g.shape[1:], g.dtype).at[:g.shape[0]].set(g)
        avg = _between_processes.collective(padded, rows.ranks, "reduce", "avg")
        return Tensor._wrap(avg[rows.start:rows.stop]), None


def shard_of(param: Any) -> Rows | None:
    """The :class:`Rows` of ``param`` if it is an FSDP shard made by :func:`shard_module`."""
    return getattr(param, _ROWS, None)


def mark(tensor: Any, rows: Rows) -> Any:
    """``tensor`` (a shard's value, e.g. in a state dict) flagged as the rows ``rows``."""
    setattr(tensor, _ROWS, rows)
    return tensor


def full_value(param: Any):
    """The full parameter ``param`` is a shard of, gathered (every process calls it)."""
    rows = shard_of(param)
    return Tensor._wrap(_gather_rows(param._data, rows))


def _managed(module):
    """``(owner, name, parameter)`` of the parameters ``module`` manages: those no
    ``fully_shard``-ed submodule manages already."""
    out, seen = [], set()
    stack = [module]
    while stack:
        m = stack.pop()
        if m is not module and "_fsdp_managed" in m.__dict__:
            continue
        for name, p in m._parameters.items():
            if p is not None and id(p) not in seen and shard_of(p) is None:
                seen.add(id(p))
                out.append((m, name, p))
        stack.extend(c for c in reversed(list(m._modules.values())) if c is not None)
    return out


def shard_module(module: Any, ranks: tuple[int, ...]) -> Any:
    """Replace the parameters ``module`` manages by this process's shards, and gather them
    around its forward."""
    from ..nn.parameter import Parameter
    me = jax.process_index()
    managed = []
    for owner, name, p in _managed(module):
        if p.ndim == 0:
            raise NotImplementedError(
                "hookgrad does not implement torch.distributed.fsdp.fully_shard of a 0-dim "
                f"parameter across processes yet ({type(owner).__name__}.{name})")
        rows = local_rows(tuple(p.shape), ranks, me)
        with no_grad():
            shard = Parameter(Tensor._wrap(p._data[rows.start:rows.stop]),
                              requires_grad=p.requires_grad)
        mark(shard, rows)
        owner._parameters[name] = shard
        managed.append((owner, name))
    module.__dict__["_fsdp_managed"] = managed

    def unshard(mod, args):
        for owner, name in managed:
            shard = owner._parameters[name]
            owner._parameters[name] = _Unshard.apply(shard, shard_of(shard))
            owner.__dict__.setdefault("_fsdp_shards", {})[name] = shard

    def reshard(mod, args, output):
        for owner, name in managed:
            shard = owner.__dict__.get("_fsdp_shards", {}).pop(name, None)
            if shard is not None:
                owner._parameters[name] = shard
    module.register_forward_pre_hook(unshard, prepend=True)
    module.register_forward_hook(reshard, always_call=True)
    return module
