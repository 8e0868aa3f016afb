"""Collectives of picklable Python objects (``all_gather_object``,
``broadcast_object_list``): each object travels as its pickle, a row of bytes exchanged
between the processes as the Tensor collectives exchange arrays (eagerly only, as their
results are Python objects)."""
from __future__ import annotations

import pickle
from typing import Any

import jax
import numpy as np

from . import _between_processes
from ._collectives import _peer, resolve

__all__ = ["all_gather_object", "broadcast_object_list"]


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
