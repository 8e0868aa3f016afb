"""``torch.nn.modules.instancenorm``: the instance-norm layers and their base at PyTorch's
path (hookgrad defines them in ``normalization``)."""
from .normalization import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, _InstanceNorm

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]

from ... import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
