"""``hookgrad.save``'s pickler: PyTorch's checkpoint layout written without torch.

Tensors pickle as PyTorch pickles them — ``torch._utils._rebuild_tensor_v2(storage, offset,
size, stride, requires_grad, OrderedDict())`` with the storage a persistent id
``('storage', torch.FloatStorage, key, location, numel)`` whose bytes go to the record
``data/<key>`` — so ``torch.load(weights_only=True)`` reads the file.
"""
import io
import pickle
import random
import sys
from collections import OrderedDict

import jax
import numpy as np

from .. import _dtype
from .._tensor import Size, Tensor, _check_concrete
from .._views import contiguous_strides as _contiguous_strides
from .._handle import warn_if_has_hooks
from . import _archive, _names


class _StorageRef:
    """One array's bytes, written once however many tensors hold that array."""

    __slots__ = ("array", "key", "dtype")

    def __init__(self, array, key, dtype):
        self.array, self.key, self.dtype = array, key, dtype


def _location(array):
    # PyTorch's location tags: 'cpu', 'cuda:<index>'; any other JAX device reads as 'cpu'
    devices = getattr(array, "devices", None)
    dev = next(iter(devices())) if devices is not None else None
    if dev is not None and dev.platform == "gpu":
        return f"cuda:{dev.id}"
    return "cpu"


def _write_global(pickler, obj):
    """Pickle a ``TorchGlobal`` as the GLOBAL it names (never imported here)."""
    if pickler.proto >= 4:
        pickler.save(obj.module)
        pickler.save(obj.name)
        pickler.write(pickle.STACK_GLOBAL)
    else:
        pickler.write(pickle.GLOBAL + obj.module.encode("utf-8") + b"\n"
                      + obj.name.encode("utf-8") + b"\n")
    pickler.memoize(obj)


def _write_dtype(pickler, d):
    # a dtype pickles as the bare global ``torch.float32``, as PyTorch's does; saved through
    # the memo, so a dtype written twice is the same global fetched again
    pickler.save(_names.DTYPE_GLOBALS[d.name])


def pickler_class(pickle_module):
    """A Pickler of ``pickle_module`` that writes hookgrad objects under PyTorch's names.

    PyTorch's names are written directly, so the Python-level Pickler is needed (the C one
    looks every global up by importing it)."""
    base = pickle._Pickler if pickle_module is pickle else getattr(pickle_module, "Pickler")
    if not isinstance(getattr(base, "dispatch", None), dict):
        raise TypeError(f"hookgrad.save needs a pickle_module whose Pickler is Python-level "
                        f"(a subclass of pickle._Pickler), got {pickle_module!r}")

    class _Pickler(base):
        dispatch = dict(base.dispatch)
        dispatch[_names.TorchGlobal] = _write_global
        dispatch[_dtype.dtype] = _write_dtype

        def __init__(self, file, protocol):
            super().__init__(file, protocol=protocol)
            self.storages = {}  # id(array) -> _StorageRef, in key order

        def persistent_id(self, obj):
            if type(obj) is not _StorageRef:
                return None
            storage = _names.STORAGE_GLOBALS[_names.STORAGE_OF_DTYPE[obj.dtype.name]]
            return ("storage", storage, obj.key, _location(obj.array), int(obj.array.size))

        def reducer_override(self, obj):
            if isinstance(obj, Tensor):
                return self._reduce_tensor(obj)
            if type(obj) is Size:
                return (_names.TORCH_SIZE, (tuple(obj),))
            if type(obj) is _dtype.device:
                args = (obj.type,) if obj.index is None else (obj.type, obj.index)
                return (_names.TORCH_DEVICE, args)
            return NotImplemented

        def _reduce_tensor(self, t):
            warn_if_has_hooks(t)
            if type(t) is not Tensor and _is_parameter(t):
                return (_names.REBUILD_PARAMETER,
                        (Tensor._wrap(t._data), t.requires_grad, OrderedDict()))
            _check_concrete(t, "hookgrad.save")
            ref = self._storage(t._data)
            return (_names.REBUILD_TENSOR_V2,
                    (ref, 0, tuple(t.shape), _contiguous_strides(t.shape), t.requires_grad,
                     OrderedDict()))

        def _storage(self, array):
            ref = self.storages.get(id(array))
            if ref is None:
                ref = _StorageRef(array, str(len(self.storages)), _dtype.from_jax(array.dtype))
                self.storages[id(array)] = ref
            return ref

    return _Pickler


def _is_parameter(t):
    from ..nn.parameter import Parameter  # nn loads on first use
    return isinstance(t, Parameter)


def _little_endian_bytes(array):
    host = np.ascontiguousarray(jax.device_get(array))
    if host.dtype.byteorder == ">" or (host.dtype.byteorder == "=" and sys.byteorder == "big"):
        host = host.byteswap().view(host.dtype.newbyteorder("<"))
    return host.reshape(-1).view(np.uint8)


def pickle_obj(obj, pickle_module, protocol):
    """``obj``'s pickle (bytes) and the storages it refers to, in key order."""
    buf = io.BytesIO()
    pickler = pickler_class(pickle_module)(buf, protocol)
    pickler.dump(obj)
    return buf.getvalue(), list(pickler.storages.values())


def write_archive(fileobj, name, data_pkl, storages, byteorder_record=True):
    """Write the records PyTorch's ``torch.save`` writes, in its order."""
    writer = _archive.Writer(fileobj, name)
    try:
        writer.write("data.pkl", data_pkl)
        writer.write(".format_version", b"1")
        writer.write(".storage_alignment", str(_archive.ALIGNMENT).encode())
        if byteorder_record:
            writer.write("byteorder", b"little")
        for ref in storages:
            writer.write(f"data/{ref.key}", _little_endian_bytes(ref.array))
        writer.write("version", b"3\n")
        writer.write(".data/serialization_id",
                     str(random.getrandbits(128) % 10 ** 40).zfill(40).encode())
    finally:
        writer.close()
