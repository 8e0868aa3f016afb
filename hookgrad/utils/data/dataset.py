"""Datasets: map-style (``Dataset``) and iterable-style (``IterableDataset``), and the
wrappers PyTorch ships (``TensorDataset``, ``Subset``, ``ConcatDataset``, ...).

``TensorDataset`` and ``Subset`` gather a whole batch on the host with one NumPy
fancy-indexing call per tensor (``__getitems__``); the DataLoader then puts each field on
the device once per batch instead of once per sample.
"""
from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Sequence

import numpy as np

from ..._generator import default_generator
from ..._host_value import readable
from ._utils.collate import _host_to_tensors
from .sampler import _randperm
from ... import _errors

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]


class Dataset:
    """Dataset()

    A map from keys to samples. Subclasses define ``__getitem__`` and usually ``__len__``;
    ``__getitems__(indices)`` may return a whole batch's samples at once.

    Example::

        >>> class Squares(Dataset):
        ...     def __len__(self): return 4
        ...     def __getitem__(self, i): return i * i
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def _fast_gather(self):
        """A batch gather returning NumPy fields, or None (the DataLoader's fetchers ask)."""
        return _fast_gather(self)

    def __add__(self, other):
        return ConcatDataset([self, other])

    def __class_getitem__(cls, item):  # ``Dataset[int]`` in type hints, as in PyTorch
        return cls


class IterableDataset(Dataset):
    """IterableDataset()

    A stream of samples: subclasses define ``__iter__``. With ``num_workers > 0`` each
    worker iterates it; ``get_worker_info()`` tells a worker which share is its own.

    Example::

        >>> class Count(IterableDataset):
        ...     def __iter__(self): return iter(range(3))
        >>> list(DataLoader(Count(), batch_size=None))
        [0, 1, 2]
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """TensorDataset(*tensors)

    Sample ``i`` is ``tuple(t[i] for t in tensors)``; all tensors share their first size.

    Example::

        >>> ds = TensorDataset(hookgrad.randn(8, 3), hookgrad.arange(8))
        >>> x, y = ds[0]
    """

    def __init__(self, *tensors):
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors
        self._host = None  # (the tensors' arrays, their NumPy views), built on first gather

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)

    def _host_fields(self):
        # NOTE: keyed on the arrays themselves: an in-place op replaces a Tensor's array,
        # so a stale host copy is never used; a host-held one is its live memory, read
        # with no transfer
        arrays = tuple(readable(t) for t in self.tensors)
        if self._host is None or any(a is not b for a, b in zip(arrays, self._host[0])):
            # one device-to-host copy per tensor (none on the CPU, where it is a view)
            self._host = (arrays, tuple(np.asarray(a) for a in arrays))
        return self._host[1]

    def _gather(self, indices):
        """The batch ``indices`` as one NumPy array per tensor (one fancy-indexing call)."""
        idx = np.asarray(indices, dtype=np.int64)
        n = len(self)
        if idx.size and (idx.min() < -n or idx.max() >= n):
            bad = idx[(idx < -n) | (idx >= n)][0]
            raise IndexError(f"index {bad} is out of bounds for dimension 0 with size {n}")
        return tuple(np.take(f, idx, axis=0) for f in self._host_fields())

    def _plain(self):
        # a subclass's own __getitem__, or a tensor in an autograd graph (whose batch must
        # keep the graph), keeps PyTorch's per-sample indexing
        return type(self).__getitem__ is TensorDataset.__getitem__ and \
            not any(t.requires_grad for t in self.tensors)

    def __getitems__(self, indices):
        if not self._plain():
            return [self[i] for i in indices]
        if not len(indices):
            return []
        return list(zip(*(list(t) for t in _host_to_tensors(self._gather(indices)))))


def _fast_gather(dataset):
    """``dataset``'s batch gather returning NumPy fields, or None if it has none.

    Only for the classes defined here, not for subclasses that change how a sample is
    read (their ``__getitem__``/``__getitems__`` must run).
    """
    cls = type(dataset)
    if isinstance(dataset, TensorDataset) and cls.__getitems__ is TensorDataset.__getitems__:
        return dataset._gather if dataset._plain() else None
    if isinstance(dataset, Subset) and cls.__getitems__ is Subset.__getitems__ and \
            cls.__getitem__ is Subset.__getitem__:
        inner = _fast_gather(dataset.dataset)
        if inner is not None:
            return lambda indices: inner([dataset.indices[i] for i in indices])
    return None


class StackDataset(Dataset):
    """StackDataset(*args, **kwargs)

    Sample ``i`` is ``tuple(d[i] for d in args)`` or ``{k: d[i] for k, d in kwargs.items()}``.
    """

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = args or list(kwargs.values())
        self._length = len(parts[0])
        if any(self._length != len(d) for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args or kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def _column(self, dataset, indices):
        if callable(getattr(dataset, "__getitems__", None)):
            items = dataset.__getitems__(indices)
            if len(items) != len(indices):
                raise ValueError("Nested dataset's output size mismatch. "
                                 f"Expected {len(indices)}, got {len(items)}")
            return items
        return [dataset[i] for i in indices]

    def __getitems__(self, indices):
        if isinstance(self.datasets, dict):
            cols = {k: self._column(d, indices) for k, d in self.datasets.items()}
            return [{k: c[j] for k, c in cols.items()} for j in range(len(indices))]
        cols = [self._column(d, indices) for d in self.datasets]
        return [tuple(c[j] for c in cols) for j in range(len(indices))]

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """ConcatDataset(datasets)

    The datasets one after another. Example::

        >>> len(ConcatDataset([TensorDataset(hookgrad.zeros(2)), TensorDataset(hookgrad.ones(3))]))
        5
    """

    @staticmethod
    def cumsum(sequence) -> list[int]:
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]

    @property
    def cummulative_sizes(self) -> list[int]:
        _errors.warn("`cummulative_sizes` attribute is renamed to `cumulative_sizes`",
                     FutureWarning)
        return self.cumulative_sizes


class ChainDataset(IterableDataset):
    """ChainDataset(datasets)

    Iterable datasets one after another, chained as they are iterated.
    """

    def __init__(self, datasets):
        self.datasets = datasets

    def _checked(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield d

    def __iter__(self):
        for d in self._checked():
            yield from d

    def __len__(self):
        return sum(len(d) for d in self._checked())


class Subset(Dataset):
    """Subset(dataset, indices)

    The samples of ``dataset`` at ``indices``. Example::

        >>> sub = Subset(TensorDataset(hookgrad.arange(10)), [2, 4])
        >>> sub[1]
        (tensor(4),)
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices
        cls = type(self)
        if cls.__getitem__ is not Subset.__getitem__ and cls.__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{cls.__name__} overrides __getitem__ but not __getitems__. When subclassing "
                "Subset and overriding __getitem__, you must also override __getitems__ to "
                "ensure DataLoader works correctly with your custom logic. A simple "
                "implementation:\n\ndef __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        inner = [self.indices[i] for i in indices]
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__(inner)
        return [self.dataset[i] for i in inner]

    def __len__(self):
        return len(self.indices)


def _split_lengths(n, fractions):
    lengths = []
    for i, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths.append(math.floor(n * frac))
    for i in range(n - sum(lengths)):  # the remainder, one each, round robin
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            _errors.warn(f"Length of split at index {i} is 0. This might result in an "
                         "empty dataset.")
    return lengths


def random_split(dataset: Dataset, lengths: Sequence[int | float],
                 generator=default_generator) -> list[Subset]:
    """random_split(dataset, lengths, generator=default_generator) -> list of Subset

    Split ``dataset`` at random into non-overlapping subsets of the given ``lengths`` (or
    fractions summing to 1). The permutation comes from ``generator`` (by default the
    global one that ``hookgrad.manual_seed`` seeds).

    Example::

        >>> hookgrad.manual_seed(0)
        >>> train, val = random_split(range(10), [0.8, 0.2])
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _split_lengths(len(dataset), lengths)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = _randperm(sum(lengths), generator)
    return [Subset(dataset, indices[end - length:end])
            for end, length in zip(itertools.accumulate(lengths), lengths)]


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
