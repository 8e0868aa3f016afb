"""Collectives between processes, as PyTorch's process groups run them: each process holds
its own array and gets the reduced, gathered or broadcast one back.

A process's array becomes one row of a global array laid over one device per process (the
first of each process's devices: where its Tensors live), and a small jitted program
reduces the rows into a replicated result; XLA runs the exchange (gloo on CPUs, NCCL on
GPUs). Inside a compiled step the same exchange runs through an ordered
``jax.experimental.io_callback``, so every process calls it in program order.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback
from jax.sharding import Mesh, NamedSharding, PartitionSpec

AXIS = "rank"

_REDUCE = {"sum": jnp.sum, "avg": jnp.mean, "max": jnp.max, "min": jnp.min,
           "product": jnp.prod,
           "band": lambda x, axis: jax.lax.reduce(x, ~np.zeros((), x.dtype),
                                                  jax.lax.bitwise_and, (axis,)),
           "bor": lambda x, axis: jax.lax.reduce(x, np.array(0, x.dtype), jax.lax.bitwise_or,
                                                 (axis,)),
           "bxor": lambda x, axis: jax.lax.reduce(x, np.array(0, x.dtype),
                                                  jax.lax.bitwise_xor, (axis,))}

# reductions XLA's CPU collectives (gloo) cannot run as an all-reduce
_GATHER_FIRST = frozenset({"band", "bor", "bxor"})


@functools.lru_cache(maxsize=None)
def mesh(ranks: tuple[int, ...]) -> Mesh:
    """One device per process of ``ranks``: the first of each process's devices."""
    first = {}
    for d in jax.devices():
        first.setdefault(d.process_index, d)
    return Mesh(np.array([first[r] for r in ranks]), (AXIS,))


@functools.lru_cache(maxsize=None)
def _program(ranks: tuple[int, ...], kind: str, arg):
    replicated = NamedSharding(mesh(ranks), PartitionSpec())
    if kind == "reduce" and arg in _GATHER_FIRST:
        def fn(rows):   # gathered, then reduced on each device
            return _reduce(jax.lax.with_sharding_constraint(rows, replicated), arg)
    elif kind == "reduce":
        fn = functools.partial(_reduce, op=arg)
    elif kind == "broadcast":
        def fn(rows):
            return rows[arg]
    else:  # gather
        def fn(rows):
            return rows
    return jax.jit(fn, out_shardings=replicated)


def forget() -> None:
    """Drop the meshes and programs of a process group that has ended."""
    mesh.cache_clear()
    _program.cache_clear()


def _reduce(rows, op):
    out = _REDUCE[op](rows, axis=0)
    return out.astype(rows.dtype)


def _exchange(local, ranks, kind, arg):
    m = mesh(ranks)
    me = jax.process_index()
    device = m.devices[ranks.index(me)]
    local = jnp.asarray(local)
    piece = jax.device_put(local[None], device)
    rows = jax.make_array_from_single_device_arrays(
        (len(ranks),) + local.shape, NamedSharding(m, PartitionSpec(AXIS)), [piece])
    return _program(ranks, kind, arg)(rows).addressable_data(0)


def collective(local, ranks: tuple[int, ...], kind: str, arg=None):
    """``kind`` ``"reduce"`` (``arg``: 'sum', 'avg', 'max', 'min', 'product', 'band',
    'bor', 'bxor'), ``"gather"`` (rows of every rank, in ``ranks``' order) or
    ``"broadcast"`` (``arg``: the index in ``ranks`` of the source) of this process's
    array ``local`` with those of the processes ``ranks``."""
    shape = local.shape if kind != "gather" else (len(ranks),) + local.shape
    return on_host(lambda value: _exchange(value, ranks, kind, arg), local, shape, local.dtype)


def on_host(fn, local, shape, dtype):
    """``fn(local)``, an exchange written for concrete arrays; inside a trace it runs
    through an ordered ``io_callback`` (every process calls it in program order), its
    result of ``shape`` and ``dtype``."""
    if not isinstance(local, jax.core.Tracer):
        return fn(local)

    def host(value):
        return np.asarray(fn(value))
    return io_callback(host, jax.ShapeDtypeStruct(shape, dtype), local, ordered=True)
