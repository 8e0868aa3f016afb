"""``hookgrad.distributed.tensor.experimental``: PyTorch's experimental DTensor helpers."""
from ._dispatch import implicit_replication

__all__ = ["implicit_replication"]

from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
del _m
