"""``torch.mps`` without Metal: JAX has no MPS backend, so this module answers as
PyTorch's build without MPS does.

``is_available()`` is False and ``device_count()`` 0; the memory queries, the RNG state and
``empty_cache``/``synchronize`` raise ``RuntimeError: Cannot execute ...() without MPS
backend.``, as they do in PyTorch's CPU build (``hookgrad.backends.mps`` answers the build
questions).
"""
from .. import _missing
from ._backend import MPS
from . import event, profiler  # noqa: F401 - submodules, attributes as in PyTorch
from .event import Event  # noqa: F401

__all__ = ["Event", "compile_shader", "current_allocated_memory", "device_count",
           "driver_allocated_memory", "empty_cache", "get_rng_state", "is_available",
           "load_metallib", "manual_seed", "profiler", "recommended_max_memory", "seed",
           "set_per_process_memory_fraction", "set_rng_state", "synchronize"]


def device_count():
    """The number of MPS devices: 0 (JAX has no Metal backend)."""
    return 0


def is_available():
    """Whether an MPS device is available: never."""
    return False


def synchronize():
    """Wait for the MPS device's work (raises: no MPS backend)."""
    raise MPS.without("deviceSynchronize")


def get_rng_state(device="mps"):
    """The MPS generator's state (raises: no MPS backend)."""
    raise MPS.without("getDefaultGenerator")


def set_rng_state(new_state, device="mps"):
    """Set the MPS generator's state (raises: no MPS backend)."""
    new_state.clone()
    raise MPS.without("getDefaultGenerator")


def manual_seed(seed):
    """Seed the MPS generator: a no-op without the MPS backend (the seed is not read)."""


def seed():
    """Seed the MPS generator randomly (raises: no MPS backend)."""
    raise MPS.without("getDefaultGenerator")


def empty_cache():
    """Release the MPS allocator's cache (raises: no MPS backend)."""
    raise MPS.without("emptyCache")


def set_per_process_memory_fraction(fraction):
    """Limit this process's MPS memory; ``fraction`` is a float in 0~2 (raises after the
    checks: no MPS backend)."""
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 2:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~2")
    raise MPS.without("setMemoryFraction")


def current_allocated_memory():
    """Bytes held by MPS tensors (raises: no MPS backend)."""
    raise MPS.without("getCurrentAllocatedMemory")


def driver_allocated_memory():
    """Bytes the Metal driver holds for the process (raises: no MPS backend)."""
    raise MPS.without("getDriverAllocatedMemory")


def recommended_max_memory():
    """Metal's recommended working-set size (raises: no MPS backend)."""
    raise MPS.without("getRecommendedMaxMemory")


def compile_shader(source):
    """Compile a Metal shader into a library of kernels (raises: no MPS backend)."""
    raise RuntimeError("MPS is not available")


def load_metallib(source):
    """Load a compiled Metal library from bytes or a path (raises: no MPS backend)."""
    import os
    if not isinstance(source, (bytes, bytearray, str, os.PathLike)):
        raise TypeError(f"expected bytes or path, got {type(source).__name__}")
    raise RuntimeError("MPS is not available")


__getattr__ = _missing.module_getattr(__name__)
