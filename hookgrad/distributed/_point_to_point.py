"""Point-to-point messages: ``send``, ``recv``, ``isend``, ``irecv``.

JAX exchanges data only in programs both processes run, so each message is an exchange
between the two processes (a gather over their two devices): the sender contributes the
tensor, the receiver an empty row, each says which it does. When both processes send in
the same exchange (each calling ``isend`` before its ``irecv``, the usual ring exchange),
each keeps what the other sent in a mailbox and its next ``recv`` from that peer takes it
from there without exchanging, as the peer's does: both stay in step. Every message
completes when the call returns (``isend``/``irecv`` give a finished ``Work``). Inside a
compiled step the exchange runs on the host (``on_host``).
"""
from __future__ import annotations

import collections
from typing import Any

import jax
import numpy as np

from . import _between_processes
from ._collectives import _check, _peer, _write, resolve
from ._comm import Work

__all__ = ["send", "recv", "isend", "irecv"]

# what a peer sent while this process was sending too: {global rank: deque of bytes}
_MAILBOX: dict[int, collections.deque] = collections.defaultdict(collections.deque)
_SEND, _RECV = 1, 0


def _talk(peer: int, kind: int, payload: bytes) -> bytes | None:
    """One exchange with ``peer``: returns what it sent, None if it was receiving."""
    me = jax.process_index()
    ranks = (min(me, peer), max(me, peer))
    head = np.asarray(_between_processes.collective(
        np.array([kind, len(payload)], np.int64), ranks, "gather"))
    other = head[ranks.index(peer)]
    if kind == _RECV and other[0] == _RECV:
        raise RuntimeError(f"recv(): rank {me} and rank {peer} are both receiving from each "
                           "other: one of them must send (hookgrad completes each message "
                           "when it is called)")
    row = np.zeros(int(head[:, 1].max()), np.uint8)
    row[:len(payload)] = np.frombuffer(payload, np.uint8)
    rows = np.asarray(_between_processes.collective(row, ranks, "gather"))
    return rows[ranks.index(peer), :int(other[1])].tobytes() if other[0] == _SEND else None


def _send_host(data, peer):
    got = _talk(peer, _SEND, np.ascontiguousarray(data).tobytes())
    if got is not None:
        _MAILBOX[peer].append(got)
    return np.zeros((), np.int32)


def _recv_host(like, peer):
    box = _MAILBOX.get(peer)
    got = box.popleft() if box else _talk(peer, _RECV, b"")
    return np.frombuffer(got, like.dtype).reshape(like.shape)


def _endpoint(group, rank, group_rank, what, fn):
    g = resolve(group)
    if rank is None and group_rank is None and what == "src":
        raise NotImplementedError(f"hookgrad does not implement torch.distributed.{fn} from "
                                  "any source yet: pass src= (the sender's rank)")
    rank = _peer(g, rank, group_rank, what)
    if rank == jax.process_index():
        kind = {"dst": "destination", "src": "source"}[what]
        raise ValueError(f"Invalid {kind} rank: {kind} rank should not be the same as the "
                         "rank of the current process.")
    return g, rank


def isend(tensor: Any, dst: int | None = None, group: Any = None, tag: int = 0,
          group_dst: int | None = None) -> Work | None:
    """Send ``tensor`` to the process of global rank ``dst`` (or group rank ``group_dst``),
    which receives it with ``recv``/``irecv``. Returns a finished :class:`Work`."""
    _check(tensor, "isend")
    g, dst = _endpoint(group, dst, group_dst, "dst", "isend")
    if g.rank() < 0:
        return None
    # traced, the ordered callback is an effect: the step keeps it though nothing reads it
    _between_processes.on_host(lambda d: _send_host(d, dst), tensor._data, (), np.int32)
    return Work([tensor])


def irecv(tensor: Any, src: int | None = None, group: Any = None, tag: int = 0,
          group_src: int | None = None) -> Work | None:
    """Receive into ``tensor`` what the process of global rank ``src`` (or group rank
    ``group_src``) sends; ``tensor`` has the sent tensor's shape and dtype. Returns a
    finished :class:`Work`."""
    return _receive(tensor, src, group, group_src, "irecv")[0]


def _receive(tensor, src, group, group_src, fn):
    """``(Work, the sender's global rank)``; ``(None, -1)`` outside the group."""
    _check(tensor, fn)
    g, src = _endpoint(group, src, group_src, "src", fn)
    if g.rank() < 0:
        return None, -1
    data = tensor._data
    _write(tensor, _between_processes.on_host(lambda d: _recv_host(d, src), data,
                                              tuple(data.shape), data.dtype))
    return Work([tensor]), src


def send(tensor: Any, dst: int | None = None, group: Any = None, tag: int = 0,
         group_dst: int | None = None) -> None:
    """Send ``tensor`` to the process of global rank ``dst`` (or group rank ``group_dst``).

    ::

        send(tensor, dst=None, group=None, tag=0, group_dst=None)
    """
    isend(tensor, dst, group, tag, group_dst)


def recv(tensor: Any, src: int | None = None, group: Any = None, tag: int = 0,
         group_src: int | None = None) -> int:
    """Receive into ``tensor`` what the process of global rank ``src`` (or group rank
    ``group_src``) sends. Returns the sender's rank (-1 outside the group).

    ::

        recv(tensor, src=None, group=None, tag=0, group_src=None)
    """
    return _receive(tensor, src, group, group_src, "recv")[1]


def forget() -> None:
    """Drop undelivered messages of a process group that has ended."""
    _MAILBOX.clear()
