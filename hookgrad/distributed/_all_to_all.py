"""``all_to_all_single`` and ``all_to_all``: every process sends a piece of its input to
each process of the group and receives one piece from each.

The pieces travel as one gather of every process's input (padded to the longest), from
which each process keeps what is addressed to it; uneven splits first exchange the split
sizes. Inside a compiled step the whole exchange runs on the host (``on_host``).
"""
from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from . import _between_processes
from ._collectives import _check, _done, _write, resolve

__all__ = ["all_to_all_single", "all_to_all"]


def _splits(sizes, rows, n, what):
    if sizes is None or len(sizes) == 0:
        if rows % n:
            raise ValueError(f"all_to_all_single(): {what} of {rows} rows along dimension 0 "
                             f"cannot be split evenly over the group's {n} ranks: pass "
                             f"{what}_split_sizes")
        return [rows // n] * n
    sizes = [int(s) for s in sizes]
    if len(sizes) != n or sum(sizes) != rows or min(sizes) < 0:
        raise ValueError(f"all_to_all_single(): {what}_split_sizes {sizes} must hold {n} "
                         f"sizes (one per rank of the group) adding up to the {rows} rows of "
                         f"{what}")
    return sizes


def _exchange(data, ranks, me, sends, receives):
    """This process's rows for each rank (``sends``), exchanged: the rows every rank sent it,
    concatenated in rank order (``receives`` of them from each)."""
    n = len(ranks)
    table = np.asarray(_between_processes.collective(
        np.array(sends + [data.shape[0]], np.int64), ranks, "gather"))
    longest = int(table[:, n].max())
    padded = jnp.zeros((longest,) + data.shape[1:], data.dtype).at[:data.shape[0]].set(data)
    rows = _between_processes.collective(padded, ranks, "gather")
    pieces = []
    for src in range(n):
        start = int(table[src, :me].sum())
        count = int(table[src, me])
        if count != receives[src]:
            raise RuntimeError(f"all_to_all_single(): rank {ranks[src]} sends {count} rows "
                               f"to this rank but output_split_sizes expects "
                               f"{receives[src]} from it")
        pieces.append(rows[src, start:start + count])
    return jnp.concatenate(pieces)


def all_to_all_single(output: Any, input: Any, output_split_sizes: list[int] | None = None,
                      input_split_sizes: list[int] | None = None, group: Any = None,
                      async_op: bool = False) -> Any:
    """Split ``input`` along its first dimension into one piece per process of the group
    (evenly, or by ``input_split_sizes``), send piece ``j`` to group rank ``j``, and write
    the pieces received, in rank order, into ``output`` (split by ``output_split_sizes``).

    ::

        all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                          group=None, async_op=False)
    """
    _check(output, "all_to_all_single", "output")
    _check(input, "all_to_all_single", "input")
    g = resolve(group)
    if g.rank() < 0:
        return _done([], async_op)
    n = g.size()
    rows_in = input.shape[0] if input.ndim else 0
    rows_out = output.shape[0] if output.ndim else 0
    sends = _splits(input_split_sizes, rows_in, n, "input")
    receives = _splits(output_split_sizes, rows_out, n, "output")
    if tuple(input.shape[1:]) != tuple(output.shape[1:]):
        raise ValueError(f"all_to_all_single(): output of shape {tuple(output.shape)} and "
                         f"input of shape {tuple(input.shape)} must agree beyond dimension 0")
    data = input._data.astype(output._data.dtype)
    if n == 1:
        _write(output, data)
        return _done([output], async_op)
    ranks, me = g.ranks(), g.rank()
    _write(output, _between_processes.on_host(
        lambda d: _exchange(jnp.asarray(d), ranks, me, sends, receives), data,
        tuple(output.shape), data.dtype))
    return _done([output], async_op)


def all_to_all(output_tensor_list: list[Any], input_tensor_list: list[Any],
               group: Any = None, async_op: bool = False) -> Any:
    """Send ``input_tensor_list[j]`` to group rank ``j`` and receive into
    ``output_tensor_list[i]`` what group rank ``i`` sent this process; the tensors may
    differ in shape, the dtype is the same throughout.

    ::

        all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False)
    """
    g = resolve(group)
    for name, tensors in (("output_tensor_list", output_tensor_list),
                          ("input_tensor_list", input_tensor_list)):
        if len(tensors) != g.size():
            raise ValueError(f"all_to_all(): {name} must hold {g.size()} tensors (one per "
                             f"rank of the group), got {len(tensors)}")
        for i, t in enumerate(tensors):
            _check(t, "all_to_all", f"{name}[{i}]")
    if g.rank() < 0:
        return _done([], async_op)
    dtype = output_tensor_list[0]._data.dtype
    flat_in = Tensor._wrap(jnp.concatenate([t._data.astype(dtype).reshape(-1)
                                            for t in input_tensor_list]))
    flat_out = Tensor._wrap(jnp.zeros(sum(t.numel() for t in output_tensor_list), dtype))
    all_to_all_single(flat_out, flat_in, [t.numel() for t in output_tensor_list],
                      [t.numel() for t in input_tensor_list], group)
    start = 0
    for t in output_tensor_list:
        _write(t, flat_out._data[start:start + t.numel()].reshape(tuple(t.shape)))
        start += t.numel()
    return _done(output_tensor_list, async_op)
