"""``torch.mtia``'s memory queries: without an MTIA device nothing is in use."""
from .. import _missing

__all__ = ["memory_stats", "max_memory_allocated", "memory_allocated",
           "reset_peak_memory_stats"]


def memory_stats(device=None):
    """The MTIA allocator's statistics: empty without a device."""
    return {}


def max_memory_allocated(device=None):
    """Peak bytes held on an MTIA device: 0 without one."""
    return 0


def memory_allocated(device=None):
    """Bytes held on an MTIA device: 0 without one."""
    return 0


def reset_peak_memory_stats(device=None):
    """Reset the MTIA peak statistics: nothing to reset."""


__getattr__ = _missing.module_getattr(__name__)
