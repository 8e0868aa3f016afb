"""DLPack exchange: ``from_dlpack``, ``to_dlpack`` and a Tensor's ``__dlpack__`` protocol,
through JAX's DLPack support (NumPy arrays, PyTorch tensors, CuPy and JAX arrays are
read without a copy where the device allows)."""
from __future__ import annotations

from typing import Any

import datetime

import jax

from ._tensor import Tensor

# Python's capsule type (3.13's types.CapsuleType), taken from a capsule the standard
# library already holds: making one from a JAX array would start JAX's backend at import
_CAPSULE = type(datetime.datetime_CAPI)
_INVALID = ("from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
            "consumed only once, so you might have already constructed a tensor from it once.")


class _Capsule:
    """A bare DLPack capsule behind the ``__dlpack__`` protocol JAX reads (CPU memory)."""

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU


def from_dlpack(ext_tensor: Any) -> Tensor:
    """``from_dlpack(ext_tensor)``: a Tensor over the data of an object that supports
    DLPack (``__dlpack__``), or of a DLPack capsule (which can be consumed once)."""
    if isinstance(ext_tensor, Tensor):
        return Tensor._wrap(ext_tensor._data)
    if isinstance(ext_tensor, _CAPSULE):
        ext_tensor = _Capsule(ext_tensor)
    elif not hasattr(ext_tensor, "__dlpack__"):
        raise RuntimeError(_INVALID)
    try:
        arr = jax.dlpack.from_dlpack(ext_tensor)
    except Exception as e:  # noqa: BLE001 - a used capsule or an unsupported layout
        raise RuntimeError(f"{_INVALID} (JAX: {e})") from None
    return Tensor._wrap(arr)


def to_dlpack(tensor: Tensor) -> Any:
    """``to_dlpack(tensor)``: a DLPack capsule of ``tensor``'s data (consumable once)."""
    return tensor._data.__dlpack__()


def _dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None) -> Any:
    """The DLPack capsule of this tensor (the array API's exchange protocol)."""
    if self._requires_grad:
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
    kwargs = {k: v for k, v in (("stream", stream), ("max_version", max_version),
                                ("dl_device", dl_device), ("copy", copy)) if v is not None}
    return self._data.__dlpack__(**kwargs)


def _dlpack_device(self) -> tuple:
    """``(device type, index)`` in DLPack's numbering."""
    return self._data.__dlpack_device__()


Tensor.__dlpack__ = _dlpack
Tensor.__dlpack_device__ = _dlpack_device
