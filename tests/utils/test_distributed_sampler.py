"""DistributedSampler against torch's: the shares of each rank (padding, drop_last), their
lengths, the epoch-seeded shuffle (a permutation split across ranks, the same in each
process), and its errors."""
import pytest

import hookgrad.utils.data as hdata

try:
    import torch.utils.data as tdata
except ImportError:
    tdata = None

needs_torch = pytest.mark.skipif(tdata is None, reason="PyTorch not installed")


@needs_torch
@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (2, 5, False),
                                                  (12, 4, False), (7, 2, True)])
def test_unshuffled_shares_match_torch(n, replicas, drop_last):
    data = list(range(n))
    for rank in range(replicas):
        h = hdata.DistributedSampler(data, replicas, rank, shuffle=False, drop_last=drop_last)
        t = tdata.DistributedSampler(data, replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(h) == list(t) and len(h) == len(t)


def test_shuffled_shares_partition_one_permutation_per_epoch():
    data = list(range(11))
    for epoch in (0, 1):
        shares = []
        for rank in range(3):
            s = hdata.DistributedSampler(data, 3, rank, seed=7)
            s.set_epoch(epoch)
            shares.append(list(s))
            assert list(s) == shares[-1]   # the same order again: seeded, not drawn
        merged = [i for share in zip(*shares) for i in share]
        assert sorted(merged[:11]) == data and len(merged) == 12
        if epoch == 0:
            first = shares
    assert shares != first


@needs_torch
def test_errors_match_torch():
    for lib in (hdata, tdata):
        with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval "
                                             r"\[0, 2\]"):
            lib.DistributedSampler(list(range(4)), 3, 3)
