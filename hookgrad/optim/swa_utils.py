"""Weight averaging: Stochastic Weight Averaging and exponential moving averages of a model
(``torch.optim.swa_utils``).

Example::

    >>> swa_model = AveragedModel(model)
    >>> swa_sched = SWALR(optimizer, swa_lr=0.05)
    >>> for epoch in range(100):
    ...     train(model, optimizer)
    ...     if epoch >= 75:
    ...         swa_model.update_parameters(model)
    ...         swa_sched.step()
    >>> update_bn(loader, swa_model)
"""
from __future__ import annotations

import itertools
import math
from copy import deepcopy

from .. import _factory
from .._arguments import keep
from .._autograd.grad_mode import no_grad
from .._dtype import int64
from .._tensor import Tensor
from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from ._lr_schedulers_base import LRScheduler, _per_group

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def _floating(t):
    return t.is_floating_point() or t.is_complex()


def get_ema_multi_avg_fn(decay=0.999):
    """The exponential moving average, in place over lists of tensors, for
    ``AveragedModel(multi_avg_fn=...)``: ``ema = decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        if _floating(ema_param_list[0]):
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """The running mean, in place over lists of tensors, for
    ``AveragedModel(multi_avg_fn=...)``: ``avg += (current - avg) / (num_averaged + 1)``."""

    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        if _floating(averaged_param_list[0]):
            weight = 1 / (num_averaged + 1)
            weight = weight.item() if isinstance(weight, Tensor) else weight
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                p_avg.lerp_(p_model, weight)
        else:
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                diff = p_model - p_avg
                if isinstance(num_averaged, Tensor):
                    p_avg.addcdiv_(diff, num_averaged + 1)
                else:
                    p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """The exponential moving average of one tensor, for ``AveragedModel(avg_fn=...)``:
    returns ``decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """The running mean of one tensor, for ``AveragedModel(avg_fn=...)``: returns
    ``avg + (current - avg) / (num_averaged + 1)``."""

    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """AveragedModel(model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False)

    A copy of ``model`` whose parameters are the average of the ``model`` parameters passed
    to :meth:`update_parameters`: the running mean (SWA) by default, or ``avg_fn`` (one
    tensor at a time) or ``multi_avg_fn`` (lists of tensors, in place), e.g. the EMA of
    :func:`get_ema_multi_avg_fn`. With ``use_buffers=True`` the buffers are averaged too;
    otherwise they are copied from ``model``. ``n_averaged`` counts the updates.
    Calling it calls the averaged copy.
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _factory.tensor(0, dtype=int64, device=device))
        keep(self, locals(), "avg_fn", "multi_avg_fn", "use_buffers")

    def forward(self, *args, **kwargs):
        """Run the averaged copy of the model."""
        return self.module(*args, **kwargs)

    def _averaged_pairs(self, model):
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        return [(a.detach(), m.detach().to(a.device)) for a, m in zip(mine, theirs)]

    def update_parameters(self, model):
        """Fold ``model``'s current parameters (and, with ``use_buffers``, buffers) into
        the average; the first call copies them."""
        pairs = self._averaged_pairs(model)
        with no_grad():
            if bool(self.n_averaged == 0):
                for averaged, current in pairs:
                    averaged.copy_(current)
            elif self.multi_avg_fn is not None:
                groups = {}  # one call per (device, dtype), as PyTorch groups them
                for averaged, current in pairs:
                    group = groups.setdefault((str(averaged.device), averaged.dtype), ([], []))
                    group[0].append(averaged)
                    group[1].append(current)
                for averaged, current in groups.values():
                    self.multi_avg_fn(averaged, current, self.n_averaged)
            else:  # PyTorch's CPU path: avg_fn, or the running mean, one tensor at a time
                avg_fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
                for averaged, current in pairs:
                    averaged.copy_(avg_fn(averaged, current,
                                          self.n_averaged.to(averaged.device)))
            if not self.use_buffers:
                for b_avg, b_model in zip(self.module.buffers(), model.buffers(),
                                          strict=True):
                    b_avg.copy_(b_model.detach().to(b_avg.device))
            self.n_averaged += 1


@no_grad()
def update_bn(loader, model, device=None):
    """Recompute the running statistics of ``model``'s batch-norm layers with one pass over
    ``loader`` (a cumulative average over its batches; the first item of a list or tuple
    batch is the input). Call it after averaging: averaged weights need their own
    statistics."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """SWALR(optimizer, swa_lr, anneal_epochs=10, anneal_strategy='cos', last_epoch=-1)

    Anneals each group's lr to ``swa_lr`` (one value, or one per group) over
    ``anneal_epochs`` epochs, by a cosine (``'cos'``) or linear (``'linear'``) ramp, then
    holds it there. Example::

        >>> sched = SWALR(optimizer, swa_lr=0.05, anneal_epochs=5, anneal_strategy="linear")
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        for lr, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups,
                             strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        """Each group's lr for the current step of the annealing."""
        self._warn_if_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        # recover the lr the ramp started from, then move one step further along it
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha)
                    for g in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha)
                for g, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = (self._cosine_anneal if anneal_strategy == "cos"
                            else self._linear_anneal)

    def state_dict(self):
        """The scheduler's state: every attribute but the optimizer and the ramp function."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        """Load a state returned by ``state_dict()``."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
