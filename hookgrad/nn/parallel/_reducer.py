"""``DistributedDataParallel`` across processes, as PyTorch's reducer: each process runs the
module on its own batch, its backward (and every hook in it) sees its own gradients, and
when the backward of a forward through the wrapper ends, the gradients are averaged over
the processes into ``.grad``.

One flat buffer per dtype is exchanged (``hookgrad.distributed.all_reduce``, or the
registered communication hook, which gets it as a ``GradBucket``); the backward of a
forward run inside ``no_sync()`` exchanges nothing and ``.grad`` accumulates locally, so
the next synchronized backward averages the total. At construction (and before each
forward with ``broadcast_buffers``) rank 0's parameters and buffers are copied to every
process.
"""
from __future__ import annotations

import jax.numpy as jnp

from ..._engine.engine import queue_callback, queue_cleanup
from ..._autograd.grad_mode import no_grad
from ..._tensor import Tensor


def attach(ddp) -> None:
    """Start reducing ``ddp``'s gradients across processes; copy rank 0's state."""
    from ... import distributed as dist
    ddp._reducer_queued = ddp._reducer_armed = False
    for p in ddp.module.parameters():
        if p.requires_grad:
            p.register_post_accumulate_grad_hook(lambda _p, ddp=ddp: _queue(ddp))
    with no_grad():
        for t in list(ddp.module.parameters()) + list(ddp.module.buffers()):
            dist.broadcast(t, src=0)


def sync_buffers(ddp) -> None:
    """Copy rank 0's buffers to every process (PyTorch's ``broadcast_buffers``)."""
    from ... import distributed as dist
    with no_grad():
        for b in ddp.module.buffers():
            dist.broadcast(b, src=0)


def arm(ddp) -> None:
    """A forward through ``ddp`` with grad mode on, outside ``no_sync()``: its backward
    synchronizes (PyTorch's ``prepare_for_backward``)."""
    ddp._reducer_armed = True


def _queue(ddp):
    # once per armed backward, after every gradient has arrived (PyTorch's reducer queues
    # its finalization from the first ready gradient's hook)
    if ddp._reducer_armed and not ddp._reducer_queued:
        ddp._reducer_queued = True
        queue_callback(lambda: _finalize(ddp))
        queue_cleanup(lambda: _disarm(ddp))  # errors included


def _disarm(ddp):
    ddp._reducer_queued = ddp._reducer_armed = False


def _finalize(ddp):
    # every parameter that requires grad is in the buffer, a missing gradient as zeros, so
    # all processes exchange buffers of one size whichever parameters their batch reached
    by_dtype = {}
    for p in ddp.module.parameters():
        if p.requires_grad:
            by_dtype.setdefault(p.dtype, []).append(p)
    for group in by_dtype.values():
        flat = _reduced(ddp, Tensor._wrap(_flatten(group)), group)
        at = 0
        with no_grad():
            for p in group:
                n = p.numel()
                value = flat[at:at + n].reshape(p.shape)
                at += n
                if p.grad is not None:
                    p.grad.copy_(value)
                elif ddp.find_unused_parameters:   # unused here, maybe used elsewhere
                    p.grad = value.clone()


def _flatten(params):
    return jnp.concatenate([jnp.zeros(p.numel(), p._data.dtype) if p.grad is None
                            else p.grad._data.reshape(-1) for p in params])


def _reduced(ddp, flat, params):
    from ... import distributed as dist
    if ddp._comm_hook is None:   # PyTorch's default: divide by the world, then sum
        flat.div_(dist.get_world_size())
        dist.all_reduce(flat)
        return flat
    state, hook = ddp._comm_hook
    bucket = dist.GradBucket(flat, params, [tuple(p.shape) for p in params])
    out = hook(state, bucket).wait()
    return out[0] if isinstance(out, (list, tuple)) else out
