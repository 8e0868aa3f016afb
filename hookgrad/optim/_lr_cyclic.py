"""Schedules that cycle: ``CyclicLR`` (the cyclical learning-rate policy), ``OneCycleLR``
(the 1cycle policy), both cycling momentum inversely, and ``CosineAnnealingWarmRestarts``."""
from __future__ import annotations

import functools
import math
import types
from typing import Any

from .._arguments import keep
from .._tensor import Tensor
from ._lr_schedulers_base import LRScheduler, _group_values, _per_group, _set_group_lr
from .optimizer import Optimizer


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
        self.T_0 = self.T_i = T_0
        keep(self, locals(), "T_mult", "eta_min")
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


def _triangular(x):
    return 1.0


def _triangular2(x):
    return 1 / (2.0 ** (x - 1))


def _exp_range(gamma, x):
    return gamma ** x


class CyclicLR(_MomentumCycling, LRScheduler):
    r"""Cycle each group's lr between ``base_lr`` and ``max_lr`` (stepped once per batch):
    up for ``step_size_up`` steps, down for ``step_size_down``; momentum (or Adam's
    ``beta1``) cycles the other way between ``max_momentum`` and ``base_momentum``.

    .. code-block:: python

        CyclicLR(optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1)

    ``mode``: ``"triangular"`` (constant amplitude), ``"triangular2"`` (halved each cycle),
    ``"exp_range"`` (scaled by ``gamma ** iteration``), or a custom ``scale_fn`` of the
    cycle or iteration (``scale_mode``).

    Example::

        >>> sched = CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=500)
    """

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                if isinstance(group["lr"], Tensor):
                    group["lr"].fill_(lr)
                else:
                    group["lr"] = lr
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.base_momentums, self.max_momentums = self._setup_momentum(
                optimizer, base_momentum, max_momentum, last_epoch, base_first=True)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self):
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref, self.scale_mode = _triangular, "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref, self.scale_mode = _triangular2, "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = functools.partial(_exp_range, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x) -> float:
        """The amplitude's scale at cycle (or iteration) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    def get_lr(self) -> list[float | Tensor]:
        self._warn_if_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (top - base) * scale_factor * scale
               for base, top in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, base, top in zip(self.optimizer.param_groups, self.base_momentums,
                                        self.max_momentums):
                self._set_momentum(group, top - (top - base) * scale_factor * scale)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state; a custom ``scale_fn`` is saved as its ``__dict__`` when it
        is a callable object, not a function."""
        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("optimizer", "_scale_fn_ref", "_scale_fn_custom")}
        fn = self._scale_fn_custom
        state["_scale_fn_custom"] = (fn.__dict__.copy() if fn is not None and
                                     not isinstance(fn, types.FunctionType) else None)
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state returned by ``state_dict()``."""
        state = dict(state_dict)
        fn = state.pop("_scale_fn_custom")
        self.__dict__.update(state)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()
