"""``torch.mps.Event``: without Metal, making one raises as PyTorch's build does."""
from .. import _missing
from ._backend import MPS

__all__ = ["Event"]


class Event:
    """A Metal event (needs the MPS backend: making one raises)."""

    def __init__(self, enable_timing=False):
        raise MPS.without("acquireEvent")


__getattr__ = _missing.module_getattr(__name__)
