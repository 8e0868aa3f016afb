"""``torch.autograd.profiler_util``: the event tables of PyTorch's profilers. hookgrad's
profilers record JAX traces, not these events: the classes exist for imports and
``isinstance``, and constructing one raises hookgrad's "does not implement" error."""
from .. import _missing
from .profiler import EventList, FunctionEvent

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "MemRecordsAcc", "StringTable"]

FunctionEventAvg = _missing.not_implemented_class("torch.autograd.profiler_util.FunctionEventAvg")
MemRecordsAcc = _missing.not_implemented_class("torch.autograd.profiler_util.MemRecordsAcc")
StringTable = _missing.not_implemented_class("torch.autograd.profiler_util.StringTable", (dict,))

__getattr__ = _missing.module_getattr(__name__)
