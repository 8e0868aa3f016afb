"""``DistributedSampler``: each process of a data-parallel job reads its own share of a
dataset (``torch.utils.data.distributed``)."""
from __future__ import annotations

import math

from ..._generator import Generator
from .sampler import Sampler, _randperm

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """DistributedSampler(dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False)

    Restricts a DataLoader to the indices of one rank: the (shuffled) indices are padded by
    repeating them (or, with ``drop_last=True``, cut) to a multiple of ``num_replicas``, and
    rank ``r`` reads every ``num_replicas``-th one from ``r``. ``num_replicas`` and ``rank``
    default to the default process group's world size and rank.

    Call :meth:`set_epoch` at the start of each epoch, before iterating the loader: the
    shuffle is seeded with ``seed + epoch``, so every rank draws the same order and each
    epoch a new one. The order is drawn from a ``hookgrad.Generator`` (its numbers differ
    from PyTorch's for the same seed); the split, padding and ``drop_last`` are PyTorch's.

    Example::

        >>> sampler = DistributedSampler(dataset, num_replicas=2, rank=0, shuffle=False)
        >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
        [1, 3, 0]
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            from ... import distributed as dist  # the job's process group, when asked for
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            indices = _randperm(n, Generator().manual_seed(self.seed + self.epoch))
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        elif self.total_size > n:  # pad by repeating the order from its start
            padding = self.total_size - n
            indices += (indices * math.ceil(padding / n))[:padding]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch: with ``shuffle=True`` each epoch gets its own order (the same on
        every rank); otherwise the next iteration repeats the last order."""
        self.epoch = epoch


from ... import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
