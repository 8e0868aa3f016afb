"""Learning-rate schedulers (``torch.optim.lr_scheduler``).

A scheduler rewrites ``group["lr"]`` of its optimizer's parameter groups each time its
``step()`` is called (once per epoch, after ``optimizer.step()``). The built-in optimizers
feed ``lr`` to their jitted update as an argument, so a schedule never recompiles. The
schedules follow PyTorch's chainable (recursive) formulas, so the values, including
rounding, are PyTorch's; ``step(epoch)`` uses the closed form, as PyTorch does.

Example::

    >>> opt = hookgrad.optim.SGD(params, lr=0.1)
    >>> sched = hookgrad.optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.1)
    >>> for epoch in range(100):
    ...     train(...); opt.step()
    ...     sched.step()
"""
from __future__ import annotations

# PyTorch's module binds these helpers at its top level and code imports them from it
# (``from torch.optim.lr_scheduler import Optimizer``): the same objects are re-exported.
from bisect import bisect_right  # noqa: F401
from collections import Counter  # noqa: F401
from functools import partial, wraps  # noqa: F401
from math import inf  # noqa: F401
from typing import (TYPE_CHECKING, Any, Literal, Self, SupportsFloat,  # noqa: F401
                    TypedDict, cast)
from weakref import ref  # noqa: F401

try:
    from typing import override  # noqa: F401  (Python >= 3.12)
except ImportError:  # PyTorch takes it from typing_extensions, as here
    from typing_extensions import override  # noqa: F401

from .._tensor import Tensor  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from ._lr_schedulers_base import (EPOCH_DEPRECATION_WARNING, CosineAnnealingLR,  # noqa: F401
                                  ExponentialLR, LambdaLR, LinearLR, LRScheduler, MultiStepLR,
                                  StepLR)
from ._lr_composite import ChainedScheduler, SequentialLR  # noqa: F401
from ._lr_cyclic import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR  # noqa: F401
from ._lr_factor import ConstantLR, MultiplicativeLR, PolynomialLR  # noqa: F401
from ._lr_plateau import ReduceLROnPlateau  # noqa: F401

__all__ = ["LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "ExponentialLR",
           "CosineAnnealingLR", "LinearLR", "MultiplicativeLR", "ConstantLR", "PolynomialLR",
           "CosineAnnealingWarmRestarts", "OneCycleLR", "ReduceLROnPlateau", "SequentialLR",
           "ChainedScheduler", "CyclicLR"]

# the public path is the schedulers' home (reprs, pickles, documentation tools)
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
