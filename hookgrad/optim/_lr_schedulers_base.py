"""The scheduler base class and the first schedulers; ``hookgrad.optim.lr_scheduler``
is the public module (its docstring tells how schedulers work)."""
import math
import types
import typing
import weakref
from bisect import bisect_right
from collections import Counter

from .._arguments import keep
from .._tensor import Tensor
from .optimizer import Optimizer
from .. import _errors

__all__ = ["LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "ExponentialLR",
           "CosineAnnealingLR", "LinearLR"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
    "where possible. Please use `scheduler.step()` to step the scheduler. During the "
    "deprecation, if epoch is different from None, the closed form is used instead of the "
    "new chainable form, where available. Please open an issue if you are unable to "
    "replicate your use case: https://github.com/pytorch/pytorch/issues/new/choose.")


def _group_values(optimizer, key):
    # copies: a caller mutating a returned Tensor must not change the group's lr
    return [g[key].clone() if isinstance(g[key], Tensor) else g[key]
            for g in optimizer.param_groups]


def _per_group(name, optimizer, value):
    """``value`` for each parameter group: a list of one per group, or one for all."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(value)} values, param_groups has {n}.")
        return [v.clone() if isinstance(v, Tensor) else v for v in value]
    return [value.clone() if isinstance(value, Tensor) else value] * n


def _set_group_lr(group, value):
    if isinstance(group["lr"], Tensor):  # keep the Tensor object: it may be shared
        group["lr"].fill_(float(value))
    else:
        group["lr"] = value


def _track_optimizer_step(scheduler, optimizer):
    """Wrap ``optimizer.step`` so that the scheduler can tell whether it ran before the
    scheduler's first ``step()`` (PyTorch's ordering warning)."""
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    opt_ref = weakref.ref(optimizer)
    func = type(optimizer).step

    def step(*args, **kwargs):
        opt = opt_ref()
        opt._opt_called = True
        return func(opt, *args, **kwargs)

    step.__doc__ = func.__doc__
    step._wrapped_by_lr_sched = True
    optimizer.step = step


class LRScheduler:
    r"""Base class of the learning-rate schedulers.

    .. code-block:: python

        LRScheduler(optimizer, last_epoch=-1)

    Subclasses define ``get_lr()`` (the new lr of each group from the current ones and
    ``last_epoch``) and optionally ``_get_closed_form_lr()`` (used by ``step(epoch)``).
    Constructing a scheduler records ``initial_lr`` in each group and takes the first step
    (``last_epoch`` becomes 0).
    """

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                lr = group["lr"]
                group.setdefault("initial_lr", lr.clone() if isinstance(lr, Tensor) else lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming scheduler with last_epoch >= 0.\nThis typically happens "
                        "when:\n1. You're trying to resume training from a checkpoint but "
                        "haven't properly loaded the optimizer state\n2. You're using "
                        "last_epoch >= 0 for a fresh training run (not recommended)")
        self.base_lrs = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _track_optimizer_step(self, optimizer)
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict[str, typing.Any]:
        """The scheduler's state: every attribute but the optimizer."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, typing.Any]) -> None:
        """Load a state returned by ``state_dict()``."""
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[float | Tensor]:
        """The learning rate of each group, as the last ``step()`` set it."""
        return self._last_lr

    def get_lr(self) -> list[float | Tensor]:
        """The learning rate of each group for the current ``last_epoch`` (called by
        ``step()``; read ``get_last_lr()`` instead)."""
        raise NotImplementedError

    def _warn_if_outside_step(self):
        if not self._get_lr_called_within_step:
            _errors.warn("To get the last learning rate computed by the scheduler, please "
                         "use `get_last_lr()`.", UserWarning)

    def step(self, epoch: int | None = None) -> None:
        """Advance the schedule by one epoch and write the new lrs into the groups.

        .. code-block:: python

            step(epoch: int | None = None) -> None

        Passing ``epoch`` is deprecated: it jumps to that epoch with the closed form.
        """
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                _errors.warn(
                    "Seems like `optimizer.step()` has been overridden after learning rate "
                    "scheduler initialization. Please, make sure to call `optimizer.step()` "
                    "before `lr_scheduler.step()`. See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning)
            elif not getattr(self.optimizer, "_opt_called", False):
                _errors.warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In "
                    "PyTorch 1.1.0 and later, you should call them in the opposite order: "
                    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
                    "will result in PyTorch skipping the first value of the learning rate "
                    "schedule. See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning)
        self._step_count += 1
        if epoch is not None:
            _errors.warn(EPOCH_DEPRECATION_WARNING, UserWarning)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        """Move to the next epoch (or jump to ``epoch``, closed form) and write the lrs."""
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_lr(group, lr)
        self._last_lr = _group_values(self.optimizer, "lr")


class LambdaLR(LRScheduler):
    r"""Set each group's lr to its initial lr times ``lr_lambda(epoch)``.

    .. code-block:: python

        LambdaLR(optimizer, lr_lambda, last_epoch=-1)

    ``lr_lambda``: a function of the epoch, or a list with one per parameter group.
    ``state_dict()`` saves the ``__dict__`` of callable objects, not of plain functions.

    Example::

        >>> sched = LambdaLR(opt, lr_lambda=lambda epoch: 0.95 ** epoch)
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * n
        else:
            if len(lr_lambda) != n:
                raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, typing.Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict[str, typing.Any]) -> None:
        state = dict(state_dict)
        saved = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, attrs in zip(self.lr_lambdas, saved):
            if attrs is not None:
                fn.__dict__.update(attrs)

    def get_lr(self) -> list[float | Tensor]:
        self._warn_if_outside_step()
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class StepLR(LRScheduler):
    r"""Multiply each group's lr by ``gamma`` every ``step_size`` epochs.

    .. code-block:: python

        StepLR(optimizer, step_size, gamma=0.1, last_epoch=-1)

    Example::

        >>> sched = StepLR(opt, step_size=30, gamma=0.1)  # 0.05 → 0.005 at epoch 30 ...
    """

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        keep(self, locals(), "step_size", "gamma")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float | Tensor]:
        self._warn_if_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        k = self.last_epoch // self.step_size
        return [base * self.gamma ** k for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    r"""Multiply each group's lr by ``gamma`` at each epoch listed in ``milestones``
    (a milestone listed twice multiplies by ``gamma`` twice).

    .. code-block:: python

        MultiStepLR(optimizer, milestones, gamma=0.1, last_epoch=-1)

    Example::

        >>> sched = MultiStepLR(opt, milestones=[30, 80], gamma=0.1)
    """

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float | Tensor]:
        self._warn_if_outside_step()
        if self.last_epoch not in self.milestones:
            return _group_values(self.optimizer, "lr")
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [g["lr"] * factor for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma ** passed for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    r"""Multiply each group's lr by ``gamma`` every epoch.

    .. code-block:: python

        ExponentialLR(optimizer, gamma, last_epoch=-1)
    """

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float | Tensor]:
        self._warn_if_outside_step()
        if self._is_initial:  # constructing (possibly resuming): keep the current lrs
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    r"""Anneal each group's lr from its initial value to ``eta_min`` along a cosine over
    ``T_max`` epochs (then back up, periodically), in PyTorch's recursive form:

    .. code-block:: python

        CosineAnnealingLR(optimizer, T_max, eta_min=0.0, last_epoch=-1)

    ``lr_t = eta_min + (lr_{t-1} - eta_min) * c(t) / c(t-1)`` with
    ``c(t) = 1 + cos(pi t / T_max)``, which is the closed form
    ``eta_min + (initial_lr - eta_min) * c(t) / 2``.

    Example::

        >>> sched = CosineAnnealingLR(opt, T_max=100, eta_min=1e-5)
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        keep(self, locals(), "T_max", "eta_min")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float | Tensor]:
        self._warn_if_outside_step()
        groups = self.optimizer.param_groups
        t, T, lo = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        if self._step_count == 1 and t > 0:  # resumed at epoch t: closed form
            return [lo + (base - lo) * (1 + math.cos(t * math.pi / T)) / 2
                    for base in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:  # at the bottom: the recursion's ratio is 0/0
            return [g["lr"] + (base - lo) * (1 - math.cos(math.pi / T)) / 2
                    for base, g in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
                * (g["lr"] - lo) + lo for g in groups]

    def _get_closed_form_lr(self):
        t, T, lo = self.last_epoch, self.T_max, self.eta_min
        return [lo + (base - lo) * (1 + math.cos(math.pi * t / T)) / 2
                for base in self.base_lrs]


class LinearLR(LRScheduler):
    r"""Scale each group's lr by a factor going linearly from ``start_factor`` to
    ``end_factor`` over ``total_iters`` epochs.

    .. code-block:: python

        LinearLR(optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1)

    Example::

        >>> sched = LinearLR(opt, start_factor=0.5, total_iters=4)  # 0.025, 0.03125, ...
    """

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 "
                             "and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        keep(self, locals(), "start_factor", "end_factor", "total_iters")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float | Tensor]:
        self._warn_if_outside_step()
        groups = self.optimizer.param_groups
        t, s, e, n = self.last_epoch, self.start_factor, self.end_factor, self.total_iters
        if t == 0:
            return [g["lr"] * s for g in groups]
        if self._is_initial or t > n:
            return _group_values(self.optimizer, "lr")
        # ratio of consecutive factors s + (e - s) * t / n
        return [g["lr"] * (1.0 + (e - s) / (n * s + (t - 1) * (e - s))) for g in groups]

    def _get_closed_form_lr(self):
        t, s, e, n = self.last_epoch, self.start_factor, self.end_factor, self.total_iters
        return [base * (s + (e - s) * min(n, t) / n) for base in self.base_lrs]
