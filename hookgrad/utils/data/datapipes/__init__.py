"""DataPipes (``torch.utils.data.datapipes``, deprecated in PyTorch): the base classes,
``functional_datapipe`` registration and determinism markers. PyTorch's built-in steps
(``datapipes.iter``, ``datapipes.map``) are not implemented."""
from . import datapipe
from ._decorator import (argument_validation, functional_datapipe,  # noqa: F401
                         guaranteed_datapipes_determinism, non_deterministic,
                         runtime_validation, runtime_validation_disabled)
from .datapipe import DataChunk, DFIterDataPipe, IterDataPipe, MapDataPipe  # noqa: F401

from .... import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
