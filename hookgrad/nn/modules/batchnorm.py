"""``torch.nn.modules.batchnorm``: the batch-norm layers and their bases at PyTorch's path
(hookgrad defines them in ``normalization``)."""
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm, _NormBase

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]

from ... import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
