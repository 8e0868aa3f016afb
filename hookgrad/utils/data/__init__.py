"""Datasets, samplers and the DataLoader, as ``torch.utils.data``.

Batches are stacked on the host with NumPy and put on the device once per field; workers
(``num_workers > 0``) are threads. Example::

    >>> from hookgrad.utils.data import DataLoader, TensorDataset
    >>> loader = DataLoader(TensorDataset(hookgrad.randn(8, 3)), batch_size=4, shuffle=True)
"""
from ._utils.collate import default_collate, default_convert
from ._utils.worker import get_worker_info
from .dataloader import DataLoader, _DatasetKind
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset,
                      Subset, TensorDataset, random_split)
from .datapipes import (DataChunk, DFIterDataPipe, IterDataPipe, MapDataPipe,
                        argument_validation, functional_datapipe,
                        guaranteed_datapipes_determinism, non_deterministic,
                        runtime_validation, runtime_validation_disabled)
from .distributed import DistributedSampler
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler, WeightedRandomSampler)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "DistributedSampler",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset",
           "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
           "_DatasetKind", "default_collate", "default_convert", "get_worker_info",
           "random_split", "DataChunk", "DFIterDataPipe", "IterDataPipe", "MapDataPipe",
           "argument_validation", "functional_datapipe", "guaranteed_datapipes_determinism",
           "non_deterministic", "runtime_validation", "runtime_validation_disabled"]


from ... import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
