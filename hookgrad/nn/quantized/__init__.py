"""``torch.nn.quantized``: hookgrad has no quantized Tensors, so of PyTorch's quantized
modules only the float ones exist: ``FloatFunctional`` and ``FXFloatFunctional``, which
quantizable models (torchvision's, for one) call for their additions and concatenations."""
from ... import _missing
from . import modules  # noqa: F401
from .modules import FloatFunctional, FXFloatFunctional  # noqa: F401

__all__ = ["FloatFunctional", "FXFloatFunctional"]

__getattr__ = _missing.module_getattr(__name__)
