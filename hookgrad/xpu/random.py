"""``torch.xpu``'s random-number state: without an XPU device, seeding is accepted and
dropped (PyTorch queues it for a device that never comes) and reading a state raises."""
from .. import _missing
from ._backend import XPU, lazy_init

__all__ = ["get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all",
           "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed"]


def get_rng_state(device="xpu"):
    """The RNG state of an XPU device (raises: there is none)."""
    lazy_init()


def get_rng_state_all():
    """The RNG states of all XPU devices: none."""
    return []


def set_rng_state(new_state, device="xpu"):
    """Set an XPU device's RNG state (dropped: there is no device)."""
    XPU.rng_state_check(new_state, device)


def set_rng_state_all(new_states):
    """Set each XPU device's RNG state (dropped: there is no device)."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def manual_seed(seed):
    """Seed the current XPU device (checked, then dropped: there is no device)."""
    XPU.seed_check(seed)


def manual_seed_all(seed):
    """Seed all XPU devices (checked, then dropped: there is none)."""
    XPU.seed_check(seed)


def seed():
    """Seed the current XPU device randomly (nothing to seed)."""


def seed_all():
    """Seed all XPU devices randomly (nothing to seed)."""


def initial_seed():
    """The current XPU device's initial seed (raises: there is no device)."""
    lazy_init()


__getattr__ = _missing.module_getattr(__name__)
