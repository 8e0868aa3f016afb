"""``hookgrad.ao``, PyTorch's ``torch.ao``: only the quantization stubs that float models
hold (``torch.ao.quantization.QuantStub``/``DeQuantStub``)."""
from .. import _missing

__getattr__ = _missing.module_getattr(__name__)
