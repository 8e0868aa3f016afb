"""Storages, at PyTorch's path ``torch.storage``: what ``Tensor.untyped_storage()`` and the
deprecated ``Tensor.storage()`` return."""
from ._storage import TypedStorage, UntypedStorage

__all__ = ["TypedStorage", "UntypedStorage"]

from . import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
