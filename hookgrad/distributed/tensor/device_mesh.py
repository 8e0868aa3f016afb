"""``hookgrad.distributed.tensor.device_mesh``: the device mesh, where PyTorch re-exports it."""
from ..device_mesh import DeviceMesh, init_device_mesh

__all__ = ["DeviceMesh", "init_device_mesh"]

from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
del _m
