"""``torch.onnx.symbolic_opset11``: ONNX opset 11's symbolic functions, used only while
exporting to ONNX, which hookgrad does not implement (every name says so)."""
from .. import _missing

__getattr__ = _missing.module_getattr(__name__)
