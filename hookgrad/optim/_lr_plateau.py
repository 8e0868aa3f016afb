"""``ReduceLROnPlateau``: the learning rate lowered when a metric stops improving
(re-exported by ``hookgrad.optim.lr_scheduler``)."""
from __future__ import annotations

import math
from typing import Any, SupportsFloat

from ._lr_schedulers_base import (EPOCH_DEPRECATION_WARNING, LRScheduler, _group_values,
                                  _set_group_lr)
from .optimizer import Optimizer
from .. import _errors
from .._arguments import keep


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
        keep(self, locals(), "patience", "cooldown", "eps")
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
        keep(self, locals(), "mode", "threshold", "threshold_mode")

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state returned by ``state_dict()``."""
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)
