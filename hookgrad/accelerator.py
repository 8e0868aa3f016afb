"""``torch.accelerator``: the current accelerator, device-agnostic. hookgrad's one
accelerator type is ``cuda`` (a JAX GPU backend, ``hookgrad.cuda``); with none, there is no
accelerator and these report so as PyTorch's CPU build does."""
from . import _missing, cuda
from ._dtype import device as _device

__all__ = ["current_accelerator", "current_device_idx", "current_device_index",
           "device_count", "is_available", "set_device_idx", "set_device_index",
           "synchronize"]


def is_available() -> bool:
    """Whether an accelerator (a JAX GPU) is available."""
    return cuda.is_available()


def current_accelerator(check_available: bool = False):
    """The accelerator's device type as a ``torch.device`` (``device(type='cuda')``), or
    None without one."""
    return _device("cuda") if cuda.is_available() else None


def device_count() -> int:
    """The number of accelerator devices (0 without one)."""
    return cuda.device_count() if cuda.is_available() else 0


def current_device_index() -> int:
    """The index of the current accelerator device."""
    return cuda.current_device()


def set_device_index(device, /) -> None:
    """Make ``device`` (an index or a device) the current accelerator device."""
    cuda.set_device(device)


def synchronize(device=None, /) -> None:
    """Wait for the accelerator's queued work to finish."""
    if cuda.is_available():
        cuda.synchronize(device)


current_device_idx = current_device_index
set_device_idx = set_device_index

__getattr__ = _missing.module_getattr(__name__)
