"""``hookgrad.onnx``, PyTorch's ``torch.onnx``: exporting to ONNX is not implemented.

What libraries do at import works: they register symbolic functions for their custom
operators (torchvision does for ``torchvision::nms`` and ``roi_align``) with
:func:`register_custom_op_symbolic`, which checks and keeps them as PyTorch does. The
symbolic functions only run during an export, which raises.
"""
import re

from .. import _missing
from . import symbolic_helper, symbolic_opset11  # noqa: F401 - PyTorch's deprecated paths

__all__ = ["OnnxExporterError", "export", "is_in_onnx_export", "register_custom_op_symbolic",
           "unregister_custom_op_symbolic"]


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter."""

# (symbolic_name, opset_version) -> symbolic function, as registered
_CUSTOM_SYMBOLICS = {}

export = _missing.not_implemented("torch.onnx.export")


def is_in_onnx_export() -> bool:
    """Returns whether it is in the middle of ONNX export (never: hookgrad has no
    exporter)."""
    return False


def _verify_custom_op_name(symbolic_name):
    if not re.match(r"^[a-zA-Z0-9-_]+::[a-zA-Z-_]+[a-zA-Z0-9-_]*$", symbolic_name):
        raise OnnxExporterError(f"Failed to register operator {symbolic_name}. The symbolic "
                                "name must match the format domain::name, and should start "
                                "with a letter and contain only alphanumeric characters")
    ns, _ = symbolic_name.split("::")
    if ns == "onnx":
        raise ValueError(f"Failed to register operator {symbolic_name}. {ns} domain cannot be "
                         "modified.")


def register_custom_op_symbolic(symbolic_name: str, symbolic_fn, opset_version: int) -> None:
    """Registers a symbolic function for a custom operator (``"<domain>::<op>"``, or
    ``"::<op>"`` for an ``aten`` one) at ``opset_version``, for an ONNX export."""
    if symbolic_name.startswith("::"):
        symbolic_name = f"aten{symbolic_name}"
    _verify_custom_op_name(symbolic_name)
    _CUSTOM_SYMBOLICS[(symbolic_name, opset_version)] = symbolic_fn


def unregister_custom_op_symbolic(symbolic_name: str, opset_version: int) -> None:
    """Unregisters the symbolic function of ``symbolic_name`` at ``opset_version``."""
    if symbolic_name.startswith("::"):
        symbolic_name = f"aten{symbolic_name}"
    _verify_custom_op_name(symbolic_name)
    _CUSTOM_SYMBOLICS.pop((symbolic_name, opset_version), None)


__getattr__ = _missing.module_getattr(__name__)
