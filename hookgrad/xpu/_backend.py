"""The one absent XPU backend that ``hookgrad.xpu``'s modules answer for."""
from .._absent_backend import AbsentBackend

XPU = AbsentBackend("XPU")


def lazy_init():
    """Initializing XPU: PyTorch's CPU build (and hookgrad, on JAX) has none."""
    raise XPU.not_compiled()


def no_device_switch():
    """Switching the current XPU device (``torch.xpu.device``): PyTorch's build has only a
    placeholder."""
    return NotImplementedError("PyTorch was compiled without XPU support")
