"""``hookgrad.nn.parallel``: PyTorch's data-parallel wrappers, single-process.

hookgrad runs one process on one JAX device: ``DataParallel`` and
``DistributedDataParallel`` keep PyTorch's interface (``.module``, ``module.``-prefixed
``state_dict`` keys, ``no_sync()``) and call the wrapped module as it is. A sharded,
multi-device path is for a later issue.
"""
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel
from .scatter_gather import gather, scatter

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel", "gather", "scatter"]
