"""DistributedSampler against PyTorch's: each rank's indices, padding, drop_last, epochs."""
import pytest

import hookgrad
from hookgrad.utils.data import distributed as hg_distributed
from tests.differential import raises, same_as_torch

CASES = [(n, replicas, drop_last) for n in (0, 1, 7, 10, 12) for replicas in (1, 3, 4, 11)
         for drop_last in (False, True)]


def _ranks(L, n, replicas, **kw):
    samplers = [L.utils.data.distributed.DistributedSampler(
        list(range(n)), num_replicas=replicas, rank=r, **kw) for r in range(replicas)]
    return [[s.num_samples, s.total_size, len(s), list(s)] for s in samplers]


@pytest.mark.parametrize("n,replicas,drop_last", CASES)
def test_unshuffled_split_padding_and_drop_last_match_torch(n, replicas, drop_last):
    got = same_as_torch(lambda L: _ranks(L, n, replicas, shuffle=False, drop_last=drop_last))
    assert sum(len(r[3]) for r in got) == got[0][1]


@pytest.mark.parametrize("n,replicas,drop_last", CASES)
def test_shuffled_ranks_read_torchs_indices(n, replicas, drop_last):
    """The shuffled order is PyTorch's for the same seed, split and padded as PyTorch's."""
    got = same_as_torch(lambda L: _ranks(L, n, replicas, drop_last=drop_last, seed=5))
    order = [i for step in zip(*[r[3] for r in got]) for i in step]  # rank r: order[r::k]
    head = order[:n]  # with drop_last, the order cut to a multiple of the replicas
    assert len(set(head)) == len(head) and set(head) <= set(range(n))
    if not drop_last:
        assert sorted(head) == list(range(n))
        assert order[n:] == (head * len(order))[:len(order) - n]  # padding repeats it


@pytest.mark.parametrize("seed", [0, 7, -3, 2 ** 40 + 1])
def test_each_epochs_order_is_torchs(seed):
    def epochs(L):
        s = L.utils.data.distributed.DistributedSampler(range(300), num_replicas=3, rank=2,
                                                        seed=seed)
        out = []
        for epoch in (0, 1, 5):
            s.set_epoch(epoch)
            out.append(list(s))
        return out
    got = same_as_torch(epochs)
    assert got[0] != got[1]


def test_set_epoch_reshuffles_reproducibly_on_every_rank():
    def order(seed, epoch):
        s = hg_distributed.DistributedSampler(range(50), num_replicas=1, rank=0, seed=seed)
        s.set_epoch(epoch)
        return list(s)

    hookgrad.manual_seed(0)
    first = order(0, 0)
    hookgrad.manual_seed(1)  # the global key plays no part: seed + epoch decide
    assert order(0, 0) == first and sorted(first) == list(range(50))
    assert order(0, 1) != first and order(0, 1) == order(1, 0)
    again = hg_distributed.DistributedSampler(range(50), num_replicas=1, rank=0, seed=0)
    assert list(again) == list(again) == first  # no set_epoch: the same order


def test_rank_errors_match_torch():
    def bad(L):
        D = L.utils.data.distributed.DistributedSampler
        return [raises(D, range(4), 2, 2), raises(D, range(4), 2, -1),
                raises(D, range(4))]  # no process group

    got = same_as_torch(bad)
    assert got[0] == {"raises": "ValueError",
                      "message": "Invalid rank 2, rank should be in the interval [0, 1]"}
    assert got[2]["raises"] == "ValueError"


def test_exported_from_utils_data():
    assert hookgrad.utils.data.DistributedSampler is hg_distributed.DistributedSampler
