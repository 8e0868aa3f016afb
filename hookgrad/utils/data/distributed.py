"""``DistributedSampler``: each process of a data-parallel job reads its own share of a
dataset, as ``torch.utils.data.distributed``."""
from __future__ import annotations

import math

from ..._generator import Generator
from .sampler import Sampler, _randperm

__all__ = ["DistributedSampler"]


def _from_process_group(what):
    from ... import distributed as dist
    if not dist.is_available():
        raise RuntimeError("Requires distributed package to be available")
    return dist.get_world_size() if what == "world" else dist.get_rank()


class DistributedSampler(Sampler):
    """DistributedSampler(dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
    drop_last=False)

    The indices of ``dataset`` for process ``rank`` of ``num_replicas`` (by default the
    process group's): every ``num_replicas``-th index from ``rank`` on, padded by
    repetition (or cut, ``drop_last``) to equal shares. With ``shuffle`` the order is a
    permutation drawn from ``seed + epoch`` (call ``set_epoch`` each epoch): the same in
    every process, different from PyTorch's (JAX PRNG).
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None:
            num_replicas = _from_process_group("world")
        if rank is None:
            rank = _from_process_group("rank")
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
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = _randperm(n, g)
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch: with ``shuffle``, each epoch has its own order."""
        self.epoch = epoch


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
