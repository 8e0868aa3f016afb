"""``torch.types``: the type aliases PyTorch's annotations use."""
import os
from typing import IO, Union

from . import _missing
from ._dtype import device as _device_cls, dtype as _dtype_cls
from ._tensor import Size as _size, Tensor

__all__ = ["Device", "FileLike", "Number", "Storage"]

_int, _float, _bool, _complex, _str, _bytes = int, float, bool, complex, str, bytes
_dtype = _dtype_cls
_device = _device_cls
Number = Union[int, float, bool]
_Number = (int, float, bool)
Device = Union[_device_cls, str, int, None]
FileLike = Union[str, os.PathLike, IO[bytes]]
_TensorOrTensors = Union[Tensor, "tuple[Tensor, ...]"]
_size = _size

# hookgrad's Tensors have no storage objects: the name exists for annotations only
Storage = _missing.not_implemented_class("torch.types.Storage")

__getattr__ = _missing.module_getattr(__name__)
