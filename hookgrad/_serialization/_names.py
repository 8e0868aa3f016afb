"""The names PyTorch pickles into a checkpoint (storage classes, dtypes, rebuild
functions) and how they map to hookgrad, for the writer and the reader alike."""
import numpy as np

from .. import _dtype

# hookgrad dtype name -> the typed-storage class PyTorch pickles for a tensor of that dtype
STORAGE_OF_DTYPE = {
    "float64": "DoubleStorage", "float32": "FloatStorage", "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
    "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage",
    "bool": "BoolStorage", "complex128": "ComplexDoubleStorage",
    "complex64": "ComplexFloatStorage",
}
DTYPE_OF_STORAGE = {v: k for k, v in STORAGE_OF_DTYPE.items()}

# PyTorch dtypes hookgrad has no counterpart for: a checkpoint may name them (they are
# allowed globals in PyTorch), but a tensor of one cannot be rebuilt
FOREIGN_DTYPES = (
    ["uint16", "uint32", "uint64", "complex32", "float8_e4m3fn", "float8_e5m2",
     "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "qint8",
     "quint8", "qint32", "quint4x2", "quint2x4", "bits1x8", "bits2x4", "bits4x2", "bits8",
     "bits16"]
    + [f"uint{i}" for i in range(1, 8)] + [f"int{i}" for i in range(1, 8)])
FOREIGN_STORAGES = ("QInt8Storage", "QInt32Storage", "QUInt8Storage", "QUInt4x2Storage",
                    "QUInt2x4Storage")


class TorchGlobal:
    """A PyTorch global (``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``) that
    the writer puts into the pickle by name, so that hookgrad never imports torch."""

    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args, **kwargs):
        # pickle's save_reduce wants a callable; this one only ever stands for a name
        raise RuntimeError(f"{self.module}.{self.name} is PyTorch's; hookgrad only writes "
                           "its name into checkpoints")

    def __repr__(self):
        return f"{self.module}.{self.name}"


REBUILD_TENSOR_V2 = TorchGlobal("torch._utils", "_rebuild_tensor_v2")
REBUILD_PARAMETER = TorchGlobal("torch._utils", "_rebuild_parameter")
TORCH_SIZE = TorchGlobal("torch", "Size")
TORCH_DEVICE = TorchGlobal("torch", "device")
STORAGE_GLOBALS = {name: TorchGlobal("torch", name) for name in STORAGE_OF_DTYPE.values()}
DTYPE_GLOBALS = {name: TorchGlobal("torch", name) for name in STORAGE_OF_DTYPE}


class StorageType:
    """What a storage class name (``torch.FloatStorage``, ``torch.storage.UntypedStorage``)
    loads as: the element type of the bytes it names."""

    __slots__ = ("name", "np")

    def __init__(self, name, np_dtype):
        self.name, self.np = name, np_dtype

    def __repr__(self):
        return f"StorageType(name={self.name})"


class ForeignDtype:
    """A PyTorch dtype hookgrad lacks; loading a value of it is fine, a tensor of it is not."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


def unsupported_dtype_error(name):
    have = ", ".join(sorted(STORAGE_OF_DTYPE))
    return RuntimeError(f"hookgrad.load: the checkpoint holds a tensor of dtype torch.{name}, "
                        f"which hookgrad does not have (it has {have}). Convert it in PyTorch "
                        f"before saving, e.g. t.to(torch.int32) or t.to(torch.float32).")


def storage_types():
    """``{'torch.FloatStorage': StorageType, ...}`` for every storage name a checkpoint uses."""
    out = {}
    for storage, dname in DTYPE_OF_STORAGE.items():
        st = StorageType(storage, _dtype._BY_NAME[dname].np)
        out[f"torch.{storage}"] = out[f"torch.cuda.{storage}"] = st
    for storage in FOREIGN_STORAGES:
        out[f"torch.{storage}"] = out[f"torch.cuda.{storage}"] = StorageType(storage, None)
    out["torch.storage.UntypedStorage"] = StorageType("UntypedStorage", np.dtype(np.uint8))
    return out


def dtype_globals():
    """``{'torch.float32': hookgrad.float32, ..., 'torch.uint16': ForeignDtype}``."""
    out = {f"torch.{name}": d for name, d in _dtype._BY_NAME.items()}
    out.update({f"torch.{name}": ForeignDtype(name) for name in FOREIGN_DTYPES})
    return out


def numpy_dtype_of(d):
    """The NumPy element type for a dtype global loaded from a checkpoint."""
    if isinstance(d, ForeignDtype):
        raise unsupported_dtype_error(d.name)
    return _dtype.as_dtype(d).np
