"""``torch.xpu``'s memory queries: without an XPU device nothing is in use (0, empty
statistics); calls that need the device raise as PyTorch's build without XPU does."""
import collections
import contextlib

from .. import _missing
from .._absent_backend import dummy_type, no_binding, pluggable_allocator
from ._backend import XPU, lazy_init

__all__ = ["MemPool", "XPUPluggableAllocator", "change_current_allocator", "empty_cache",
           "get_per_process_memory_fraction", "max_memory_allocated", "max_memory_reserved",
           "mem_get_info", "memory_allocated", "memory_reserved", "memory_snapshot",
           "memory_stats", "memory_stats_as_nested_dict", "reset_accumulated_memory_stats",
           "reset_peak_memory_stats", "set_per_process_memory_fraction", "use_mem_pool"]


def empty_cache():
    """Release cached XPU memory: there is none."""


def memory_stats_as_nested_dict(device=None):
    """The XPU allocator's statistics as nested dicts: empty without a device."""
    return {}


def memory_stats(device=None):
    """The XPU allocator's statistics, flattened and sorted: empty without a device."""
    return collections.OrderedDict()


def memory_allocated(device=None):
    """Bytes held by tensors on an XPU device: 0 without one."""
    return 0


def max_memory_allocated(device=None):
    """Peak of ``memory_allocated``: 0 without an XPU device."""
    return 0


def memory_reserved(device=None):
    """Bytes the XPU allocator holds: 0 without a device."""
    return 0


def max_memory_reserved(device=None):
    """Peak of ``memory_reserved``: 0 without an XPU device."""
    return 0


def memory_snapshot(mempool_id=None):
    """The XPU allocator's segments: none without a device."""
    return []


def reset_peak_memory_stats(device=None):
    """Reset the XPU peak statistics (needs the XPU binding)."""
    XPU.device_index(device, optional=True)
    raise no_binding("_xpu_resetPeakMemoryStats")


def reset_accumulated_memory_stats(device=None):
    """Reset the XPU accumulated statistics (needs the XPU binding)."""
    XPU.device_index(device, optional=True)
    raise no_binding("_xpu_resetAccumulatedMemoryStats")


def mem_get_info(device=None):
    """``(free, total)`` bytes of an XPU device (raises: there is none)."""
    lazy_init()


def get_per_process_memory_fraction(device=None):
    """The memory fraction this process may use on an XPU device (raises: none)."""
    lazy_init()


def set_per_process_memory_fraction(fraction, device=None):
    """Limit this process's memory on an XPU device (raises: there is none)."""
    lazy_init()


class XPUPluggableAllocator:
    """An XPU allocator from a shared library's ``alloc``/``free`` (the library loads; the
    XPU hook to install it does not exist here)."""

    def __init__(self, path_to_lib_file, alloc_fn_name, free_fn_name):
        pluggable_allocator("_xpu_customAllocator", path_to_lib_file, alloc_fn_name,
                            free_fn_name)


def change_current_allocator(allocator):
    """Install an XPU allocator (needs the XPU binding)."""
    raise no_binding("_xpu_changeCurrentAllocator")


class MemPool(dummy_type("_XPUMemPool")):
    """An XPU memory pool (needs an XPU device: making one raises)."""

    def __init__(self, allocator=None, use_on_oom=False):
        super().__init__()


@contextlib.contextmanager
def use_mem_pool(pool, device=None):
    """Route this thread's XPU allocations to ``pool`` (raises: no XPU device)."""
    if device is None:
        lazy_init()
    XPU.device_index(device)
    lazy_init()
    yield


__getattr__ = _missing.module_getattr(__name__)
