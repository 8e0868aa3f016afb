"""``torch._dynamo.utils``: the helpers libraries read from it."""
from .. import _missing
from .._dtype import device as _device

__all__ = ["is_compile_supported"]


def is_compile_supported(device_type) -> bool:
    """Whether ``torch.compile`` can compile for ``device_type``: ``hookgrad.compile``
    compiles with XLA for every device hookgrad runs on."""
    _device(device_type)  # PyTorch's error for a device name it does not know
    return True


__getattr__ = _missing.module_getattr(__name__)
