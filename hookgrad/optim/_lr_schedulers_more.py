"""More of ``torch.optim.lr_scheduler``: multiplicative, constant, polynomial, warm
restarts, one-cycle, plateau, sequential and chained schedules (re-exported by
``hookgrad.optim.lr_scheduler``; see its docstring)."""
from __future__ import annotations

import math
from bisect import bisect_right
from typing import Any, SupportsFloat

from .._tensor import Tensor
from ._lr_schedulers_base import (EPOCH_DEPRECATION_WARNING, LambdaLR, LRScheduler,
                                  _group_values, _set_group_lr)
from .optimizer import Optimizer
from .. import _errors

__all__ = ["MultiplicativeLR", "ConstantLR", "PolynomialLR", "CosineAnnealingWarmRestarts",
           "OneCycleLR", "ReduceLROnPlateau", "SequentialLR", "ChainedScheduler"]


def _per_group(name, optimizer, value):
    """``value`` for each parameter group: a list of one per group, or one for all."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(value)} values, param_groups has {n}.")
        return [v.clone() if isinstance(v, Tensor) else v for v in value]
    return [value.clone() if isinstance(value, Tensor) else value] * n


class MultiplicativeLR(LambdaLR):
    r"""Multiply each group's lr by ``lr_lambda(epoch)`` every epoch (after the first).

    .. code-block:: python

        MultiplicativeLR(optimizer, lr_lambda, last_epoch=-1)

    Example::

        >>> sched = MultiplicativeLR(opt, lr_lambda=lambda epoch: 0.95)
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        for fn in (lr_lambda if isinstance(lr_lambda, (list, tuple)) else [lr_lambda]):
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, lr_lambda, last_epoch)

    def get_lr(self) -> list[float | Tensor]:
        self._warn_if_outside_step()
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * fn(self.last_epoch)
                for fn, g in zip(self.lr_lambdas, self.optimizer.param_groups)]


class ConstantLR(LRScheduler):
    r"""Multiply each group's lr by ``factor`` until epoch ``total_iters``.

    .. code-block:: python

        ConstantLR(optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1)

    Example::

        >>> sched = ConstantLR(opt, factor=0.5, total_iters=4)  # 0.025 x4, then 0.05
    """

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float | Tensor]:
        self._warn_if_outside_step()
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [g["lr"] * self.factor for g in groups]
        if self.last_epoch != self.total_iters:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * (1.0 / self.factor) for g in groups]

    def _get_closed_form_lr(self):
        f = self.factor if self.last_epoch < self.total_iters else 1.0
        return [base * f for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    r"""Decay each group's lr to 0 over ``total_iters`` epochs as
    ``(1 - t/total_iters) ** power``.

    .. code-block:: python

        PolynomialLR(optimizer, total_iters=5, power=1.0, last_epoch=-1)

    Example::

        >>> sched = PolynomialLR(opt, total_iters=4, power=2.0)
    """

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float | Tensor]:
        self._warn_if_outside_step()
        t, n = self.last_epoch, self.total_iters
        if self._is_initial or t > n:
            return _group_values(self.optimizer, "lr")
        factor = ((1.0 - t / n) / (1.0 - (t - 1) / n)) ** self.power
        return [g["lr"] * factor for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        t, n = self.last_epoch, self.total_iters
        return [base * (1.0 - min(n, t) / n) ** self.power for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    r"""Cosine annealing from each group's initial lr to ``eta_min`` over ``T_i`` epochs,
    restarting at the initial lr; ``T_i`` starts at ``T_0`` and is multiplied by ``T_mult``
    at each restart (SGDR).

    .. code-block:: python

        CosineAnnealingWarmRestarts(optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1)

    ``step(epoch)`` takes fractional epochs (``step(epoch + i / iters)`` per batch).

    Example::

        >>> sched = CosineAnnealingWarmRestarts(opt, T_0=10, T_mult=2)
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float | Tensor]:
        self._warn_if_outside_step()
        lo = self.eta_min
        c = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [lo + (base - lo) * c for base in self.base_lrs]

    def _locate(self, epoch):
        """``T_cur`` and ``T_i`` at a (possibly fractional) epoch."""
        if epoch < self.T_0:
            return epoch, self.T_0
        if self.T_mult == 1:
            return epoch % self.T_0, self.T_0
        # restarts after T_0 (m^n - 1) / (m - 1) epochs: the cycle n is a log
        m = self.T_mult
        n = int(math.log(epoch / self.T_0 * (m - 1) + 1, m))
        return epoch - self.T_0 * (m ** n - 1) / (m - 1), self.T_0 * m ** n

    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch, or go to ``epoch`` (a float allowed)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur %= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            self.T_cur, self.T_i = self._locate(epoch)
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_lr(group, lr)
        self._last_lr = _group_values(self.optimizer, "lr")


class _MomentumCycling:
    """What ``OneCycleLR`` and ``CyclicLR`` share: the momentum (or ``betas[0]``) they
    cycle against the learning rate."""

    def _setup_momentum(self, optimizer, base_momentum, max_momentum, last_epoch,
                        base_first=False):
        """Check the optimizer has a momentum, start each group at its ``max_momentum``;
        returns the groups' base and max momenta (``base_first``: checked in that order,
        as ``CyclicLR`` does)."""
        if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
            raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` "
                             "option enabled")
        self.use_beta1 = "betas" in optimizer.defaults
        names = [("base_momentum", base_momentum), ("max_momentum", max_momentum)]
        values = {n: _per_group(n, optimizer, v)
                  for n, v in (names if base_first else names[::-1])}
        bases, maxs = values["base_momentum"], values["max_momentum"]
        if last_epoch == -1:
            for m, b, group in zip(maxs, bases, optimizer.param_groups):
                self._set_momentum(group, m)
                group["max_momentum"] = m
                group["base_momentum"] = b
        return bases, maxs

    def _set_momentum(self, group, value):
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value


def _anneal(kind, start, end, pct):
    if kind == "cos":
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
    return (end - start) * pct + start


def _phase(end_step, lrs, momenta):
    return {"end_step": end_step, "start_lr": lrs[0], "end_lr": lrs[1],
            "start_momentum": momenta[0], "end_momentum": momenta[1]}


class OneCycleLR(_MomentumCycling, LRScheduler):
    r"""The 1cycle policy: lr from ``max_lr / div_factor`` up to ``max_lr``, then down to
    ``initial_lr / final_div_factor``, stepped once per batch; momentum (or Adam's
    ``beta1``) cycles the other way between ``max_momentum`` and ``base_momentum``.

    .. code-block:: python

        OneCycleLR(optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                   pct_start=0.3, anneal_strategy="cos", cycle_momentum=True,
                   base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                   final_div_factor=1e4, three_phase=False, last_epoch=-1)

    Example::

        >>> sched = OneCycleLR(opt, max_lr=0.1, total_steps=1000)
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True,
                 base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                 final_div_factor=1e4, three_phase=False, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        self.total_steps = self._total_steps(total_steps, epochs, steps_per_epoch)
        n = self.total_steps
        up = float(pct_start * n) - 1
        if three_phase:
            self._schedule_phases = [
                _phase(up, ("initial_lr", "max_lr"), ("max_momentum", "base_momentum")),
                _phase(float(2 * pct_start * n) - 2, ("max_lr", "initial_lr"),
                       ("base_momentum", "max_momentum")),
                _phase(n - 1, ("initial_lr", "min_lr"), ("max_momentum", "max_momentum"))]
        else:
            self._schedule_phases = [
                _phase(up, ("initial_lr", "max_lr"), ("max_momentum", "base_momentum")),
                _phase(n - 1, ("max_lr", "min_lr"), ("base_momentum", "max_momentum"))]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for m, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = m / div_factor
                group["max_lr"] = m
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._setup_momentum(optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _total_steps(total_steps, epochs, steps_per_epoch):
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            return total_steps
        if epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError("Expected positive integer steps_per_epoch, but got "
                                 f"{steps_per_epoch}")
            return epochs * steps_per_epoch
        raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")

    def get_lr(self) -> list[float | Tensor]:
        self._warn_if_outside_step()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total "
                             f"steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end = phase["end_step"]
                if step <= end or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start)
                    break
                start = end
            kind = self._anneal_func_type
            lrs.append(_anneal(kind, group[phase["start_lr"]], group[phase["end_lr"]], pct))
            if self.cycle_momentum:
                self._set_momentum(group, _anneal(kind, group[phase["start_momentum"]],
                                                  group[phase["end_momentum"]], pct))
        return lrs


class ReduceLROnPlateau(LRScheduler):
    r"""Multiply each group's lr by ``factor`` once the metric passed to ``step(metrics)``
    has not improved for ``patience`` epochs.

    .. code-block:: python

        ReduceLROnPlateau(optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                          threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8)

    An improvement beats the best value by ``threshold`` (``"rel"``: a fraction of it;
    ``"abs"``: an amount). After a reduction, ``cooldown`` epochs pass before counting bad
    epochs again; no lr goes below ``min_lr``, and changes smaller than ``eps`` are skipped.

    Example::

        >>> sched = ReduceLROnPlateau(opt, mode="min", patience=5)
        >>> for epoch in range(100):
        ...     val_loss = validate(...)
        ...     sched.step(val_loss)
    """

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != n:
                raise ValueError(f"expected {n} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * n
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_values(optimizer, "lr")
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def step(self, metrics: SupportsFloat, epoch: int | None = None) -> None:
        """Record this epoch's ``metrics`` (a number or 1-element Tensor) and reduce the
        lrs if it has stopped improving."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            _errors.warn(EPOCH_DEPRECATION_WARNING, UserWarning)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:  # bad epochs in cooldown do not count
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_values(self.optimizer, "lr")

    def _reduce_lr(self):
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs "
                    f"from when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), "
                    "usually due to a new param group being added to the optimizer. Please "
                    "modify the `min_lrs` field to match the length of the `optimizer` param "
                    "groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, floor in zip(groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, floor)
            if old - new > self.eps:
                _set_group_lr(group, new)

    def _is_better(self, a, best):
        if self.threshold_mode == "rel":
            scale = 1.0 - self.threshold if self.mode == "min" else self.threshold + 1.0
            return a < best * scale if self.mode == "min" else a > best * scale
        if self.mode == "min":
            return a < best - self.threshold
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state returned by ``state_dict()``."""
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)


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
