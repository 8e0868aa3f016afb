"""``DistributedDataParallel`` with a communication hook: the wrapped module as one op whose
backward reduces the gradients by the hook, in ``shard_map`` over the mesh's data axis.

Without a hook, XLA's SPMD partitioner decides how a replicated parameter's gradient is
reduced (an all-reduce in the gradient's dtype). A hook takes that over, as PyTorch's
reducer hands its buckets to one: the module runs per shard of the batch (``shard_map``),
its per-shard backward gives each device its share of the parameters' gradient, and the
hook reduces those (``jax.lax.psum``, in float16/bfloat16 for the compression hooks).
The per-shard function is a ``jax.custom_vjp`` whose backward calls the hook, so the
reduction is the hook's and no other: the parameters enter it device-varying
(``pcast``), which keeps JAX from inserting its own ``psum`` for them.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec

from ..._engine.function import Function
from ..._tensor import Tensor
from ...distributed._comm import GradBucket, reducing
from ...futures import Future


class _Spec:
    """What one call of the hooked module needs besides its arrays."""
    __slots__ = ("ddp", "params", "args", "kwargs", "slots", "n_in", "tuple_out", "cfg",
                 "sync", "local")

    def __init__(self, ddp, params, args, kwargs, cfg):
        self.ddp, self.params, self.cfg = ddp, params, cfg
        # read at forward, as PyTorch's reducer does: a forward inside no_sync() defers
        # the reduction of its backward
        self.sync = ddp.require_backward_grad_sync
        self.local = local_grads(ddp, params, cfg, create=not self.sync)
        self.args, self.kwargs = args, kwargs
        self.slots = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        self.n_in = len(self.slots)
        self.tuple_out = False


def hooked_forward(ddp, cfg, args, kwargs):
    """``ddp.module(*args, **kwargs)`` as one op whose gradients the comm hook reduces."""
    params = [p for p in ddp.module.parameters() if p.requires_grad]
    spec = _Spec(ddp, params, args, kwargs, cfg)
    n = cfg.mesh.shape[cfg.batch_axis]
    for i in spec.slots:
        t = args[i]
        if t.ndim == 0 or t.shape[0] % n:
            raise ValueError(
                f"DistributedDataParallel with a communication hook: input {i} of shape "
                f"{tuple(t.shape)} cannot be split over the {n} devices of mesh axis "
                f"{cfg.batch_axis!r} along its first dimension; make the batch a multiple "
                f"of {n}")
    return _Hooked.apply(spec, *[args[i] for i in spec.slots], *params)


LOCAL = "_ddp_local_grad_"


def local_grads(ddp, params, cfg, create):
    """The buffers accumulating each device's unreduced gradient shares under ``no_sync()``
    (``(devices, *parameter.shape)``, split over the data axis): created on first need,
    outside a compiled step."""
    bufs = [ddp._buffers.get(f"{LOCAL}{i}") for i in range(len(params))]
    if all(b is not None for b in bufs):
        return bufs
    if not create:
        return []
    if any(isinstance(p._data, jax.core.Tracer) for p in params):
        raise RuntimeError("DistributedDataParallel.no_sync() with a communication hook: enter "
                           "no_sync() outside the compiled step (it creates the buffers that "
                           "accumulate each device's gradients)")
    axis = cfg.batch_axis
    n = cfg.mesh.shape[axis]
    where = NamedSharding(cfg.mesh, PartitionSpec(axis))
    for i, p in enumerate(params):
        ddp.register_buffer(f"{LOCAL}{i}", Tensor._wrap(jax.device_put(
            jnp.zeros((n, *p.shape), p._data.dtype), where)), persistent=False)
    return [ddp._buffers[f"{LOCAL}{i}"] for i in range(len(params))]


def _module_fn(spec):
    """The module as a function of (parameter arrays, input arrays) -> output arrays."""
    def run(ps, xs):
        args = list(spec.args)
        for i, x in zip(spec.slots, xs):
            args[i] = Tensor._wrap(x)
        saved = [p._data for p in spec.params]
        try:
            for p, a in zip(spec.params, ps):
                p._data = a
            out = spec.ddp.module(*args, **spec.kwargs)
        finally:
            for p, a in zip(spec.params, saved):
                p._data = a
        spec.tuple_out = isinstance(out, (tuple, list))
        outs = tuple(out) if spec.tuple_out else (out,)
        if not all(isinstance(o, Tensor) for o in outs):
            raise TypeError("DistributedDataParallel with a communication hook: the module must "
                            "return a Tensor or a tuple of Tensors, got "
                            f"{type(out).__name__}")
        return [o._data for o in outs]
    return run


def _reduce(spec, local):
    """The hook's reduction of this device's gradient shares ``local``."""
    ddp, axis = spec.ddp, spec.cfg.batch_axis
    n = spec.cfg.mesh.shape[axis]
    shapes = [tuple(p.shape) for p in spec.params]
    # NOTE: the bucket holds n x this device's share of the global gradient: for a loss
    # averaged over the batch, the gradient of this shard's own mean loss, which is what
    # a PyTorch rank's hook gets (and the hook's mean over the replicas is then the sum)
    flat = jnp.concatenate([(g * n).ravel() for g in local])
    state, hook = ddp._comm_hook
    with reducing(axis, n):
        fut = hook(state, GradBucket(Tensor._wrap(flat), spec.params, shapes))
    if not isinstance(fut, Future):
        raise TypeError(f"Communication hook {_name(hook)} must return a "
                        f"hookgrad.futures.Future[Tensor], got {type(fut).__name__}")
    res = fut.wait()
    if isinstance(res, (list, tuple)) and len(res) == 1:
        res = res[0]
    if not isinstance(res, Tensor) or tuple(res.shape) != tuple(flat.shape):
        raise RuntimeError(f"Communication hook {_name(hook)}: its Future must hold a Tensor "
                           f"of the bucket's shape {tuple(flat.shape)}, got "
                           f"{getattr(res, 'shape', type(res).__name__)}")
    out, at = [], 0
    for g, s in zip(local, shapes):
        size = math.prod(s)
        out.append(res._data[at:at + size].reshape(s).astype(g.dtype))
        at += size
    return out


def _name(hook):
    return getattr(hook, "__qualname__", repr(hook))


def _sharded(spec):
    """The module per shard of the batch, its parameters' cotangents reduced by the hook
    (with what ``no_sync()`` accumulated added first)."""
    axis = spec.cfg.batch_axis
    run = _module_fn(spec)

    def varying(ps):
        return jax.lax.pcast(ps, axis, to="varying")

    @jax.custom_vjp
    def per_shard(ps, xs, acc):
        return run(varying(ps), xs)

    def fwd(ps, xs, acc):
        out, pull = jax.vjp(run, varying(ps), xs)
        return out, (pull, acc)

    def bwd(res, cts):
        pull, acc = res
        dps, dxs = pull(cts)
        if acc:
            dps = [d + a[0] for d, a in zip(dps, acc)]
        return _reduce(spec, dps), dxs, [jnp.zeros_like(a) for a in acc]

    per_shard.defvjp(fwd, bwd)
    batch = PartitionSpec(axis)
    return jax.shard_map(per_shard, mesh=spec.cfg.mesh,
                         in_specs=(PartitionSpec(), batch, batch), out_specs=batch)


def _sharded_local(spec):
    """The module per shard of the batch on per-device copies of the parameters
    (``(devices, *shape)``, split over the data axis): their cotangents are each
    device's unreduced share, and nothing is communicated."""
    run = _module_fn(spec)
    batch = PartitionSpec(spec.cfg.batch_axis)
    return jax.shard_map(lambda ps, xs: run([p[0] for p in ps], xs), mesh=spec.cfg.mesh,
                         in_specs=(batch, batch), out_specs=batch)


class _Hooked(Function):
    @staticmethod
    def forward(ctx, spec, *tensors):
        xs = [t._data for t in tensors[:spec.n_in]]
        ps = [t._data for t in tensors[spec.n_in:]]
        if spec.sync:
            acc = [b._data for b in spec.local]
            outs, ctx.pull = jax.vjp(lambda ps, xs: _sharded(spec)(ps, xs, acc), ps, xs)
        else:
            n = spec.cfg.mesh.shape[spec.cfg.batch_axis]
            copies = [jnp.broadcast_to(p[None], (n, *p.shape)) for p in ps]
            outs, ctx.pull = jax.vjp(_sharded_local(spec), copies, xs)
        ctx.spec, ctx.avals = spec, [(o.shape, o.dtype) for o in outs]
        res = tuple(Tensor._wrap(o) for o in outs)
        return res if spec.tuple_out else res[0]

    @staticmethod
    def backward(ctx, *grads):
        spec = ctx.spec
        cts = [jnp.zeros(s, d) if g is None else g._data.astype(d)
               for g, (s, d) in zip(grads, ctx.avals)]
        dps, dxs = ctx.pull(cts)
        if spec.sync:
            for b in spec.local:        # reduced: what no_sync() accumulated is spent
                b._data = b._data * 0
            grads_p = [Tensor._wrap(d) for d in dps]
        else:                           # deferred: .grad is left as it is
            for b, d in zip(spec.local, dps):
                b._data = b._data + d
            grads_p = [None] * len(dps)
        return (None, *[Tensor._wrap(d) for d in dxs], *grads_p)
