"""``torch.nn.quantized.modules``: of the quantized modules, the float ones
(``FloatFunctional``, ``FXFloatFunctional``); the rest need quantized Tensors."""
from .... import _missing
from .functional_modules import FloatFunctional, FXFloatFunctional  # noqa: F401

__all__ = ["FloatFunctional", "FXFloatFunctional"]

__getattr__ = _missing.module_getattr(__name__)
