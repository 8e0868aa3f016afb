"""``torch.get_device_module``: the ``torch.<type>`` module of a device type."""
from typing import Any

from ._dtype import device as _device


def get_device_module(device=None) -> Any:
    """The module of ``device``'s type (``hookgrad.cuda`` for ``"cuda:0"``); with no
    device, that of the current accelerator, or ``hookgrad.cpu`` without one."""
    import importlib
    if isinstance(device, _device):
        name = device.type
    elif isinstance(device, str):
        name = _device(device).type
    elif device is None:
        from .accelerator import current_accelerator
        acc = current_accelerator()
        name = "cpu" if acc is None else acc.type
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or "
                           "None")
    try:
        return importlib.import_module(f"hookgrad.{name}")
    except ImportError:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered "
                           f"as 'torch.{name}'.") from None

