"""``torch.mtia`` without an MTIA: JAX has no MTIA backend, so this module answers as
PyTorch's build without MTIA does.

``is_available()`` is False, ``device_count()`` 0, the memory queries 0 and seeding is
accepted and dropped; initializing raises ``AssertionError: Torch not compiled with MTIA
enabled...`` and other device calls ``RuntimeError: Cannot execute ...() without MTIA
backend.``, as in PyTorch's CPU build. ``Stream`` and ``Event`` are ``hookgrad.Stream`` and
``hookgrad.Event``, as PyTorch's are ``torch.Stream`` and ``torch.Event``.
"""
from .. import _missing
from ._backend import MTIA, lazy_init
from . import memory, mtia_graph
from .memory import (max_memory_allocated, memory_allocated, memory_stats,  # noqa: F401
                     reset_peak_memory_stats)
from .mtia_graph import MTIAGraph, graph, graph_pool_handle  # noqa: F401

__all__ = ["DeferredMtiaCallError", "Event", "Stream", "StreamContext",
           "attach_out_of_memory_observer", "current_device", "current_stream",
           "default_generators", "default_stream", "device", "device_count", "empty_cache",
           "get_device_capability", "get_device_properties", "get_rng_state",
           "get_rng_state_all", "init", "initial_seed", "is_available", "is_bf16_supported",
           "is_initialized", "manual_seed", "manual_seed_all", "record_memory_history", "seed",
           "seed_all", "set_device", "set_rng_state", "set_rng_state_all", "set_stream",
           "snapshot", "stream", "synchronize", *memory.__all__, *mtia_graph.__all__]

default_generators = ()


class DeferredMtiaCallError(Exception):
    """A call queued until MTIA initialized failed then."""


def init():
    """Initialize MTIA (raises: hookgrad, like PyTorch's CPU build, has no MTIA)."""
    lazy_init()


def is_initialized():
    """Whether MTIA has been initialized: it cannot be."""
    return False


def is_available():
    """Whether an MTIA device is available: never (JAX has no MTIA backend)."""
    return False


def device_count():
    """The number of MTIA devices: 0."""
    return 0


def is_bf16_supported(including_emulation=True):
    """Whether MTIA supports bfloat16: True, as PyTorch answers with or without a device."""
    return True


def current_device():
    """The index of the current MTIA device (raises: there is none)."""
    raise MTIA.without("getCurrentDevice")


def _device_call(device, call):
    MTIA.device_index(device, optional=True)
    raise MTIA.without(call)


def _initializing_call(device):
    MTIA.device_index(device, optional=True)
    lazy_init()


def current_stream(device=None):
    """The current MTIA stream (raises: there is no device)."""
    _initializing_call(device)


def default_stream(device=None):
    """The default MTIA stream (raises: there is no device)."""
    _initializing_call(device)


def set_stream(stream):
    """Select the current MTIA stream: ``None`` is a no-op; any other raises."""
    if stream is not None:
        lazy_init()


def get_device_capability(device=None):
    """An MTIA device's capability (raises: there is none)."""
    _device_call(device, "getDeviceCapability")


def get_device_properties(device=None):
    """An MTIA device's properties (raises: there is none)."""
    _device_call(device, "getDeviceProperties")


def set_device(device):
    """Select the current MTIA device: a negative index is a no-op; any other raises."""
    if MTIA.device_index(device) >= 0:
        raise MTIA.without("setCurrentDevice")


def _no_device_switch():
    return MTIA.without("maybeExchangeDevice")


device = MTIA.device_class(_no_device_switch, __name__)
device.__doc__ = """Context-manager that changes the selected MTIA device (a negative index
    is a no-op; switching raises: there is no device)."""

StreamContext = MTIA.stream_context_class(__name__)


def stream(stream):
    """``StreamContext(stream)`` (raises: there is no current MTIA device)."""
    return StreamContext(stream)


def synchronize(device=None):
    """Wait for an MTIA device's work (raises: there is no device)."""
    with globals()["device"](device):
        pass


def empty_cache():
    """Release the MTIA allocator's cache (raises: no MTIA backend)."""
    raise MTIA.without("emptyCache")


def snapshot():
    """The MTIA allocator's state (raises: no MTIA backend)."""
    raise MTIA.without("memorySnapshot")


def attach_out_of_memory_observer(observer):
    """Call ``observer`` when MTIA runs out of memory (raises: no MTIA backend)."""
    raise MTIA.without("attachOutOfMemoryObserver")


def record_memory_history(enabled="all", stacks="python", max_entries=0):
    """Record MTIA allocations: a no-op while MTIA is not initialized (it never is)."""


(get_rng_state, get_rng_state_all, set_rng_state, set_rng_state_all, manual_seed,
 manual_seed_all, seed, seed_all, initial_seed) = MTIA.queued_rng(__name__)


_missing_attr = _missing.module_getattr(__name__)


def __getattr__(name):
    if name in ("Stream", "Event"):  # PyTorch's are torch.Stream and torch.Event
        import hookgrad
        return getattr(hookgrad, name)
    return _missing_attr(name)
