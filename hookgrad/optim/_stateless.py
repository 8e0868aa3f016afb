"""``swap_in_optimizer_params_and_state``: run an optimizer on other parameters and state
for the length of a ``with`` block."""
from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Generator
from typing import Any

from .._tensor import Tensor

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


def _check_state(state) -> dict:
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping "
                           "packed parameter ids to per-param state dicts, got "
                           f"{type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by "
                           "packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be "
                           "dictionaries.")
    return state


def _check_groups(optimizer, groups) -> list:
    if not isinstance(groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list "
                           f"of param-group dicts, got {type(groups).__name__}.")
    if len(optimizer.param_groups) != len(groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups "
                           "than the live optimizer.")
    return groups


def _group_ids(index, live, group) -> list[int]:
    """The packed parameter ids of the swap-in ``group``, checked against the ``live`` one."""
    if not isinstance(group, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = group.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style "
                           "param_groups[*]['params'] entries keyed by packed parameter ids.")
    if len(live["params"]) != len(ids):
        raise RuntimeError(f"swapin_optim_state param group {index} has a different number of "
                           "params than the live optimizer param group.")
    only_new = [k for k in group if k not in live]
    only_live = [k for k in live if k not in group]
    if only_new or only_live:
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param group keys to "
                           "exactly match the live optimizer group keys for group "
                           f"{index}. Keys only in swap-in: {only_new}. Keys only in live: "
                           f"{only_live}.")
    return ids


def _plan(optimizer, parameters, swapin) -> tuple[dict, list]:
    """The swap-in state and, per group, ``(live group, swap-in group, its parameters)``."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _check_state(swapin.get("state"))
    groups = _check_groups(optimizer, swapin.get("param_groups"))
    flat = list(parameters.values())
    start, seen, plan = 0, set(), []
    for index, (live, group) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _group_ids(index, live, group)
        seen.update(ids)
        if start + len(ids) > len(flat):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match "
                               "optimizer.param_groups ordering.")
        plan.append((live, group, flat[start:start + len(ids)]))
        start += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by "
                           f"packed parameter ids from param_groups[*]['params']; got extra "
                           f"keys {extra!r}.")
    return state, plan


def _write_back(optimizer, swapped) -> None:
    """PyTorch's steps edit the state Tensors in place, so the caller's dict sees the new
    values; hookgrad's built-ins keep their state apart: copy it into those Tensors."""
    for p, given in swapped:
        now = optimizer.state[p]
        for name, t in given.items():
            new = now.get(name)
            if isinstance(t, Tensor) and isinstance(new, Tensor) and new is not t \
                    and new.shape == t.shape:
                t._write_(new._data.astype(t._data.dtype))


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters: dict[str, Tensor],
                                       swapin_optim_state: dict[str, Any]
                                       ) -> Generator[None, None, None]:
    r"""Replace an optimizer's parameters and state with the ones given for the length of
    the ``with`` block, then restore them.

    .. code-block:: python

        swap_in_optimizer_params_and_state(optimizer, swapin_parameters: dict[str, Tensor],
                                           swapin_optim_state: dict) -> ContextManager

    ``swapin_parameters``: Tensors in the order of the optimizer's parameters (as
    ``model.named_parameters()`` gives them); ``step()`` updates them in place.
    ``swapin_optim_state``: an ``optimizer.state_dict()``-shaped dict whose groups have
    the live groups' keys; their options and state apply inside the block, and the
    state's Tensors hold the updated values after it. The optimizer's state must exist
    (a step taken). Unlike ``load_state_dict``, this swaps the parameters too.

    Example::

        >>> sd = copy.deepcopy(opt.state_dict())
        >>> with hookgrad.optim.swap_in_optimizer_params_and_state(opt, shadow_params, sd):
        ...     opt.step()
    """
    state, plan = _plan(optimizer, swapin_parameters, swapin_optim_state)
    storage = optimizer._state_storage()
    snapshots = [dict(g) for g in optimizer.param_groups]
    swapped = []
    try:
        mapping = defaultdict(dict)
        for live, group, params in plan:
            live["params"] = params
            live.update((k, v) for k, v in group.items() if k != "params")
            for p, pid in zip(params, group["params"]):
                mapping[p] = dict(state.get(pid, {}))
                swapped.append((p, state.get(pid, {})))
        optimizer.state = mapping
        yield
        _write_back(optimizer, swapped)
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer._restore_storage(storage)
