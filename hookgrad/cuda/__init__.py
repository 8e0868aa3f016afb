"""``torch.cuda`` on JAX: a JAX GPU backend (CUDA or ROCm) is hookgrad's ``cuda``.

Where JAX has no GPU, ``is_available()`` is False, ``device_count()`` 0, the memory
queries 0, and calls that need a GPU raise ``AssertionError: Torch not compiled with CUDA
enabled`` as a CPU-only PyTorch does.

Example::

    >>> device = "cuda" if hookgrad.cuda.is_available() else "cpu"
    >>> model = hookgrad.nn.Linear(3, 2).to(device)
"""
import collections

import jax
import jax.numpy as jnp

from .. import _device
from . import graphs, streams
from .graphs import (CUDAGraph, graph, graph_pool_handle, is_current_stream_capturing,  # noqa: F401
                     make_graphed_callables)
from .streams import (Event, ExternalStream, Stream, StreamContext, current_stream,  # noqa: F401
                      default_stream, set_stream, stream)

__all__ = ["is_available", "device_count", "current_device", "set_device", "device",
           "device_of", "get_device_name", "get_device_properties", "get_device_capability",
           "synchronize", "init", "is_initialized", "manual_seed", "manual_seed_all", "seed",
           "seed_all", "initial_seed", "empty_cache", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_stats",
           "mem_get_info", "reset_peak_memory_stats", "reset_max_memory_allocated",
           "is_bf16_supported"] + graphs.__all__ + streams.__all__


def _gpus():
    return _device.platform_devices("gpu")


def is_available():
    """Whether JAX has a GPU backend (CUDA or ROCm) with at least one device. On a machine
    without a GPU this starts no JAX backend (as PyTorch's starts no CUDA context)."""
    return _device.platform_present("gpu")


def device_count():
    """The number of GPUs JAX sees in this process (0 without a GPU backend)."""
    return len(_gpus())


def is_initialized():
    """Whether the GPU backend is ready. JAX starts its backends together, on first use."""
    return is_available()


def init():
    """Check that a GPU is there (JAX initializes its backends by itself)."""
    _require()


def _require():
    if not _gpus():
        raise _device.no_cuda()


def _index(device, optional=True):
    """The GPU index ``device`` (None, int, 'cuda:1', hookgrad.device) names."""
    if device is None:
        return _device.current_cuda[0] if optional else -1
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    d = device if isinstance(device, _device.device) else _device.device(device)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return _device.current_cuda[0] if d.index is None else d.index


def _jax_gpu(device=None):
    _require()
    index = _index(device)
    if not 0 <= index < device_count():
        raise AssertionError("Invalid device id")
    return _gpus()[index]


def current_device():
    """The index of the selected GPU (0 until ``set_device``)."""
    _require()
    return _device.current_cuda[0]


def set_device(device):
    """Select the GPU that ``'cuda'`` means (a negative index is a no-op).

    NOTE: it also becomes JAX's default device, so tensors created without a ``device``
    (which hookgrad puts on JAX's default device) land on it too.
    """
    index = _index(device)
    if index < 0:
        return
    target = _jax_gpu(index)
    _device.current_cuda[0] = index
    jax.config.update("jax_default_device", target)


class device:
    """Context manager selecting a GPU: ``with hookgrad.cuda.device(1): ...``.

    ``None`` or a negative index make it a no-op.
    """

    def __init__(self, device):
        self.idx = -1 if device is None else _index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx < 0:
            return
        if not _gpus():
            raise RuntimeError("PyTorch was compiled without CUDA support (JAX has no GPU "
                               "backend here)")
        self.prev_idx = current_device()
        set_device(self.idx)

    def __exit__(self, *exc):
        if self.prev_idx >= 0:
            set_device(self.prev_idx)
        return False


class device_of(device):
    """``device`` of a tensor's GPU; a no-op for a CPU tensor."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


def get_device_name(device=None):
    """The GPU's name as JAX reports it (``jax.Device.device_kind``)."""
    return _jax_gpu(device).device_kind


class _DeviceProperties(collections.namedtuple(
        "_DeviceProperties", "name major minor total_memory multi_processor_count")):
    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // 2 ** 20}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None):
    """Name, compute capability, memory and SM count of a GPU (what JAX exposes)."""
    d = _jax_gpu(device)
    major, _, minor = str(getattr(d, "compute_capability", "0.0")).partition(".")
    return _DeviceProperties(d.device_kind, int(major or 0), int(minor or 0),
                             _stats(d).get("bytes_limit", 0), getattr(d, "core_count", 0))


def get_device_capability(device=None):
    """``(major, minor)`` compute capability of a GPU."""
    props = get_device_properties(device)
    return props.major, props.minor


_tick = jax.jit(lambda x: x + 1)


def synchronize(device=None):
    """Wait until the GPU has finished the work queued on it.

    NOTE: JAX has no device-wide barrier; XLA runs a device's programs in order, so a
    tiny program queued last and waited for finishes after all of them.
    """
    target = _jax_gpu(device)
    jax.effects_barrier()
    _tick(jax.device_put(jnp.zeros((), jnp.int32), target)).block_until_ready()


# NOTE: hookgrad has one PRNG key for every device (JAX's keys are device-independent), so
# the same seed gives the same numbers on CPU and GPU. hookgrad.manual_seed seeds it (and,
# as in PyTorch, thereby seeds CUDA); the cuda seeding calls below check their argument
# and leave it alone.
def manual_seed(seed):
    """Check ``seed``; hookgrad's one generator is seeded by ``hookgrad.manual_seed``."""
    int(seed)


def manual_seed_all(seed):
    """Check ``seed``; hookgrad's one generator is seeded by ``hookgrad.manual_seed``."""
    int(seed)


def seed():
    """No-op: hookgrad's one generator is reseeded by ``hookgrad.seed()``."""


def seed_all():
    """No-op: hookgrad's one generator is reseeded by ``hookgrad.seed()``."""


def initial_seed():
    """The seed of hookgrad's generator, which also serves the GPUs."""
    _require()
    from .._generator import default_generator
    return default_generator.initial_seed()


def empty_cache():
    """No-op: XLA's allocator keeps its pool (set ``XLA_PYTHON_CLIENT_ALLOCATOR=platform``
    before starting to have memory returned as soon as arrays are freed)."""


def _stats(jax_dev):
    return jax_dev.memory_stats() or {}


def _gpu_stats(device):
    # as PyTorch: the memory queries answer 0 where there is no GPU
    return _stats(_jax_gpu(device)) if _gpus() else {}


_peak_floor = {}  # GPU index -> peak reported by XLA when reset_peak_memory_stats ran


def memory_stats(device=None):
    """XLA's allocator statistics for a GPU (JAX's keys); empty without a GPU."""
    return collections.OrderedDict(sorted(_gpu_stats(device).items()))


def memory_allocated(device=None):
    """Bytes held by arrays on a GPU (0 without one)."""
    return int(_gpu_stats(device).get("bytes_in_use", 0))


def max_memory_allocated(device=None):
    """Peak of ``memory_allocated`` since start or ``reset_peak_memory_stats``.

    NOTE: XLA's peak cannot be reset; after a reset, until XLA's peak exceeds the one seen
    at the reset, the current use is reported (a lower bound of the true peak).
    """
    stats = _gpu_stats(device)
    peak = int(stats.get("peak_bytes_in_use", 0))
    if peak <= _peak_floor.get(_index(device) if stats else None, -1):
        return int(stats.get("bytes_in_use", 0))
    return peak


def memory_reserved(device=None):
    """Bytes XLA's allocator holds from the GPU (0 without one); at least
    ``memory_allocated``."""
    stats = _gpu_stats(device)
    pool = stats.get("pool_bytes", stats.get("bytes_reserved", 0))
    return int(max(pool, stats.get("bytes_in_use", 0)))


def max_memory_reserved(device=None):
    """Peak of ``memory_reserved`` (0 without a GPU)."""
    stats = _gpu_stats(device)
    return int(stats.get("peak_pool_bytes", stats.get("peak_bytes_reserved", 0)))


def mem_get_info(device=None):
    """``(free, total)`` bytes of a GPU, as XLA's allocator sees it."""
    stats = _stats(_jax_gpu(device))
    total = int(stats.get("bytes_limit", 0))
    return total - int(stats.get("bytes_in_use", 0)), total


def reset_peak_memory_stats(device=None):
    """Start ``max_memory_allocated`` afresh (see its NOTE); a no-op without a GPU."""
    if _gpus():
        _peak_floor[_index(device)] = int(_gpu_stats(device).get("peak_bytes_in_use", 0))


reset_max_memory_allocated = reset_peak_memory_stats


def is_bf16_supported(including_emulation=True):
    """Whether bfloat16 works on the GPU: XLA supports it on every GPU it runs on."""
    return is_available()


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m

from . import amp  # noqa: E402,F401 - torch.cuda.amp, as PyTorch's import makes it an attribute
