"""PyTorch's collectives on Tensors (``all_reduce``, ``all_gather``, ``broadcast``,
``reduce_scatter``, ...) and process groups (``new_group``).

Between processes each call is one exchange (``_between_processes``), eagerly or inside a
compiled step; in a world of one process a collective leaves its tensors as they are;
inside a DDP communication hook ``all_reduce`` reduces over the mesh's data axis
(``_comm``).
"""
from __future__ import annotations

from typing import Any

import jax

from .._autograd.grad_mode import no_grad
from .._tensor import Tensor
from . import _between_processes, _comm
from ._comm import ReduceOp, Work

__all__ = ["ProcessGroup", "group", "new_group", "get_process_group_ranks", "all_reduce",
           "reduce", "all_gather", "all_gather_into_tensor", "broadcast", "reduce_scatter",
           "reduce_scatter_tensor", "gather", "scatter"]

_NOT_INIT = ("Default process group has not been initialized, please make sure to call "
             "init_process_group.")
_STATE = {"initialized": False}


class ProcessGroup:
    """A set of processes (global ranks) that run collectives together."""

    def __init__(self, ranks: tuple[int, ...] | None = None) -> None:
        self._ranks = ranks   # None: every process (the default group)

    def ranks(self) -> tuple[int, ...]:
        return tuple(range(jax.process_count())) if self._ranks is None else self._ranks

    def rank(self) -> int:
        """This process's rank in the group (-1 outside it)."""
        me = jax.process_index()
        return self.ranks().index(me) if me in self.ranks() else -1

    def size(self) -> int:
        return len(self.ranks())

    def __repr__(self) -> str:
        return f"ProcessGroup(ranks={list(self.ranks())})"


class group:
    """``group.WORLD``: the default process group."""
    WORLD = ProcessGroup()


def require() -> None:
    if not _STATE["initialized"]:
        raise ValueError(_NOT_INIT)


def resolve(g: Any) -> ProcessGroup:
    require()
    if g is None:
        return group.WORLD
    if not isinstance(g, ProcessGroup):
        raise TypeError(f"expected a ProcessGroup (from new_group) or None, got "
                        f"{type(g).__name__}")
    return g


def new_group(ranks: Any = None, timeout: Any = None, backend: Any = None,
              pg_options: Any = None, use_local_synchronization: bool = False,
              group_desc: Any = None, device_id: Any = None) -> ProcessGroup:
    """A process group of the global ``ranks`` (all processes when None). Every process
    calls it, as in PyTorch; collectives on it involve only its members."""
    require()
    if ranks is None:
        return ProcessGroup()
    ranks = tuple(sorted(int(r) for r in ranks))
    world = jax.process_count()
    for r in ranks:
        if not 0 <= r < world:
            raise ValueError(f"Rank {r} is out of range. Valid ranks are 0 to {world - 1} "
                             f"(world_size={world})")
    return ProcessGroup(ranks)


def get_process_group_ranks(group: ProcessGroup | None) -> list[int]:
    """The global ranks of ``group``, ordered by group rank."""
    return list(resolve(group).ranks())


def _check(tensor: Any, fn: str, name: str = "tensor") -> None:
    if not isinstance(tensor, Tensor):   # PyTorch's wording, its line break included
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor\n             but got {type(tensor)} instead.")


def _write(tensor, data) -> None:
    with no_grad():
        tensor.copy_(Tensor._wrap(data))


def _op(op: Any) -> str:
    if not isinstance(op, ReduceOp):
        raise ValueError(f"op must be a ReduceOp (hookgrad.distributed.ReduceOp.SUM, ...), "
                         f"got {op!r}")
    return op.value


def _done(tensors, async_op):
    return Work(tensors) if async_op else None


def all_reduce(tensor: Any, op: ReduceOp = ReduceOp.SUM, group: Any = None,
               async_op: bool = False) -> Work | None:
    """Reduce ``tensor`` in place over the processes of ``group``: afterwards every process
    holds the same result.

    ::

        all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False)

    Inside a DDP communication hook it reduces over the mesh's data axis
    (``jax.lax.psum``, ``pmean``, ...). Returns a :class:`Work` if ``async_op``.

    Example::

        >>> loss = hookgrad.tensor(float(local_loss))
        >>> hookgrad.distributed.all_reduce(loss, op=hookgrad.distributed.ReduceOp.AVG)
    """
    _check(tensor, "all_reduce")
    name = _op(op)
    if _comm.in_hook():
        _write(tensor, _comm.hook_reduce(tensor._data, op))
        return _done([tensor], async_op)
    g = resolve(group)
    if g.size() > 1 and g.rank() >= 0:
        _write(tensor, _between_processes.collective(tensor._data, g.ranks(), "reduce", name))
    return _done([tensor], async_op)


def reduce(tensor: Any, dst: int | None = None, op: ReduceOp = ReduceOp.SUM,
           group: Any = None, async_op: bool = False, group_dst: int | None = None):
    """Reduce ``tensor`` over the group into the process of global rank ``dst`` (or group
    rank ``group_dst``); the others' tensors are left as they are."""
    _check(tensor, "reduce")
    name = _op(op)
    g = resolve(group)
    dst = _peer(g, dst, group_dst, "dst")
    if g.size() > 1 and g.rank() >= 0:
        out = _between_processes.collective(tensor._data, g.ranks(), "reduce", name)
        if jax.process_index() == dst:
            _write(tensor, out)
    return _done([tensor], async_op)


def _peer(g, rank, group_rank, what):
    if rank is not None and group_rank is not None:
        raise ValueError("Can't specify both group_rank and global_rank")
    if rank is None and group_rank is None:
        raise ValueError(f"Must specify global_rank or group_rank (pass {what}= or "
                         f"group_{what}=)")
    if rank is None:
        if not 0 <= group_rank < g.size():
            raise ValueError(f"Group rank {group_rank} is not part of group {g} (expected "
                             f"0 <= group_{what} < {g.size()})")
        rank = g.ranks()[group_rank]
    if rank not in g.ranks():
        raise ValueError(f"Global rank {rank} is not part of group {g} ({what}= is a "
                         "global rank)")
    return rank


def broadcast(tensor: Any, src: int | None = None, group: Any = None, async_op: bool = False,
              group_src: int | None = None) -> Work | None:
    """Copy ``tensor`` of the process of global rank ``src`` (or group rank ``group_src``)
    into ``tensor`` on every process of the group."""
    _check(tensor, "broadcast")
    g = resolve(group)
    src = _peer(g, src, group_src, "src")
    if g.size() > 1 and g.rank() >= 0:
        _write(tensor, _between_processes.collective(tensor._data, g.ranks(), "broadcast",
                                                     g.ranks().index(src)))
    return _done([tensor], async_op)


def _gather(tensor, g):
    if g.size() > 1 and g.rank() >= 0:
        return _between_processes.collective(tensor._data, g.ranks(), "gather")
    return tensor._data[None]


def all_gather(tensor_list: list[Any], tensor: Any, group: Any = None,
               async_op: bool = False) -> Work | None:
    """Fill ``tensor_list`` (one tensor per process of the group, in rank order) with
    every process's ``tensor``."""
    _check(tensor, "all_gather")
    g = resolve(group)
    if not isinstance(tensor_list, list):
        raise TypeError(f"Invalid function argument. Expected parameter `tensor_list` of type "
                        f"List[torch.Tensor]\n             but got {type(tensor_list)} "
                        "instead.")
    if len(tensor_list) != g.size():
        raise RuntimeError(f"all_gather(): invalid output tensor list (expected length "
                           f"{g.size()}, one tensor per rank of the group, got "
                           f"{len(tensor_list)})")
    rows = _gather(tensor, g)
    for i, out in enumerate(tensor_list):
        _check(out, "all_gather", f"tensor_list[{i}]")
        _write(out, rows[i])
    return _done(tensor_list, async_op)


def all_gather_into_tensor(output_tensor: Any, input_tensor: Any, group: Any = None,
                           async_op: bool = False) -> Work | None:
    """Gather every process's ``input_tensor`` into ``output_tensor``: concatenated along
    the first dimension (``world * n`` rows) or stacked (shape ``(world, *input.shape)``)."""
    _check(output_tensor, "all_gather_into_tensor", "output_tensor")
    _check(input_tensor, "all_gather_into_tensor", "input_tensor")
    g = resolve(group)
    rows = _gather(input_tensor, g)
    if tuple(output_tensor.shape) == tuple(rows.shape):
        _write(output_tensor, rows)
    elif input_tensor.ndim and tuple(output_tensor.shape) == (
            g.size() * input_tensor.shape[0],) + tuple(input_tensor.shape[1:]):
        _write(output_tensor, rows.reshape(output_tensor.shape))
    else:
        raise ValueError(f"all_gather_into_tensor(): output_tensor of shape "
                         f"{tuple(output_tensor.shape)} must be {g.size()} times input_tensor "
                         f"{tuple(input_tensor.shape)} (concatenated or stacked)")
    return _done([output_tensor], async_op)


def reduce_scatter(output: Any, input_list: list[Any], op: ReduceOp = ReduceOp.SUM,
                   group: Any = None, async_op: bool = False) -> Work | None:
    """Reduce the lists of all processes element by element; process of group rank ``r``
    gets entry ``r`` of the result in ``output``."""
    _check(output, "reduce_scatter", "output")
    g = resolve(group)
    if len(input_list) != g.size():
        raise ValueError(f"reduce_scatter(): input_list must hold {g.size()} tensors (one "
                         f"per rank of the group), got {len(input_list)}")
    for i, t in enumerate(input_list):
        _check(t, "reduce_scatter", f"input_list[{i}]")
    stacked = Tensor._wrap(jax.numpy.stack([t._data for t in input_list]))
    return reduce_scatter_tensor(output, stacked, op, group, async_op)


def reduce_scatter_tensor(output: Any, input: Any, op: ReduceOp = ReduceOp.SUM,
                          group: Any = None, async_op: bool = False) -> Work | None:
    """Reduce ``input`` over the group and give group rank ``r`` its ``r``-th chunk along
    the first dimension (``input`` holds ``world`` times ``output``'s rows, or is stacked)."""
    _check(output, "reduce_scatter_tensor", "output")
    _check(input, "reduce_scatter_tensor", "input")
    name = _op(op)
    g = resolve(group)
    data = input._data
    if g.size() > 1 and g.rank() >= 0:
        data = _between_processes.collective(data, g.ranks(), "reduce", name)
    r, n = max(g.rank(), 0), g.size()
    if data.ndim == output.ndim + 1 and data.shape[0] == n:
        _write(output, data[r])
    elif data.ndim and data.shape[0] == n * (output.shape[0] if output.ndim else 0):
        k = output.shape[0]
        _write(output, data[r * k:(r + 1) * k])
    else:
        raise ValueError(f"reduce_scatter_tensor(): input of shape {tuple(input.shape)} must "
                         f"be {n} times output {tuple(output.shape)}")
    return _done([output], async_op)


def root(g, rank, group_rank, what):
    """The global rank of a rooted collective's root (``dst``/``src``; default: global
    rank 0)."""
    if rank is None and group_rank is None:
        rank = 0
    return _peer(g, rank, group_rank, what)


def only_at_root(given, is_root, name, root_kind):
    """PyTorch's check that the root (``destination``/``source``) passes a list and only
    it."""
    if is_root and not given:
        raise ValueError(f"Argument ``{name}`` must be specified on {root_kind} rank.")
    if not is_root and given:
        raise ValueError(f"Argument ``{name}`` must NOT be specified on non-{root_kind} ranks.")


def _rooted(tensor, fn, group, rank, group_rank, what, listed, name):
    """The group, root and list (only the root passes one, one tensor per rank) of a
    rooted collective (``gather``, ``scatter``), checked as PyTorch checks them."""
    _check(tensor, fn)
    g = resolve(group)
    rank = root(g, rank, group_rank, what)
    only_at_root(listed, jax.process_index() == rank, name,
                 {"dst": "destination", "src": "source"}[what])
    for i, t in enumerate(listed or ()):
        _check(t, fn, f"{name}[{i}]")
    if listed and g.rank() >= 0 and len(listed) != g.size():
        raise ValueError(f"{fn}(): {name} must hold {g.size()} tensors (one per rank of the "
                         f"group), got {len(listed)}")
    return g, rank, listed or []


def gather(tensor: Any, gather_list: list[Any] | None = None, dst: int | None = None,
           group: Any = None, async_op: bool = False,
           group_dst: int | None = None) -> Work | None:
    """Gather every process's ``tensor`` into ``gather_list`` (one tensor per process of the
    group, in rank order) on the process of global rank ``dst`` (or group rank
    ``group_dst``; default: global rank 0); the other processes pass no list.

    ::

        gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None)

    Every process's ``tensor`` has the same shape and dtype.
    """
    g, dst, gather_list = _rooted(tensor, "gather", group, dst, group_dst, "dst",
                                  gather_list, "gather_list")
    if g.rank() < 0:
        return _done([], async_op)
    rows = _gather(tensor, g)
    for out, row in zip(gather_list, rows):
        _write(out, row)
    return _done(gather_list, async_op)


def scatter(tensor: Any, scatter_list: list[Any] | None = None, src: int | None = None,
            group: Any = None, async_op: bool = False,
            group_src: int | None = None) -> Work | None:
    """Give the process of group rank ``r`` entry ``r`` of ``scatter_list``, the list the
    process of global rank ``src`` (or group rank ``group_src``; default: global rank 0)
    passes, in its ``tensor``; the other processes pass no list.

    ::

        scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None)
    """
    g, src, scatter_list = _rooted(tensor, "scatter", group, src, group_src, "src",
                                   scatter_list, "scatter_list")
    if g.rank() < 0:
        return _done([], async_op)
    if scatter_list:
        rows = jax.numpy.stack([t._data.astype(tensor._data.dtype) for t in scatter_list])
    else:   # what the source sends; this process's rows are not read
        rows = jax.numpy.zeros((g.size(),) + tuple(tensor.shape), tensor._data.dtype)
    if g.size() > 1:
        rows = _between_processes.collective(rows, g.ranks(), "broadcast",
                                             g.ranks().index(src))
    _write(tensor, rows[g.rank()])
    return _done([tensor], async_op)
