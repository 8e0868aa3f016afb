"""Schedulers made of schedulers: ``SequentialLR`` (one after another at milestones) and
``ChainedScheduler`` (all of them each step); re-exported by ``hookgrad.optim.lr_scheduler``."""
from __future__ import annotations

from bisect import bisect_right
from typing import Any

from ._lr_plateau import ReduceLROnPlateau
from ._lr_schedulers_base import LRScheduler, _group_values, _set_group_lr


def _check_schedulers(owner, schedulers, optimizer):
    name = type(owner).__name__
    for i, s in enumerate(schedulers):
        if not hasattr(s, "optimizer"):
            raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
        if isinstance(s, ReduceLROnPlateau):
            raise ValueError(
                f"{name} does not support `ReduceLROnPlateau` scheduler as it requires "
                "additional kwargs to be specified when calling `step`, but got one at index "
                f"{i} in the given schedulers sequence.")
        if optimizer != s.optimizer:
            raise ValueError(
                f"{name} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {type(s).__name__} at index {i} has {s.optimizer}, which is "
                f"different from {type(optimizer).__name__}.")


class _Composite(LRScheduler):
    """State dict of a scheduler made of schedulers: theirs, nested."""

    def state_dict(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        inner = state.pop("_schedulers")
        self.__dict__.update(state)
        for s, d in zip(self._schedulers, inner):
            s.load_state_dict(d)


class SequentialLR(_Composite):
    r"""Run ``schedulers[i]`` between ``milestones[i-1]`` and ``milestones[i]``; at each
    milestone the next scheduler starts from its epoch 0.

    .. code-block:: python

        SequentialLR(optimizer, schedulers, milestones, last_epoch=-1)

    Example::

        >>> warm = LinearLR(opt, start_factor=0.1, total_iters=5)
        >>> decay = ExponentialLR(opt, gamma=0.9)
        >>> sched = SequentialLR(opt, schedulers=[warm, decay], milestones=[5])
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler, but got "
                             "no scheduler.")
        _check_schedulers(self, schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                f"than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to "
                f"{len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # the schedulers each stepped once when built: undo that, restart the first one
        for group in optimizer.param_groups:
            _set_group_lr(group, group["initial_lr"])
        _undo_initial_steps(self)
        first = schedulers[bisect_right(milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:
        """Step the scheduler whose interval holds the next epoch."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


def _undo_initial_steps(sched):
    inner = getattr(sched, "_schedulers", None)
    if inner is not None:
        for s in inner:
            _undo_initial_steps(s)
    elif hasattr(sched, "last_epoch"):
        sched.last_epoch -= 1


class ChainedScheduler(_Composite):
    r"""Step several schedulers of one optimizer together, each after the other, so their
    effects multiply.

    .. code-block:: python

        ChainedScheduler(schedulers, optimizer=None)

    Example::

        >>> sched = ChainedScheduler([ConstantLR(opt, factor=0.1, total_iters=2),
        ...                           ExponentialLR(opt, gamma=0.9)])
    """

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler to be "
                             "chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(self, schedulers, optimizer)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(schedulers[-1].optimizer, "lr")

    def step(self) -> None:
        """Step every scheduler, in order."""
        for s in self._schedulers:
            s.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")
