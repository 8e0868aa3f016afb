"""``hookgrad.ao.quantization``: the stubs marking where a float model would be quantized.

Models written for quantization hold :class:`QuantStub` and :class:`DeQuantStub`; until
``torch.ao.quantization.convert`` swaps them, they pass their input through unchanged,
which is what they do here. Preparing and converting (observers, quantized kernels) is not
implemented.
"""
from ... import _missing
from ...nn.modules.module import Module

__all__ = ["DeQuantStub", "QuantStub"]


class _FloatStub(Module):
    """A stub of a float model: the identity until conversion swaps it."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class QuantStub(_FloatStub):
    r"""Quantize stub module: before calibration and conversion it is the identity.

    Args:
        qconfig: quantization configuration for the tensor, if qconfig is not provided,
            we will get qconfig from parent modules
    """


class DeQuantStub(_FloatStub):
    r"""Dequantize stub module: before conversion it is the identity.

    Args:
        qconfig: quantization configuration for the tensor, if qconfig is not provided,
            we will get qconfig from parent modules
    """


__getattr__ = _missing.module_getattr(__name__)
