"""Schedules that scale the learning rate by a factor: ``MultiplicativeLR``, ``ConstantLR``,
``PolynomialLR`` (re-exported by ``hookgrad.optim.lr_scheduler``)."""
from __future__ import annotations

from .._arguments import keep
from .._tensor import Tensor
from ._lr_schedulers_base import LambdaLR, LRScheduler, _group_values


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
        keep(self, locals(), "factor", "total_iters")
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
