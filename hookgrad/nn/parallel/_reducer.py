"""``DistributedDataParallel`` across processes, as PyTorch's reducer: each process runs the
module on its own batch, its backward (and every hook in it) sees its own gradients, and
when the backward ends the gradients are averaged over the processes into ``.grad``.

One flat buffer per dtype is exchanged (``hookgrad.distributed.all_reduce``, or the
registered communication hook, which gets it as a ``GradBucket``); inside ``no_sync()``
nothing is exchanged and ``.grad`` accumulates locally, so the next synchronized backward
averages the total. At construction, and before each forward with ``broadcast_buffers``,
rank 0's parameters and buffers are copied to every process.
"""
from __future__ import annotations

from ..._autograd.engine import queue_callback
from ..._autograd.grad_mode import no_grad
from ..._tensor import Tensor


def attach(ddp) -> None:
    """Start reducing ``ddp``'s gradients across processes; copy rank 0's state."""
    from ... import distributed as dist
    ddp._reducer_queued = False
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


def _queue(ddp):
    # once per backward, after every gradient has arrived (PyTorch's reducer queues its
    # finalization from the first ready gradient's hook)
    if ddp.require_backward_grad_sync and not ddp._reducer_queued:
        ddp._reducer_queued = True
        queue_callback(lambda: _finalize(ddp))


def _finalize(ddp):
    ddp._reducer_queued = False
    params = [p for p in ddp.module.parameters() if p.requires_grad and p.grad is not None]
    by_dtype = {}
    for p in params:
        by_dtype.setdefault(p.grad.dtype, []).append(p)
    for group in by_dtype.values():
        grads = [p.grad for p in group]
        flat = _reduced(ddp, Tensor._wrap(_flatten(grads)), group)
        at = 0
        with no_grad():
            for g in grads:
                n = g.numel()
                g.copy_(flat[at:at + n].reshape(g.shape))
                at += n


def _flatten(grads):
    import jax.numpy as jnp
    return jnp.concatenate([g._data.reshape(-1) for g in grads])


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
