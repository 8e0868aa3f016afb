"""``hookgrad.optim``: PyTorch's optimizers and LR schedulers, computed by optax.

``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``, ``Adadelta``, ``NAdam``, ``RAdam``,
``Adamax``, ``Rprop``, ``ASGD``, ``Adafactor``, ``Muon``, ``SparseAdam`` and ``LBFGS`` take
PyTorch's arguments and give PyTorch's results; ``from_optax`` wraps any optax
transformation. See ``hookgrad.optim.optimizer`` for how the state is kept and how
``hookgrad.compile`` lifts it.

Differences from PyTorch:

- ``optimizer.state[p]`` of the built-ins is read from the optax state: it is a new dict
  each time (mutating it changes nothing; assign ``optimizer.state[p] = {...}`` or use
  ``load_state_dict``). ``state_dict()`` values are snapshots, not live references.
- Bias corrections and other scalar factors are computed in the parameter's dtype (PyTorch
  uses Python doubles): float32 results agree to about 1e-6, float64 to rounding.
- Complex parameters are not supported (PyTorch updates their real and imaginary parts
  as separate reals); ``differentiable=True`` raises ``NotImplementedError``;
  ``foreach``, ``fused`` and ``capturable`` are accepted and ignored.
- Changing a structural option between steps (``momentum`` from 0, ``amsgrad``,
  ``maximize``, ...) carries the existing state over instead of failing; ``Adagrad``
  creates state for groups added by ``add_param_group`` too.
- ``SparseAdam`` takes dense gradients (hookgrad has no sparse layout): the rows where the
  gradient is not all zero are the touched rows.
- ``from_optax``'s ``state_dict()`` has an empty ``"state"`` and the per-group optax
  states under ``"optax_state"``.
"""
from . import lr_scheduler, swa_utils
from ._adafactor import Adafactor
from ._muon import Muon
from ._optax import OptaxOptimizer, from_optax
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import (Optimizer, register_optimizer_step_post_hook,
                        register_optimizer_step_pre_hook)
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from ._stateless import swap_in_optimizer_params_and_state
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "NAdam", "RAdam",
           "Adamax", "LBFGS", "OptaxOptimizer", "from_optax", "lr_scheduler",
           "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook",
           "Adadelta", "Rprop", "ASGD", "Adafactor", "Muon", "SparseAdam",
           "swap_in_optimizer_params_and_state"]


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
