"""Devices with PyTorch's names and rules, backed by JAX's devices.

A JAX GPU backend (CUDA or ROCm, platform ``gpu``) is hookgrad's ``cuda``; JAX's TPUs are
``tpu``. Where a device type has no JAX backend here, placing a tensor on it raises the
error a CPU-only PyTorch raises, with what to do about it.
"""
import builtins
import functools
import re
import threading
import weakref

import jax
import numpy as np
from jax._src.array import ArrayImpl as ARRAY  # NOTE: private; a concrete array's class

from . import _host_transfer, _meta

# torch.device's accepted types (its error lists them), plus JAX's TPU
_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
          "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
          "privateuseone", "tpu")
_DEVICE_STRING = re.compile(r"([a-zA-Z_]+)(?::([0-9]+))?")
NO_CUDA = "Torch not compiled with CUDA enabled"

# the index ``cuda`` (no index) means; hookgrad.cuda.set_device changes it
current_cuda = [0]


class device:
    """A device, as ``torch.device``: ``device('cpu')``, ``device('cuda:0')``,
    ``device('cuda', 0)``, ``device(0)`` (the first accelerator).

    Example::

        >>> hookgrad.device("cuda", 1)
        device(type='cuda', index=1)
        >>> hookgrad.zeros(2).device
        device(type='cpu')
    """

    __slots__ = ("_type", "_index")

    def __init__(self, type, index=None):  # noqa: A002 - torch's signature
        if isinstance(type, device):
            type, index = type.type, type.index  # noqa: A001
        elif isinstance(type, builtins.int) and not isinstance(type, builtins.bool):
            type, index = _accelerator_type(), type  # noqa: A001
        elif isinstance(type, str):
            type, index = _parse(type, index)  # noqa: A001
        else:
            raise TypeError(
                f"device() received an invalid combination of arguments - got "
                f"({builtins.type(type).__name__}), but expected one of:\n"
                " * (torch.device device)\n * (str type, int index = -1)\n")
        if index is not None:
            if not isinstance(index, builtins.int) or isinstance(index, builtins.bool):
                raise TypeError("device(): argument 'index' (position 2) must be int, not "
                                f"{builtins.type(index).__name__}")
            if index < 0:
                raise RuntimeError("Device index must not be negative")
        object.__setattr__(self, "_type", type)
        object.__setattr__(self, "_index", index)

    @property
    def type(self):
        return self._type

    @property
    def index(self):
        return self._index

    def __setattr__(self, name, value):
        raise AttributeError(f"attribute '{name}' of 'hookgrad.device' objects is not writable")

    def __repr__(self):
        if self._index is None:
            return f"device(type='{self._type}')"
        return f"device(type='{self._type}', index={self._index})"

    def __str__(self):
        return self._type if self._index is None else f"{self._type}:{self._index}"

    # NOTE: as torch.device: 'cuda' and 'cuda:0' differ, and a device never equals a str
    def __eq__(self, other):
        if not isinstance(other, device):
            return NotImplemented
        return (self._type, self._index) == (other._type, other._index)

    def __hash__(self):
        return hash((self._type, self._index))

    def __reduce__(self):
        return (device, (self._type, self._index))

    # NOTE: ``with device(...)`` sets the device the factories and Module constructors use
    # inside the block, as PyTorch's DeviceContext does; nested blocks and threads each
    # see their own innermost one.
    def __enter__(self):
        _state.blocks.append(self)
        _state.default = self
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        blocks = _state.blocks
        blocks.pop()
        _state.default = blocks[-1] if blocks else _state.chosen


class _DefaultState(threading.local):
    """Per thread, as PyTorch's: the device ``set_default_device`` chose, the devices of
    the ``with device(...)`` blocks open, and of those the one factories use (None: the
    CPU, the one read a factory pays for)."""

    def __init__(self):
        self.chosen = None
        self.blocks = []
        self.default = None


_state = _DefaultState()


def default():
    """The device a factory called without ``device=`` places its Tensor on, or None for
    JAX's default (the CPU)."""
    return _state.default


def set_default_device(device) -> None:
    """Sets the default ``hookgrad.Tensor`` to be allocated on ``device``. Factory calls
    with an explicit ``device`` argument are not affected; the others run as if they were
    passed ``device``. ``None`` goes back to the CPU.

    To change the default device only for a block, use ``with hookgrad.device(device):``.

    Example::

        >>> hookgrad.set_default_device("meta")
        >>> hookgrad.zeros(2).device
        device(type='meta')
        >>> hookgrad.set_default_device(None)
    """
    chosen = None if device is None else _as_device(device)
    _state.chosen = chosen
    if not _state.blocks:
        _state.default = chosen


def get_default_device() -> device:
    """Gets the default ``hookgrad.Tensor`` to be allocated on ``device``: the innermost
    ``with hookgrad.device(...)`` block's, else the one ``set_default_device`` chose, else
    the CPU (``cuda`` with its current index)."""
    d = _state.default
    if d is None:
        return _CPU
    if d.type == "cuda" and d.index is None:
        return device("cuda", current_cuda[0])
    return d


def _as_device(d):
    return d if isinstance(d, device) else device(d)


def is_meta(d):
    """Whether the device (a device, str or int) is the meta device."""
    return d == "meta" if isinstance(d, str) else isinstance(d, device) and d.type == "meta"


def place(arr, d=None):
    """``arr`` (a JAX or NumPy array) on the device ``d``, or on the default device when
    ``d`` is None; on the meta device, only its shape and dtype are kept."""
    if d is None:
        d = _state.default
        if d is None:
            return arr if isinstance(arr, jax.Array) else from_host(arr)
    if d.__class__ is device and d._type == "cpu" and not d._index and \
            jax.config.jax_default_device is None and _cpu_is_first():
        # ``device=x.device`` on the CPU, where uncommitted arrays live (JAX's default
        # device, unconfigured): as below, without the device's lookups (a model's
        # factories name the device per step)
        if arr.__class__ is ARRAY and arr._committed is False:
            return arr
        if arr.__class__ is np.ndarray:
            return from_host(arr)
    if is_meta(d):
        return _meta.like(arr)
    target = jax_device(d)
    if target == _uncommitted_device():
        # NOTE: named, the device uncommitted arrays live on is kept uncommitted, as an
        # unnamed one is: ``arange(n, device=x.device)`` in a model's forward must not pin
        # what it touches (a committed array keeps every op after it out of the deferred,
        # fused forward, hookgrad/_ops/lazy.py, and the first tier)
        if not isinstance(arr, jax.Array):
            return from_host(arr)
        if getattr(arr, "_committed", True) is False and arr.devices() == {target}:  # concrete
            return arr
    if isinstance(arr, jax.Array):
        return jax.device_put(arr, target)
    return from_host(arr, d)


def _uncommitted_device():
    """The device an uncommitted array is placed on (JAX's default), or None when a
    default device is configured (``jax.default_device``): then every placement is named."""
    if jax.config.jax_default_device is not None:
        return None
    return _local_first()


@functools.lru_cache(maxsize=None)
def _cpu_is_first():
    """Whether this process's first device, where uncommitted arrays live, is ``cpu:0``."""
    return _local_first() is platform_devices("cpu")[0] if platform_devices("cpu") else False


@functools.lru_cache(maxsize=None)
def _local_first():
    # NOTE: this process's first device: in a job of several processes jax.devices()[0]
    # may be another process's
    return jax.local_devices()[0]


def _parse(text, index):
    m = _DEVICE_STRING.fullmatch(text)
    if m is None:
        raise RuntimeError(f"Invalid device string: '{text}'")
    kind, idx = m.group(1), m.group(2)
    if kind not in _TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_TYPES)} device type at start of "
                           f"device string: {kind}")
    if idx is not None:
        if index is not None:
            raise RuntimeError("type (string) must not include an index because index was "
                               f"passed explicitly: {text}")
        index = builtins.int(idx)
    return kind, index


def _accelerator_type():
    for kind, platform in (("cuda", "gpu"), ("tpu", "tpu")):
        if platform_devices(platform):
            return kind
    raise RuntimeError("Cannot access accelerator device when none is available.")


def platform_present(platform):
    """Whether this process has JAX devices of ``platform``, answered without starting JAX's
    backends while none has started when the answer is no: libraries ask
    ``torch.cuda.is_available()`` at import, and ``jax.distributed`` (``init_process_group``)
    can only start before any backend has. On a machine that has the hardware, JAX's
    backends are asked (and start)."""
    from jax._src import hardware_utils, xla_bridge  # NOTE: private; JAX's own probes
    if not xla_bridge.backends_are_initialized():
        allowed = jax.config.jax_platforms
        names = {"gpu": ("gpu", "cuda", "rocm"), "tpu": ("tpu",)}.get(platform, (platform,))
        if allowed and not set(names) & set(allowed.split(",")):
            return False
        if platform == "gpu" and not (hardware_utils.has_visible_nvidia_gpu()
                                      or hardware_utils.num_available_amd_gpus(stop_at=1)):
            return False
        if platform == "tpu" and not hardware_utils.num_available_tpu_chips_and_device_id()[0]:
            return False
    return bool(platform_devices(platform))


@functools.lru_cache(maxsize=None)
def platform_devices(platform):
    """This process's JAX devices of ``platform`` ('cpu', 'gpu', 'tpu'); () where none."""
    try:
        return tuple(jax.local_devices(backend=platform))
    except RuntimeError:
        return ()


_CPU = device("cpu")  # shared: devices are immutable


def device_of(jax_device):
    """The hookgrad device of a JAX device (CPUs are all ``cpu``, as torch has one)."""
    if jax_device.platform == "cpu":
        return _CPU
    if jax_device.platform in ("gpu", "cuda", "rocm"):
        return device("cuda", platform_devices("gpu").index(jax_device))
    return device(jax_device.platform, jax_device.id)


# a JAX device -> its hookgrad device, for arrays on one device, found by their sharding's
# device (``Tensor.device`` reads this first): JAX's ``devices()`` builds a set per call,
# and a sharding's equality and hash are Python. NOTE: ``_device`` is private (JAX's
# single-device sharding's); where it is missing, every read takes ``of_array``
ON_ONE = {}


def of_array(arr):
    """The hookgrad device of a JAX array (of a tracer: the default backend's first)."""
    if isinstance(arr, jax.core.Tracer):
        return _CPU if jax.default_backend() == "cpu" else device_of(jax.devices()[0])
    devices = arr.devices()
    d = device_of(next(iter(devices)))
    if arr.__class__ is ARRAY and len(devices) == 1 and \
            getattr(arr.sharding, "_device", None) is next(iter(devices)):
        ON_ONE[arr.sharding._device] = d  # a process has a few devices
    return d


def no_cuda():
    """PyTorch's error on a machine without CUDA, saying what JAX sees and what to do."""
    return AssertionError(
        f"{NO_CUDA}: JAX has no GPU backend here (devices: {jax.devices()}). Install a CUDA "
        "build of jaxlib (pip install 'jax[cuda12]'), or keep tensors on 'cpu' "
        "(device = 'cuda' if hookgrad.cuda.is_available() else 'cpu').")


def jax_device(d):
    """The JAX device for a hookgrad device, str or int; PyTorch's error where none is."""
    d = d if isinstance(d, device) else device(d)
    if d.type == "cuda":
        devs = platform_devices("gpu")
        if not devs:
            raise no_cuda()
        index = current_cuda[0] if d.index is None else d.index
    elif d.type in ("cpu", "tpu"):
        devs = platform_devices(d.type)
        if not devs:
            raise RuntimeError(f"no {d.type} device is available to JAX (devices: "
                               f"{jax.devices()})")
        index = d.index or 0
    elif d.type == "mps":
        raise RuntimeError("PyTorch is not linked with support for mps devices (hookgrad "
                           "places tensors on JAX's devices: cpu, cuda, tpu)")
    else:
        raise RuntimeError(f"hookgrad cannot place tensors on '{d.type}': JAX's devices are "
                           "cpu, cuda (a JAX GPU backend) and tpu")
    if index >= len(devs):
        if d.type == "cuda":
            raise RuntimeError(f"CUDA error: invalid device ordinal (cuda:{index} requested, "
                               f"{len(devs)} GPU(s) available)")
        raise RuntimeError(f"{d.type}:{index} does not exist: JAX has {len(devs)} {d.type} "
                           "device(s)")
    return devs[index]


def cuda_target(d):
    """The device ``Tensor.cuda(d)`` / ``Module.cuda(d)`` go to: None, an index or a cuda
    device."""
    if d is None:
        return device("cuda")
    d = d if isinstance(d, device) else device(d)  # an int: the accelerator, as torch
    if d.type != "cuda":
        raise RuntimeError("Invalid device, must be cuda device")
    return d


def from_host(arr, device=None):
    """A JAX array holding the NumPy array ``arr`` (which the caller must not write to
    afterwards: on the CPU it may be shared, not copied).

    NOTE: ``jnp.asarray`` of a NumPy array compiles an XLA program per shape in JAX 0.10;
    ``device_put`` compiles nothing, which keeps creating tensors of new shapes (a model's
    parameters, a batch) free of compilations.
    """
    out = None
    if device is None and arr.__class__ is np.ndarray:  # one jaxlib call, not device_put's
        out = _host_transfer.put_plain(arr)
    if out is None:
        out = jax.device_put(arr, None if device is None else jax_device(device))
    record_bounds(out, arr)
    return out


# NOTE: PyTorch checks every index eagerly; reading an index back from the device for that
# (a transfer, and a wait for the op that made it) costs more than the indexing op. Integer
# arrays made from host data (``tensor()``, ``randint``, a DataLoader's batch: most indices,
# labels and token ids) have their bounds taken on the host, where the data already is.
_BOUNDED_SIZE = 1 << 16  # larger ones are read back when indexed, as device-made ones are
_BOUNDS = {}  # id(jax array) -> (weakref to it, min, max)
_BOUNDS_KEPT = 4096


def record_bounds(out, host):
    """Remember ``(min, max)`` of ``host``, the NumPy data of the JAX array ``out``, if it
    holds a few integers."""
    if host.dtype.kind not in "iu" or not 0 < host.size <= _BOUNDED_SIZE:
        return
    if len(_BOUNDS) >= _BOUNDS_KEPT:  # rarely: forget the dead, or everything
        dead = [k for k, v in list(_BOUNDS.items()) if v[0]() is None]
        for k in dead if len(dead) > _BOUNDS_KEPT // 4 else list(_BOUNDS):
            _BOUNDS.pop(k, None)
    if host.size <= 256:  # NumPy's reductions cost more than this for a few labels
        v = host.ravel().tolist()
        lo, hi = min(v), max(v)
    else:
        lo, hi = int(host.min()), int(host.max())
    _BOUNDS[id(out)] = (weakref.ref(out), lo, hi)


def move(arr, device):
    """``arr`` put on the JAX device ``device``, keeping the bounds recorded for it (a batch
    of labels moved to the GPU is still known to be in range)."""
    out = jax.device_put(arr, device)
    b = _BOUNDS.get(id(arr))
    if b is not None and b[0]() is arr and out is not arr:
        _BOUNDS[id(out)] = (weakref.ref(out), b[1], b[2])
    return out


def host_bounds(arr):
    """``(min, max)`` of an integer JAX array made from host data, or None if unknown."""
    b = _BOUNDS.get(id(arr))
    if b is not None and b[0]() is arr:
        return b[1], b[2]
    return None
