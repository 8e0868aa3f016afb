"""``torch.utils.data.graph``: the graph of a DataPipe pipeline. Traversing it is not
implemented (PyTorch finds the source DataPipes by pickling each step)."""
from ... import _missing
from .datapipes.datapipe import DataChunk, IterDataPipe, MapDataPipe  # noqa: F401

__all__ = ["traverse", "traverse_dps"]

traverse_dps = _missing.not_implemented("torch.utils.data.graph.traverse_dps")
traverse = _missing.not_implemented("torch.utils.data.graph.traverse")

__getattr__ = _missing.module_getattr(__name__)
