"""``torch.cpu``: the CPU as a device (always there) and its ``amp`` module."""
from . import amp

__all__ = ["amp", "current_device", "device_count", "is_available"]


def is_available() -> bool:
    """The CPU is always available."""
    return True


def device_count() -> int:
    """PyTorch counts the CPU as one device."""
    return 1


def current_device() -> str:
    return "cpu"


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
