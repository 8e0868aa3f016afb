"""Samplers: which dataset indices a DataLoader reads, and in what order.

Random samplers draw from a ``generator`` (anything with ``next_key()``, e.g.
``hookgrad.Generator``) or, when it is None, from hookgrad's global key, so
``hookgrad.manual_seed(s)`` makes every epoch's order reproducible.
"""
from __future__ import annotations

import itertools

import jax
import numpy as np

from ... import random as _random
from ..._arguments import keep

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler",
           "SubsetRandomSampler", "WeightedRandomSampler"]


def _host_rng(generator):
    """A NumPy generator seeded by one subkey of ``generator`` or of hookgrad's global key.

    NOTE: orders are drawn on the host: ``jax.random.permutation`` of 50,000 takes about
    100 ms on a CPU (a sort per round), NumPy's about 1 ms; one subkey per epoch keeps
    ``hookgrad.manual_seed`` (or the generator) in charge of every order.
    """
    key = _random.next_key() if generator is None else generator.next_key()
    if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):  # a typed key; else raw bits
        key = jax.random.key_data(key)
    return np.random.default_rng(np.asarray(key).ravel().tolist())


def _randperm(n, generator):
    return _host_rng(generator).permutation(n).tolist()


class Sampler:
    """Sampler()

    Base class: subclasses define ``__iter__`` (indices, or lists of indices for a batch
    sampler) and usually ``__len__``.
    """

    def __iter__(self):
        raise NotImplementedError

    def __class_getitem__(cls, item):
        return cls


class SequentialSampler(Sampler):
    """SequentialSampler(data_source)

    ``0, 1, ..., len(data_source) - 1``. Example::

        >>> list(SequentialSampler(range(3)))
        [0, 1, 2]
    """

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """RandomSampler(data_source, replacement=False, num_samples=None, generator=None)

    A random permutation of the indices (repeated to ``num_samples``), or ``num_samples``
    indices drawn with replacement. Example::

        >>> hookgrad.manual_seed(0)
        >>> sorted(RandomSampler(range(4)))
        [0, 1, 2, 3]
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        # the dataset's size may change between epochs
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, total = len(self.data_source), self.num_samples
        if self.replacement:
            yield from _host_rng(self.generator).integers(0, n, total).tolist()
            return
        for _ in range(total // n):
            yield from _randperm(n, self.generator)
        if total % n:
            yield from _randperm(n, self.generator)[:total % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """SubsetRandomSampler(indices, generator=None)

    ``indices`` in a random order. Example::

        >>> sorted(SubsetRandomSampler([5, 7]))
        [5, 7]
    """

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _randperm(len(self.indices), self.generator):
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """WeightedRandomSampler(weights, num_samples, replacement=True, generator=None)

    ``num_samples`` indices drawn with probabilities proportional to ``weights``.
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        if not replacement and num_samples > w.shape[0]:
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                               "replacement")
        self.weights = w
        keep(self, locals(), "num_samples", "replacement", "generator")

    def __iter__(self):
        p = self.weights / self.weights.sum()
        yield from _host_rng(self.generator).choice(
            p.shape[0], self.num_samples, replace=self.replacement, p=p).tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """BatchSampler(sampler, batch_size, drop_last)

    Lists of ``batch_size`` indices from ``sampler``. Example::

        >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
        [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        keep(self, locals(), "sampler", "batch_size", "drop_last")

    def __iter__(self):
        it = iter(self.sampler)
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
