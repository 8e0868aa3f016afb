"""``torch.xpu`` without an XPU: JAX has no Intel GPU backend, so this module answers as
PyTorch's build without XPU does.

``is_available()`` is False, ``device_count()`` 0, the memory queries 0 and seeding is
accepted and dropped; calls that need a device raise ``AssertionError: Torch not compiled
with XPU enabled``, as they do in PyTorch's CPU build.

Example::

    >>> device = "xpu" if hookgrad.xpu.is_available() else "cpu"
"""
from .. import _missing
from ._backend import XPU, lazy_init, no_device_switch
from . import graphs, memory, random, streams
from .graphs import (XPUGraph, graph, graph_pool_handle, is_current_stream_capturing,  # noqa: F401
                     make_graphed_callables)
from .memory import (MemPool, XPUPluggableAllocator, change_current_allocator,  # noqa: F401
                     empty_cache, get_per_process_memory_fraction, max_memory_allocated,
                     max_memory_reserved, mem_get_info, memory_allocated, memory_reserved,
                     memory_snapshot, memory_stats, memory_stats_as_nested_dict,
                     reset_accumulated_memory_stats, reset_peak_memory_stats,
                     set_per_process_memory_fraction, use_mem_pool)
from .random import (get_rng_state, get_rng_state_all, initial_seed, manual_seed,  # noqa: F401
                     manual_seed_all, seed, seed_all, set_rng_state, set_rng_state_all)
from .streams import Event, Stream  # noqa: F401

__all__ = ["StreamContext", "can_device_access_peer", "current_device", "current_stream",
           "default_generators", "device", "device_count", "device_memory_used", "device_of",
           "get_arch_list", "get_device_capability", "get_device_name",
           "get_device_properties", "get_gencode_flags", "get_stream_from_external", "init",
           "is_available", "is_bf16_supported", "is_initialized", "is_tf32_supported",
           "set_device", "set_stream", "stream", "synchronize", "clock_rate", "memory_usage",
           "power_draw", "temperature", "utilization", *graphs.__all__, *memory.__all__,
           *random.__all__, *streams.__all__]

default_generators = ()


def is_available():
    """Whether an XPU is available: never (JAX has no XPU backend)."""
    return False


def device_count():
    """The number of XPU devices: 0."""
    return 0


def is_initialized():
    """Whether XPU has been initialized: it cannot be."""
    return False


def init():
    """Initialize XPU (raises: hookgrad, like PyTorch's CPU build, has no XPU)."""
    lazy_init()


def is_bf16_supported(including_emulation=True):
    """Whether the current XPU device supports bfloat16: there is none."""
    return False


def is_tf32_supported():
    """Whether the current XPU device supports tf32: there is none."""
    return False


def get_arch_list():
    """The XPU architectures this build targets: none."""
    return []


def get_gencode_flags():
    """The XPU ahead-of-time build flags: none."""
    return ""


device = XPU.device_class(no_device_switch, __name__)
device.__doc__ = """Context-manager that changes the selected XPU device (switching raises:
    there is none)."""


class device_of(device):
    """Context-manager that changes the current device to that of ``obj`` (switching
    raises: there is no XPU device)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.device.type == "xpu" else -1)


StreamContext = XPU.stream_context_class(__name__)


def stream(stream):
    """``StreamContext(stream)``: a no-op without an XPU device."""
    return StreamContext(stream)


def set_device(device):
    """Select the current XPU device (raises: there is none)."""
    lazy_init()


def current_device():
    """The index of the current XPU device (raises: there is none)."""
    lazy_init()


def get_device_name(device=None):
    """An XPU device's name (raises: there is none)."""
    lazy_init()


def get_device_capability(device=None):
    """An XPU device's capabilities (raises: there is none)."""
    lazy_init()


def get_device_properties(device=None):
    """An XPU device's properties (raises: there is none)."""
    lazy_init()


def can_device_access_peer(device, peer):
    """Whether one XPU device can access another's memory (raises: there are none)."""
    lazy_init()


def set_stream(stream):
    """Select the current XPU stream: ``None`` is a no-op; any other raises."""
    if stream is not None:
        lazy_init()


def current_stream(device=None):
    """The current XPU stream (raises: there is no device)."""
    lazy_init()


def get_stream_from_external(data_ptr, device=None):
    """Wrap an external SYCL queue as a Stream (raises: there is no device)."""
    lazy_init()


def synchronize(device=None):
    """Wait for an XPU device's work (raises: there is no device)."""
    lazy_init()


def _pyzes():
    # PyTorch reads these through Level Zero Sysman (the pyzes package) before it looks for
    # a device; hookgrad gives the same answer in both cases.
    try:
        import pyzes  # noqa: F401
    except ImportError:
        raise ImportError("pyzes is required; install it with 'pip install pyzes'.") from None
    raise RuntimeError("Failed to enumerate devices via Level Zero Sysman.")


def temperature(device=None):
    """An XPU device's temperature in °C (needs pyzes and a device)."""
    _pyzes()


def clock_rate(device=None):
    """An XPU device's clock rate in MHz (needs pyzes and a device)."""
    _pyzes()


def power_draw(device=None):
    """An XPU device's power draw in mW (needs pyzes and a device)."""
    _pyzes()


def utilization(device=None):
    """An XPU device's utilization in percent (needs pyzes and a device)."""
    _pyzes()


def memory_usage(device=None):
    """An XPU device's memory in use, in percent (needs pyzes and a device)."""
    _pyzes()


def device_memory_used(device=None):
    """An XPU device's memory in use, in bytes (needs pyzes and a device)."""
    _pyzes()


__getattr__ = _missing.module_getattr(__name__)
