"""``torch.xpu``'s random-number state: without an XPU device, seeding is accepted and
dropped (PyTorch queues it for a device that never comes) and reading a state raises."""
from .. import _missing
from ._backend import XPU

__all__ = ["get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all",
           "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed"]


(get_rng_state, get_rng_state_all, set_rng_state, set_rng_state_all, manual_seed,
 manual_seed_all, seed, seed_all, initial_seed) = XPU.queued_rng(__name__)


__getattr__ = _missing.module_getattr(__name__)
