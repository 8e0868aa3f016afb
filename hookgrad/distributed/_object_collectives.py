"""Collectives of picklable Python objects (``all_gather_object``, ``gather_object``,
``broadcast_object_list``, ``scatter_object_list``): each object travels as its pickle, a
row of bytes exchanged between the processes as the Tensor collectives exchange arrays
(eagerly only, as their results are Python objects)."""
from __future__ import annotations

import pickle
from typing import Any

import jax
import numpy as np

from . import _between_processes
from ._collectives import _peer, only_at_root, resolve, root

__all__ = ["all_gather_object", "gather_object", "broadcast_object_list",
           "scatter_object_list"]


def _exchange(array, g, kind, arg=None):
    if g.size() > 1 and g.rank() >= 0:
        return np.asarray(_between_processes.collective(array, g.ranks(), kind, arg))
    return array[None] if kind == "gather" else array


def all_gather_object(object_list: list[Any], obj: Any, group: Any = None) -> None:
    """Fill ``object_list`` (one entry per process of the group, in rank order) with every
    process's ``obj``, pickled and unpickled (each entry is a copy)."""
    g = resolve(group)
    data = np.frombuffer(pickle.dumps(obj), np.uint8)
    sizes = _exchange(np.array([data.size], np.int64), g, "gather")[:, 0]
    padded = np.zeros(int(sizes.max()), np.uint8)
    padded[:data.size] = data
    rows = _exchange(padded, g, "gather")
    for i, (row, n) in enumerate(zip(rows, sizes)):
        object_list[i] = pickle.loads(row[:int(n)].tobytes())


def broadcast_object_list(object_list: list[Any], src: int | None = None, group: Any = None,
                          device: Any = None, group_src: int | None = None) -> None:
    """Replace the entries of ``object_list`` on every process of the group by those of the
    process of global rank ``src`` (or group rank ``group_src``); every process passes a
    list of the same length."""
    g = resolve(group)
    src = _peer(g, src, group_src, "src")
    at = g.ranks().index(src) if g.rank() >= 0 else 0
    pickles = [pickle.dumps(o) for o in object_list]
    sizes = _exchange(np.array([len(p) for p in pickles], np.int64), g, "broadcast", at)
    data = np.zeros(int(sizes.sum()), np.uint8)
    if jax.process_index() == src:
        data[:] = np.frombuffer(b"".join(pickles), np.uint8)
    data = _exchange(data, g, "broadcast", at)
    start = 0
    for i, n in enumerate(sizes.tolist()):
        object_list[i] = pickle.loads(data[start:start + n].tobytes())
        start += n


def gather_object(obj: Any, object_gather_list: list[Any] | None = None,
                  dst: int | None = None, group: Any = None,
                  group_dst: int | None = None) -> None:
    """Fill ``object_gather_list`` (one entry per process of the group, in rank order) on the
    process of global rank ``dst`` (or group rank ``group_dst``; default: global rank 0)
    with every process's ``obj``; the other processes pass None."""
    g = resolve(group)
    dst = root(g, dst, group_dst, "dst")
    if g.rank() < 0:
        return
    is_dst = jax.process_index() == dst
    only_at_root(object_gather_list, is_dst, "gather_list", "destination")
    everyone = [None] * g.size()
    all_gather_object(everyone, obj, g)
    if is_dst:
        object_gather_list[:len(everyone)] = everyone


def scatter_object_list(scatter_object_output_list: list[Any],
                        scatter_object_input_list: list[Any] | None = None,
                        src: int | None = None, group: Any = None,
                        group_src: int | None = None) -> None:
    """Store entry ``r`` of ``scatter_object_input_list``, the list the process of global
    rank ``src`` (or group rank ``group_src``; default: global rank 0) passes, as the first
    element of ``scatter_object_output_list`` on the process of group rank ``r``."""
    g = resolve(group)
    src = root(g, src, group_src, "src")
    if g.rank() < 0:
        return
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size "
                         "at least 1.")
    if jax.process_index() == src:
        if scatter_object_input_list is None:
            raise ValueError("source rank must provide non-None scatter_object_input_list")
        sent = list(scatter_object_input_list)
    else:
        sent = [None] * g.size()
    broadcast_object_list(sent, src, g)
    scatter_object_output_list[0] = sent[g.rank()]
