"""Where a tensor lives and how its memory is held: the device flags (``is_cpu``,
``is_mps``, ...), the moves to devices JAX has no backend for (``xpu()``, ``mtia()``,
``ipu()``: PyTorch's CPU-build errors), pinned and shared memory, ``record_stream``,
``const_data_ptr``, ``dim_order``, ``is_set_to``, ``module_load`` and the removed
``volatile`` flag.

JAX arrays are neither pinned nor in shared memory: ``is_pinned()`` and ``is_shared()``
are False, ``share_memory_()`` leaves the tensor as it is (processes receive copies,
``hookgrad.multiprocessing``) and ``pin_memory()`` raises (docs/differences.md).
"""
from __future__ import annotations


from .. import _device, _storage, _views
from .._memory_format import memory_format
from .._tensor import Tensor
from .registry import export
from .shape import TENSOR_PROPERTIES
from .. import _errors

TENSOR_PROPERTIES.update({
    "is_cpu": lambda self: self.device.type == "cpu",
    # device types JAX has no backend for: no tensor is ever on one
    **{f"is_{kind}": (lambda self: False) for kind in (
        "mps", "xpu", "ipu", "maia", "mtia", "vulkan", "xla")},
})


@export(function=False)
def xpu(self, device=None, non_blocking=False, memory_format=None) -> Tensor:
    """This tensor on an Intel GPU: JAX has no XPU backend, so this raises PyTorch's error
    of a build without one."""
    raise AssertionError("Torch not compiled with XPU enabled")


@export(function=False)
def mtia(self, device=None, non_blocking=False, memory_format=None) -> Tensor:
    """This tensor on an MTIA device: raises PyTorch's error of a build without one."""
    raise AssertionError("Torch not compiled with MTIA enabled. Ensure you have `import "
                         "mtia.host_runtime.torch_mtia.dynamic_library` in your python src "
                         "file and include `//mtia/host_runtime/torch_mtia:torch_mtia` as your "
                         "target dependency!")


@export(function=False)
def ipu(self, device=None, non_blocking=False, memory_format=None) -> Tensor:
    """This tensor on a Graphcore IPU: raises PyTorch's error of a build without one."""
    raise RuntimeError("PyTorch is not linked with support for ipu devices")


def _warn_device_argument(name, device):
    if device is not None:
        _errors.warn(f"The argument 'device' of Tensor.{name}() is deprecated. Please do not "
                     "pass this argument.", DeprecationWarning)


@export(function=False)
def is_pinned(self, device=None) -> bool:
    """Whether this tensor is in page-locked host memory: False (JAX arrays are not)."""
    _warn_device_argument("is_pinned", device)
    return False


@export(function=False)
def pin_memory(self, device=None) -> Tensor:
    """A copy in page-locked host memory, for fast copies to an accelerator. Without an
    accelerator this is PyTorch's error; hookgrad does not pin memory (JAX's transfers
    need no pinned copy), so with one it raises "does not implement"."""
    _warn_device_argument("pin_memory", device)
    if device is not None and str(device).split(":")[0] == "cpu":
        raise RuntimeError("CPU device type not an accelerator.")
    if not _device.platform_devices("gpu"):
        raise RuntimeError("Cannot access accelerator device when none is available.")
    raise NotImplementedError("hookgrad does not implement torch.Tensor.pin_memory yet: JAX "
                              "copies to the accelerator without pinned host buffers")


@export(function=False)
def is_shared(self) -> bool:
    """Whether this tensor is in shared memory: False (JAX arrays are not; processes
    receive copies)."""
    return False


@export(function=False)
def share_memory_(self) -> Tensor:
    """Move the storage to shared memory: JAX arrays cannot be, so this returns ``self``
    unchanged (``hookgrad.multiprocessing`` sends copies)."""
    return self


@export(function=False)
def is_distributed(self) -> bool:
    """Whether this is a distributed tensor of the legacy THD backend: always False."""
    return False


@export(function=False)
def record_stream(self, stream) -> None:
    """Mark the memory as used by ``stream`` (CUDA caching allocator): a CPU tensor has no
    streams, as in PyTorch."""
    if not isinstance(stream, _stream_types()):
        raise RuntimeError("unknown parameter type")
    raise NotImplementedError("Could not run 'aten::record_stream' with arguments from the "
                              f"'{self.device.type.upper()}' backend.")


def _stream_types():
    from .._streams import Stream
    return (Stream,)


@export(function=False)
def const_data_ptr(self) -> int:
    """The address of the first element, for reading (``data_ptr()``)."""
    return _storage.data_ptr(self)


@export(function=False)
def is_set_to(self, tensor) -> bool:
    """Whether ``self`` and ``tensor`` are the same elements of the same storage: one
    storage, offset, sizes and strides."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"is_set_to(): argument 'tensor' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    return _storage._root(self)[0] is _storage._root(tensor)[0] and \
        _views.geometry(self) == _views.geometry(tensor)


_ORDER_ARG = "The ambiguity_check argument must be a bool or a list of memory formats."


@export(function=False)
def dim_order(self, *, ambiguity_check=False) -> tuple:
    """The dimensions from outermost to innermost in memory (by stride). With
    ``ambiguity_check=True`` (or a list of memory formats, of which the tensor must match
    exactly one), a tensor whose order is not unique (a size-1 dimension, equal
    neighbouring strides) raises."""
    if not isinstance(ambiguity_check, bool) and not (
            isinstance(ambiguity_check, list) and
            all(isinstance(f, memory_format) for f in ambiguity_check)):
        raise TypeError(_ORDER_ARG)
    sizes, strides = tuple(self.shape), self.stride()
    formats = [] if isinstance(ambiguity_check, bool) else ambiguity_check
    check = ambiguity_check if isinstance(ambiguity_check, bool) else True
    several = any(a == b for a, b in zip(strides, strides[1:])) or 1 in sizes
    if check and several and sum(self.is_contiguous(memory_format=f) for f in formats) != 1:
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact "
                           "one of the given memory formats.")
    return tuple(sorted(range(len(sizes)), key=lambda d: -strides[d]))


@export(function=False)
def module_load(self, other, assign=False) -> Tensor:
    """How ``other`` (a state-dict value) is loaded into this parameter or buffer by
    ``Module.load_state_dict`` when tensors are swapped: ``other.detach()`` when
    ``assign``, else ``self.copy_(other).detach()``."""
    return other.detach() if assign else self.copy_(other).detach()


def _volatile_get(self) -> bool:
    _errors.warn("volatile was removed (Variable.volatile is always False)", UserWarning)
    return False


def _volatile_set(self, value) -> None:
    _errors.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                 "instead.", UserWarning)


Tensor.volatile = property(_volatile_get, _volatile_set, doc="Removed: always False.")
