"""``torch.asarray``: a Tensor from a Tensor (kept when nothing changes), a NumPy array,
a DLPack capsule, a buffer, a scalar or a sequence."""
from __future__ import annotations

from typing import Any

from . import _dlpack, _dtype, _factory
from ._tensor import Tensor
from . import _errors


def asarray(obj: Any, *, dtype=None, device=None, copy=None, requires_grad=None) -> Tensor:
    """``asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None)``: ``obj``
    as a Tensor. A Tensor is returned itself (same history) unless ``dtype``/``device``
    change it or ``copy=True``; ``requires_grad=None`` keeps a Tensor's. Other objects are
    copied (NumPy arrays too: hookgrad shares no memory with them, docs/differences.md).
    A buffer (bytes, bytearray) is read as elements of ``dtype`` (default float dtype)."""
    if isinstance(obj, _dlpack._CAPSULE):
        obj = _dlpack.from_dlpack(obj)
    if isinstance(obj, Tensor):
        if requires_grad is None and obj.requires_grad:
            _errors.warn("torch.asarray: unspecified requires_grad now defaults to "
                         "obj.requires_grad instead of False. Pass requires_grad=False "
                         "explicitly to get the old behavior and silence this warning.",
                         UserWarning)
        out = obj.to(dtype=dtype, device=device) if dtype is not None or device is not None \
            else obj
        if copy and out is obj:
            out = obj.clone()
        if requires_grad is False and out.requires_grad:
            out = out.detach()
        elif requires_grad and not out.requires_grad:
            out = out.detach().requires_grad_()
        return out
    if isinstance(obj, (bytes, bytearray, memoryview)):
        out = _factory.frombuffer(obj, dtype=dtype or _dtype.get_default_dtype())
        return out if device is None else out.to(device)
    try:
        return _factory.tensor(obj, dtype=dtype, device=device,
                               requires_grad=bool(requires_grad))
    except TypeError:
        raise RuntimeError("Could not infer dtype of object") from None
