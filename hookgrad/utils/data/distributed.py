"""``DistributedSampler``: each process of a data-parallel job reads its own share of a
dataset (``torch.utils.data.distributed``)."""
from __future__ import annotations

import math

import numpy as np

from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """DistributedSampler(dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False)

    Restricts a DataLoader to the indices of one rank: the (shuffled) indices are padded by
    repeating them (or, with ``drop_last=True``, cut) to a multiple of ``num_replicas``, and
    rank ``r`` reads every ``num_replicas``-th one from ``r``. ``num_replicas`` and ``rank``
    default to the default process group's world size and rank.

    Call :meth:`set_epoch` at the start of each epoch, before iterating the loader: the
    shuffle is seeded with ``seed + epoch``, so every rank draws the same order and each
    epoch a new one. The order is PyTorch's for the same ``seed`` and epoch (its CPU
    ``randperm``), so a job reads its data in the same order under either library.

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
            indices = _torch_randperm(n, self.seed + self.epoch)
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


def _torch_randperm(n: int, seed: int) -> list[int]:
    """``torch.randperm(n, generator=torch.Generator().manual_seed(seed))`` on a CPU:
    Fisher-Yates swaps driven by the 32-bit Mersenne Twister a PyTorch CPU generator
    seeded with ``seed`` runs (64-bit draws, two words high first, from 2**32 / 20
    elements up). NumPy's ``MT19937`` seeded with an integer is the same engine."""
    _, key, pos, *_ = np.random.RandomState(seed & 0xFFFFFFFF).get_state()
    words = np.random.MT19937()
    words.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
    wide = n >= (1 << 32) // 20
    raw = words.random_raw((n - 1) * (2 if wide else 1)) if n > 1 else np.zeros(0, np.uint64)
    if wide:
        raw = (raw[0::2] << np.uint64(32)) | raw[1::2]
    order = list(range(n))
    for i, r in enumerate(raw.tolist()):
        z = i + r % (n - i)
        order[i], order[z] = order[z], order[i]
    return order


from ... import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
