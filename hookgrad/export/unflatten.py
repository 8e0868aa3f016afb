"""``torch.export.unflatten``: rebuilding the submodule hierarchy of an exported program.

Not implemented: hookgrad's exported program is one StableHLO function with no per-submodule
calling convention to split it along (``export(..., preserve_module_call_signature=)`` is
not implemented either). The names exist; using them raises hookgrad's error.
"""
from .. import _missing

__all__ = ["FlatArgsAdapter", "InterpreterModule", "InterpreterModuleDispatcher",
           "UnflattenedModule", "unflatten"]

unflatten = _missing.not_implemented("torch.export.unflatten")
FlatArgsAdapter = _missing.not_implemented_class("torch.export.unflatten.FlatArgsAdapter")
InterpreterModule = _missing.not_implemented_class("torch.export.unflatten.InterpreterModule")
InterpreterModuleDispatcher = _missing.not_implemented_class(
    "torch.export.unflatten.InterpreterModuleDispatcher")
UnflattenedModule = _missing.not_implemented_class("torch.export.unflatten.UnflattenedModule")

__getattr__ = _missing.module_getattr(__name__)
