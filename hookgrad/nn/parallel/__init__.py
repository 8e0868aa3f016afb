"""``hookgrad.nn.parallel``: PyTorch's data-parallel wrappers.

Both keep PyTorch's interface (``.module``, ``module.``-prefixed ``state_dict`` keys,
``no_sync()``). ``DistributedDataParallel`` on a device mesh shards the batch of every
``hookgrad.compile`` step that runs it (docs/distributed.md); ``DataParallel`` calls the
wrapped module as it is.
"""
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel
from .scatter_gather import gather, scatter

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel", "gather", "scatter"]


from ... import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
