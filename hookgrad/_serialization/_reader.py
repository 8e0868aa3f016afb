"""``hookgrad.load``'s unpickler: PyTorch's names rebuilt as hookgrad objects.

``find_class`` maps ``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``,
``torch.float32``, ``torch.Size``, ... to the builders below; ``persistent_load`` reads a
storage's bytes from the archive once and hands them out as NumPy arrays. A tensor is
rebuilt from its storage with its offset and strides, then copied into a JAX array (JAX
arrays share no storage: tensors that shared one in PyTorch come back as copies).
"""
import _codecs
import _compat_pickle
import io
import pickle
from collections import Counter, OrderedDict

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Size, Tensor
from . import _names, _safe
from ._writer import _contiguous_strides

_TORCH_MODULE_ERROR = (
    "hookgrad.load cannot rebuild {path}: hookgrad reads PyTorch's tensors, Parameters, "
    "dtypes, devices and sizes, not other PyTorch objects. Save the parts you need instead, "
    "e.g. torch.save(model.state_dict(), f), and load them with "
    "hookgrad_model.load_state_dict(hookgrad.load(f)).")


class LoadedStorage:
    """A storage read from the archive: its elements (a 1-D NumPy array) and where its
    tensors go. This is what a ``map_location`` callable receives and may return."""

    __slots__ = ("array", "location", "target")

    def __init__(self, array, location):
        self.array, self.location = array, location
        self.target = None  # the JAX device its tensors go to; None: JAX's default device

    def cpu(self):
        return LoadedStorage(self.array, "cpu")

    def cuda(self, device=None, non_blocking=False):
        index = device.index if isinstance(device, _dtype.device) else device
        return LoadedStorage(self.array, "cuda" if index is None else f"cuda:{index}")

    def to(self, device, non_blocking=False):
        return LoadedStorage(self.array, str(device))

    def size(self):
        return self.array.size

    def __repr__(self):
        return (f"LoadedStorage(dtype={self.array.dtype}, size={self.array.size}, "
                f"location={self.location!r})")


def _device_error(location):
    kind = location.split(":", 1)[0]
    return RuntimeError(
        f"Attempting to deserialize object on a {kind.upper()} device but "
        f"torch.{kind}.is_available() is False. If you are running on a CPU-only machine, "
        "please use torch.load with map_location=torch.device('cpu') to map your storages to "
        f"the CPU. (hookgrad found no {kind} device among JAX's devices: {jax.devices()})")


def resolve_device(location):
    """The JAX device a location tag (``'cpu'``, ``'cuda:1'``) names; None for JAX's default
    device, where 'cpu' goes when the default backend is the CPU."""
    kind = location.split(":", 1)[0]
    if kind == "cpu" and jax.default_backend() == "cpu":
        return None
    if kind not in ("cpu", "cuda", "tpu"):
        raise _device_error(location)
    try:
        devices = jax.devices({"cuda": "gpu"}.get(kind, kind))
    except RuntimeError:
        raise _device_error(location) from None
    index = int(location.split(":", 1)[1]) if ":" in location else 0
    if index >= len(devices):
        raise RuntimeError(
            f"Attempting to deserialize object on {kind.upper()} device {index} but "
            f"torch.{kind}.device_count() is {len(devices)}. Please use torch.load with "
            "map_location to map your storages to an existing device.")
    return devices[index]


def _restore_location(map_location):
    """``(storage, location) -> location`` as PyTorch applies ``map_location``."""
    if map_location is None:
        return lambda storage, loc: loc
    if isinstance(map_location, dict):
        return lambda storage, loc: str(map_location.get(loc, loc))
    if isinstance(map_location, bytes):
        return lambda storage, loc: map_location.decode()
    if isinstance(map_location, str) or not callable(map_location):
        return lambda storage, loc: str(map_location)  # a device (hookgrad's or torch's)

    def call(storage, loc):
        result = map_location(storage, loc)
        if result is None:
            return loc
        if not isinstance(result, LoadedStorage):
            raise TypeError(f"map_location must return the storage it is given (or one moved "
                            f"with .cpu()/.cuda()/.to()) or None, got {type(result).__name__}")
        return result.location
    return call


# ---- builders that PyTorch's rebuild functions map to
def _to_jax(host, device):
    """A JAX array from a NumPy array, following hookgrad's dtype rules
    (docs/differences.md)."""
    d = _dtype.from_jax(host.dtype)
    if not _dtype.x64_enabled():
        if d is _dtype.float64 or d is _dtype.complex128:
            host = host.astype(np.float32 if d is _dtype.float64 else np.complex64)
        elif d is _dtype.int64:
            info = np.iinfo(np.int32)
            if host.size and (host.min() < info.min or host.max() > info.max):
                raise RuntimeError(
                    "hookgrad.load: an int64 tensor in the checkpoint holds values outside "
                    "int32's range, and JAX's 64-bit mode is off (hookgrad's int64 is int32 "
                    "then). Enable it before loading: jax.config.update('jax_enable_x64', True)")
            host = host.astype(np.int32)
    return jnp.asarray(host) if device is None else jax.device_put(host, device)


def _strided(storage, offset, size, stride, np_dtype=None):
    flat = storage.array if np_dtype is None else storage.array.view(np_dtype)
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: size {list(size)}, "
                           f"stride {list(stride)}")
    if 0 in size:
        return np.empty(size, flat.dtype)
    needed = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
    if offset < 0 or min(stride, default=0) < 0 or needed > flat.size:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {flat.itemsize} requiring a storage size of "
            f"{needed * flat.itemsize} are out of bounds for storage of size "
            f"{flat.size * flat.itemsize}")
    if offset == 0 and needed == flat.size and stride == _contiguous_strides(size):
        return flat.reshape(size)  # the whole storage, in order: no copy needed here
    view = np.lib.stride_tricks.as_strided(
        flat[offset:], size, tuple(s * flat.itemsize for s in stride), writeable=False)
    return np.array(view)  # a copy: the view may overlap itself or its storage's neighbours


def _finish(host, storage, requires_grad, metadata):
    if metadata:
        if metadata.get("conj"):
            host = np.conj(host)
        if metadata.get("neg"):
            host = np.negative(host)
    t = Tensor._wrap(_to_jax(host, storage.target))
    if requires_grad:
        t.requires_grad_(True)
    return t


def rebuild_tensor(storage, storage_offset, size, stride):
    return _finish(_strided(storage, storage_offset, size, stride), storage, False, None)


def rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                      metadata=None):
    host = _strided(storage, storage_offset, size, stride)
    return _finish(host, storage, requires_grad, metadata)


def rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                      dtype, metadata=None):
    host = _strided(storage, storage_offset, size, stride, _names.numpy_dtype_of(dtype))
    return _finish(host, storage, requires_grad, metadata)


def rebuild_parameter(data, requires_grad, backward_hooks):
    from ..nn.parameter import Parameter  # nn loads on first use
    return Parameter(data, requires_grad)


def rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_state(rebuild_parameter(data, requires_grad, backward_hooks), state)


def rebuild_from_type_v2(func, new_type, args, state):
    ret = func(*args)
    if type(ret) is not new_type:
        if not (isinstance(new_type, type) and issubclass(new_type, Tensor)):
            raise pickle.UnpicklingError(f"hookgrad.load cannot rebuild a tensor of type "
                                         f"{new_type!r}")
        ret = new_type._wrap(ret._data)
    return _set_state(ret, state)


def _set_state(obj, state):
    dict_state, slots = state if isinstance(state, tuple) else (state, None)
    for k, v in (dict_state or {}).items():
        setattr(obj, k, v)
    for k, v in (slots or {}).items():
        setattr(obj, k, v)
    return obj


def _layout(name):
    return name  # hookgrad has only strided tensors: the name stands for the layout


def _torch_names():
    """PyTorch's global names in a checkpoint -> the hookgrad objects they load as."""
    from ..nn.parameter import Parameter
    names = {
        "torch._utils._rebuild_tensor": rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": rebuild_from_type_v2,
        "torch.serialization._get_layout": _layout,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.Tensor": Tensor,
        "torch.Size": Size,
        "torch.device": _dtype.device,
    }
    names.update(_names.storage_types())
    names.update(_names.dtype_globals())
    return names


_PLAIN_SAFE = {"collections.OrderedDict": OrderedDict, "collections.Counter": Counter,
               "_codecs.encode": _codecs.encode, "builtins.bytearray": bytearray,
               "builtins.set": set, "builtins.complex": complex}


class Unpickler(pickle.Unpickler):
    """Rebuilds PyTorch's names as hookgrad objects; with ``weights_only`` it loads only
    those, the plain containers PyTorch allows and the user's safe globals."""

    def __init__(self, file, reader, map_location, weights_only, **kwargs):
        super().__init__(file, **kwargs)
        self._reader, self._restore = reader, _restore_location(map_location)
        # NOTE: with no map_location, tensors saved on the CPU go to JAX's default device,
        # where hookgrad creates every tensor (docs/differences.md)
        self._cpu_is_default = map_location is None
        self._weights_only = weights_only
        self._torch = _torch_names()
        self._storages = {}
        self._byteorder = "<"
        if reader.has("byteorder"):
            order = reader.read("byteorder")
            if order not in (b"little", b"big"):
                raise ValueError("Unknown endianness type: " + order.decode(errors="replace"))
            self._byteorder = "<" if order == b"little" else ">"

    def find_class(self, module, name):
        module, name = _py3_name(module, name)
        path = f"{module}.{name}"
        if path in self._torch:
            return self._torch[path]
        if self._weights_only:
            return _safe.allowed_global(module, name, _PLAIN_SAFE)
        if module == "torch" or module.startswith("torch."):
            raise pickle.UnpicklingError(_TORCH_MODULE_ERROR.format(path=path))
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if type(pid) is not tuple or not pid or _ascii(pid[0]) != "storage":
            raise pickle.UnpicklingError(
                f"Only persistent_load of storage is allowed, but got {pid!r}")
        try:
            _, storage_type, key, location, numel = pid
        except ValueError:
            raise pickle.UnpicklingError(f"malformed storage id {pid!r}") from None
        if not isinstance(storage_type, _names.StorageType):
            raise pickle.UnpicklingError(f"unknown storage type {storage_type!r} in {pid!r}")
        if storage_type.np is None:
            raise _names.unsupported_dtype_error(storage_type.name)
        key = _ascii(key)
        if key not in self._storages:
            self._storages[key] = self._load_storage(storage_type.np, key, numel,
                                                     _ascii(location))
        return self._storages[key]

    def _load_storage(self, np_dtype, key, numel, location):
        raw = self._reader.read(f"data/{key}")
        dt = np.dtype(np_dtype).newbyteorder(self._byteorder)
        if len(raw) != int(numel) * dt.itemsize:
            raise RuntimeError(f"PytorchStreamReader failed reading file data/{key}: the "
                               f"record holds {len(raw)} bytes, the checkpoint says {numel} "
                               f"elements of {dt.itemsize} bytes. The checkpoint is corrupted.")
        array = np.frombuffer(raw, dt)
        if self._byteorder == ">":
            array = array.astype(dt.newbyteorder("="))
        storage = LoadedStorage(array, location)
        location = self._restore(storage, location)
        if not (location == "cpu" and self._cpu_is_default):
            storage.target = resolve_device(location)
        return storage


def _py3_name(module, name):
    # Python 2 names (``__builtin__.set``), as pickle maps them for protocols < 3
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def is_safe_global(module, name):
    """Whether a weights-only load accepts the global ``module name`` of a checkpoint."""
    module, name = _py3_name(module, name)
    if f"{module}.{name}" in _torch_names():
        return True
    try:
        _safe.allowed_global(module, name, _PLAIN_SAFE)
    except pickle.UnpicklingError:
        return False
    return True


def _ascii(value):
    return value.decode("ascii") if isinstance(value, bytes) else value


def load(reader, map_location, weights_only, pickle_load_args):
    data = reader.read("data.pkl")
    unpickler = Unpickler(io.BytesIO(data), reader, map_location, weights_only,
                          **pickle_load_args)
    return unpickler.load()
