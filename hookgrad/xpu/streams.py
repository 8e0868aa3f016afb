"""``torch.xpu`` streams and events: JAX has no XPU backend, so making one raises as
PyTorch's build without XPU does."""
from .. import _missing
from .._absent_backend import dummy_type
from ._backend import XPU, no_device_switch

__all__ = ["Stream", "Event"]


class Stream(dummy_type("_XpuStreamBase")):
    """An XPU stream (needs an XPU device: making one raises)."""

    def __init__(self, device=None, priority=0, **kwargs):
        if device is not None and not ("stream_id" in kwargs and "device_index" in kwargs):
            XPU.device_index(device, optional=True)
            raise no_device_switch()  # PyTorch makes it inside ``with xpu.device(device)``
        super().__init__()


class Event(dummy_type("_XpuEventBase")):
    """An XPU event (needs an XPU device: making one raises)."""

    def __init__(self, enable_timing=False):
        super().__init__()


__getattr__ = _missing.module_getattr(__name__)
