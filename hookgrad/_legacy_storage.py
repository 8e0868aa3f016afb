"""PyTorch's legacy typed storage classes (``torch.FloatStorage``, ``torch.LongStorage``,
...; ``torch.Storage`` is the default dtype's): each makes a ``TypedStorage`` of its dtype
(``FloatStorage(3)``, ``FloatStorage([1, 2])``), and ``isinstance(s, torch.FloatStorage)``
asks whether ``s`` is a ``TypedStorage`` of float32, as PyTorch's do. The quantized ones
name dtypes without tensors: making one raises "does not implement"."""
from __future__ import annotations

from typing import Any

from . import _dtype, _dtype_lowbit, _storage
from ._ops.legacy_new import legacy_new
from ._storage import TypedStorage, UntypedStorage


class _LegacyStorageMeta(type):
    def __instancecheck__(cls, instance) -> bool:
        return type(instance) is TypedStorage and instance.dtype is cls.dtype

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"


class _LegacyStorage(TypedStorage, metaclass=_LegacyStorageMeta):
    dtype: Any = None

    def __new__(cls, *args, device=None) -> TypedStorage:  # type: ignore[misc]
        """``<Kind>Storage(size)`` (zeros here; PyTorch leaves them uninitialised),
        ``<Kind>Storage(sequence)`` or ``<Kind>Storage()``: a CPU ``TypedStorage``."""
        kwargs = {} if device is None else {"device": device}
        t = legacy_new(cls.dtype, _dtype.device("cpu"), args, kwargs, cpu_only=True)
        return TypedStorage._of(t.reshape(-1))


def _legacy(name, dtype):
    return _LegacyStorageMeta(name, (_LegacyStorage,), {"dtype": dtype, "__module__": "torch",
                                                        "__qualname__": name})


_KINDS = {"BFloat16": _dtype.bfloat16, "Bool": _dtype.bool, "Byte": _dtype.uint8,
          "Char": _dtype.int8, "ComplexDouble": _dtype.complex128,
          "ComplexFloat": _dtype.complex64, "Double": _dtype.float64, "Float": _dtype.float32,
          "Half": _dtype.float16, "Int": _dtype.int32, "Long": _dtype.int64,
          "Short": _dtype.int16, "QInt32": _dtype_lowbit.qint32, "QInt8": _dtype_lowbit.qint8,
          "QUInt2x4": _dtype_lowbit.quint2x4, "QUInt4x2": _dtype_lowbit.quint4x2,
          "QUInt8": _dtype_lowbit.quint8}
_CLASSES = {kind: _legacy(f"{kind}Storage", d) for kind, d in _KINDS.items()}
_BY_DTYPE = {cls.dtype: cls for cls in _CLASSES.values()}

BFloat16Storage, BoolStorage, ByteStorage, CharStorage = (
    _CLASSES[k] for k in ("BFloat16", "Bool", "Byte", "Char"))
ComplexDoubleStorage, ComplexFloatStorage, DoubleStorage, FloatStorage = (
    _CLASSES[k] for k in ("ComplexDouble", "ComplexFloat", "Double", "Float"))
HalfStorage, IntStorage, LongStorage, ShortStorage = (
    _CLASSES[k] for k in ("Half", "Int", "Long", "Short"))
QInt32Storage, QInt8Storage, QUInt2x4Storage, QUInt4x2Storage, QUInt8Storage = (
    _CLASSES[k] for k in ("QInt32", "QInt8", "QUInt2x4", "QUInt4x2", "QUInt8"))
Storage = FloatStorage   # the default dtype's, as PyTorch's
StorageBase = UntypedStorage  # the base of PyTorch's untyped storages


def storage_type(self) -> type:
    """``storage_type()``: the legacy storage class of this tensor's dtype
    (``torch.FloatStorage`` for float32)."""
    _storage.warn_typed_storage(2)
    return _BY_DTYPE[self.dtype]
