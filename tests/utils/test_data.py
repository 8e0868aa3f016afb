"""hookgrad.utils.data: datasets, samplers, collation and the DataLoader, compared with
torch.utils.data where torch is installed (lengths, batch structure, values where no RNG
is involved, errors); shuffled orders come from hookgrad's seed and are checked as
permutations and for reproducibility."""
import collections
import inspect
import threading
import warnings

import jax
import numpy as np
import pytest

import hookgrad as hg
import hookgrad.nn.functional as F
from hookgrad import nn
from hookgrad.utils import data as D
from hookgrad.utils.data._utils.collate import default_collate as collate_from_utils
from tests.differential import needs_torch, torch

Point = collections.namedtuple("Point", ["x", "y"])


def lib_data(L):
    return L.utils.data


def summary(x):
    """A batch as plain Python: tensors as (kind, shape, values); dtype kinds, since
    int64/float64 become int32/float32 without JAX's x64 mode (docs/differences.md)."""
    if hasattr(x, "detach") and hasattr(x, "shape"):
        kind = "float" if x.dtype.is_floating_point else \
            "bool" if str(x.dtype).endswith("bool") else "int"
        return ("T", kind, tuple(x.shape), x.detach().tolist())
    if isinstance(x, dict):
        return {k: summary(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__, [summary(v) for v in x])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [summary(v) for v in x])
    if isinstance(x, np.ndarray):
        return ("ndarray", x.tolist())
    return x


def error_of(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


def same(fn):
    """``fn(hookgrad)``, checked equal to ``fn(torch)`` when torch is installed."""
    got = fn(hg)
    if torch is not None:
        want = fn(torch)
        assert got == want, f"hookgrad: {got!r}\n   torch: {want!r}"
    return got


def tensor_ds(L, n=10):
    return L.utils.data.TensorDataset(L.arange(2 * n, dtype=L.float32).reshape(n, 2),
                                      L.arange(n))


# --------------------------------------------------------------------------- datasets


def test_tensor_dataset_items_len_and_size_check():
    got = same(lambda L: [len(tensor_ds(L)), summary(tensor_ds(L)[3]),
                          summary(tensor_ds(L)[-1])])
    assert got[0] == 10 and got[1][1][1][3] == 3
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        D.TensorDataset(hg.zeros(3, 2), hg.zeros(4))


def test_tensor_dataset_getitems_gathers_a_batch_as_samples():
    ds = tensor_ds(hg)
    got = ds.__getitems__([4, 1, 4])
    assert [summary(s) for s in got] == [summary(ds[i]) for i in (4, 1, 4)]
    assert ds.__getitems__([]) == []
    errs = same(lambda L: [error_of(lambda: next(iter(L.utils.data.DataLoader(
        tensor_ds(L), batch_sampler=[[3, 12]]))))])
    assert errs[0] == ("IndexError", "index 12 is out of bounds for dimension 0 with size 10")


def test_tensor_dataset_sees_inplace_updates():
    x = hg.zeros(4, 2)
    ds = D.TensorDataset(x)
    assert next(iter(D.DataLoader(ds, batch_size=4)))[0].sum().item() == 0
    x.add_(1.0)  # the host copy must not be stale
    assert next(iter(D.DataLoader(ds, batch_size=4)))[0].sum().item() == 8


def test_subset_concat_chain_stack():
    def run(L):
        d = L.utils.data
        ds = tensor_ds(L)
        sub = d.Subset(ds, [7, 2, 5])
        cat = d.ConcatDataset([sub, ds])
        both = sub + ds
        stack = d.StackDataset(a=ds, b=d.Subset(ds, list(range(9, -1, -1))))
        return [len(sub), summary(sub[1]), summary(sub[[0, 2]]),
                [summary(s) for s in sub.__getitems__([2, 0])],
                len(cat), cat.cumulative_sizes, summary(cat[4]), summary(cat[-10]),
                summary(both[0]), type(both).__name__,
                len(stack), summary(stack[1]),
                [summary(s) for s in stack.__getitems__([0, 3])]]
    got = same(run)
    assert got[0] == 3 and got[4] == 13 and got[5] == [3, 13]


def test_concat_and_chain_errors():
    class Stream(D.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.n

    with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
        D.ConcatDataset([])
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        D.ConcatDataset([Stream(2)])
    with pytest.raises(ValueError, match="absolute value of index should not exceed"):
        D.ConcatDataset([tensor_ds(hg, 3)])[-4]
    chain = Stream(2) + Stream(3)
    assert isinstance(chain, D.ChainDataset)
    assert list(chain) == [0, 1, 0, 1, 2] and len(chain) == 5
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(D.ChainDataset([tensor_ds(hg)]))
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        D.StackDataset(tensor_ds(hg, 3), tensor_ds(hg, 4))
    with pytest.raises(ValueError, match="At least one dataset should be passed"):
        D.StackDataset()


def test_subset_subclass_must_override_getitems():
    class Bad(D.Subset):
        def __getitem__(self, idx):
            return 0

    with pytest.raises(NotImplementedError, match="Bad overrides __getitem__ but not __getitems__"):
        Bad(tensor_ds(hg), [0])


def test_base_dataset_errors():
    with pytest.raises(NotImplementedError, match="Subclasses of Dataset should implement"):
        D.Dataset()[0]


class KeyGen:
    """A stand-in for ``hookgrad.Generator``: anything with ``next_key()``."""

    def __init__(self, seed):
        self.key = jax.random.key(seed)

    def next_key(self):
        self.key, sub = jax.random.split(self.key)
        return sub


def test_random_split_lengths_fractions_and_seed():
    assert same(lambda L: list(inspect.signature(L.utils.data.random_split).parameters)) == \
        ["dataset", "lengths", "generator"]
    assert inspect.signature(D.random_split).parameters["generator"].default is \
        hg.default_generator
    hg.manual_seed(3)
    a, b = D.random_split(range(10), [3, 7])
    assert (len(a), len(b)) == (3, 7)
    assert sorted(list(a) + list(b)) == list(range(10))
    hg.manual_seed(3)
    assert D.random_split(range(10), [3, 7])[0].indices == a.indices
    parts = D.random_split(range(10), [0.3, 0.3, 0.4], generator=KeyGen(1))
    legacy = KeyGen(1)
    legacy.key = jax.random.PRNGKey(1)  # a raw uint32 key works as well
    assert [p.indices for p in D.random_split(range(10), [0.3, 0.3, 0.4],
                                              generator=legacy)] == [p.indices for p in parts]
    assert [len(p) for p in parts] == same(
        lambda L: [len(p) for p in L.utils.data.random_split(range(10), [0.3, 0.3, 0.4])])
    again = D.random_split(range(10), [0.3, 0.3, 0.4], generator=KeyGen(1))
    assert [p.indices for p in again] == [p.indices for p in parts]
    # the remainder is given out round robin, as PyTorch does
    assert [len(p) for p in D.random_split(range(11), [0.5, 0.25, 0.25])] == same(
        lambda L: [len(p) for p in L.utils.data.random_split(range(11), [0.5, 0.25, 0.25])])


def test_random_split_errors():
    msgs = same(lambda L: [
        error_of(lambda: L.utils.data.random_split(range(10), [3, 3])),
        error_of(lambda: L.utils.data.random_split(range(10), [1.5, -0.5])),
    ])
    assert msgs[0] == ("ValueError",
                       "Sum of input lengths does not equal the length of the input dataset!")
    assert msgs[1] == ("ValueError", "Fraction at index 0 is not between 0 and 1")
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        D.random_split(range(2), [1.0, 0.0])


# --------------------------------------------------------------------------- samplers


def test_sequential_batch_sampler():
    got = same(lambda L: [
        list(L.utils.data.SequentialSampler(range(4))),
        list(L.utils.data.BatchSampler(range(7), 3, False)),
        list(L.utils.data.BatchSampler(range(7), 3, True)),
        len(L.utils.data.BatchSampler(range(7), 3, False)),
        len(L.utils.data.BatchSampler(range(7), 3, True)),
        error_of(lambda: L.utils.data.BatchSampler(range(7), 0, False)),
        error_of(lambda: L.utils.data.BatchSampler(range(7), True, False)),
        error_of(lambda: L.utils.data.BatchSampler(range(7), 2, 1)),
    ])
    assert got[1] == [[0, 1, 2], [3, 4, 5], [6]] and got[2] == [[0, 1, 2], [3, 4, 5]]
    assert got[5] == ("ValueError",
                      "batch_size should be a positive integer value, but got batch_size=0")


def test_random_sampler_permutation_replacement_and_errors():
    hg.manual_seed(0)
    s = D.RandomSampler(range(20))
    e1, e2 = list(s), list(s)
    assert sorted(e1) == list(range(20)) and sorted(e2) == list(range(20)) and e1 != e2
    hg.manual_seed(0)
    assert list(s) == e1
    more = list(D.RandomSampler(range(5), num_samples=12))
    assert len(more) == 12 and sorted(more[:10]) == sorted(list(range(5)) * 2)
    rep = D.RandomSampler(range(5), replacement=True, num_samples=40, generator=KeyGen(0))
    drawn = list(rep)
    assert len(drawn) == len(rep) == 40 and set(drawn) <= set(range(5))
    assert list(D.RandomSampler(range(5), True, 40, generator=KeyGen(0))) == drawn
    errs = same(lambda L: [
        error_of(lambda: L.utils.data.RandomSampler(range(3), replacement=1)),
        error_of(lambda: L.utils.data.RandomSampler(range(3), num_samples=0)),
        error_of(lambda: L.utils.data.RandomSampler([])),
        len(L.utils.data.RandomSampler(range(3), num_samples=7)),
    ])
    assert errs[0] == ("TypeError", "replacement should be a boolean value, but got "
                                    "replacement=1")
    assert errs[2] == ("ValueError", "num_samples should be a positive integer value, but "
                                     "got num_samples=0")


def test_subset_random_and_weighted_samplers():
    hg.manual_seed(1)
    got = list(D.SubsetRandomSampler([10, 20, 30]))
    assert sorted(got) == [10, 20, 30]
    w = list(D.WeightedRandomSampler([0.0, 1.0, 0.0, 1.0], 50))
    assert len(w) == 50 and set(w) <= {1, 3}
    nw = list(D.WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False))
    assert sorted(nw) == [0, 1, 2]
    errs = same(lambda L: [
        error_of(lambda: L.utils.data.WeightedRandomSampler([1.0], 0)),
        error_of(lambda: L.utils.data.WeightedRandomSampler([1.0], 1, replacement=None)),
        error_of(lambda: L.utils.data.WeightedRandomSampler([[1.0]], 1)),
    ])
    assert errs[2] == ("ValueError",
                       "weights should be a 1d sequence but given weights have shape (1, 1)")


# --------------------------------------------------------------------------- collate


def collate_cases(L):
    t = L.tensor
    return [
        [0, 1, 2],
        [1.5, 2.5],
        [True, False],
        ["a", "b"],
        [b"a", b"b"],
        [np.arange(3), np.arange(3) + 1],
        [np.float32(1.5), np.float32(2)],
        [t([1.0, 2.0]), t([3.0, 4.0])],
        [(t([1.0]), 0), (t([2.0]), 1)],
        [[t([1]), "x"], [t([2]), "y"]],
        [{"img": np.ones((2, 2), np.float32), "label": 3},
         {"img": np.zeros((2, 2), np.float32), "label": 4}],
        [collections.OrderedDict(a=1, b=[2.0, 3.0]), collections.OrderedDict(a=4, b=[5.0, 6.0])],
        [Point(t([1.0]), 1), Point(t([2.0]), 2)],
        [{"nest": (np.int64(1), {"deep": [1, 2]})}, {"nest": (np.int64(3), {"deep": [3, 4]})}],
    ]


def test_default_collate_structures_match_torch():
    n = len(collate_cases(hg))
    for i in range(n):
        got = same(lambda L: summary(L.utils.data.default_collate(collate_cases(L)[i])))
        assert got is not None
    batch = D.default_collate([(0, 1.5), (1, 2.5)])
    assert isinstance(batch, list) and batch[0].tolist() == [0, 1]
    assert batch[1].dtype == (hg.float64 if jax.config.jax_enable_x64 else hg.float32)
    p = D.default_collate([Point(1, 2), Point(3, 4)])
    assert type(p) is Point and p.y.tolist() == [2, 4]
    assert collate_from_utils is D.default_collate


def test_default_collate_errors_match_torch():
    t = hg.tensor
    errs = same(lambda L: [
        error_of(lambda: L.utils.data.default_collate([[1, 2], [3]])),
        error_of(lambda: L.utils.data.default_collate([object(), object()])),
        error_of(lambda: L.utils.data.default_collate([np.array(["a"]), np.array(["b"])])),
        error_of(lambda: L.utils.data.default_collate([L.zeros(2), L.zeros(3)])),
        error_of(lambda: L.utils.data.default_collate([np.zeros(2), np.zeros(3)])),
    ])
    assert errs[0] == ("RuntimeError", "each element in list of batch should be of equal size")
    assert errs[1][0] == "TypeError" and "batch must contain tensors, numpy arrays" in errs[1][1]
    with pytest.raises(RuntimeError, match=r"stack expects each tensor to be equal size, but "
                                           r"got \[2\] at entry 0 and \[3\] at entry 1"):
        D.default_collate([t([1.0, 2.0]), t([1.0, 2.0, 3.0])])
    with pytest.raises(TypeError, match="found <U1"):
        D.default_collate([np.array(["a"]), np.array(["b"])])


def test_default_convert_matches_torch():
    cases = [np.arange(3), [np.arange(2), 1], (np.float64(2.0), "s"), {"a": np.ones(2)},
             Point(np.int64(1), 2), np.array(["a"]), "str", 3]
    for c in cases:
        same(lambda L: summary(L.utils.data.default_convert(c)))
    assert isinstance(D.default_convert(np.arange(3)), hg.Tensor)


def test_collate_keeps_the_autograd_graph_of_tensors_that_require_grad():
    def run(L):
        xs = [L.ones(2, requires_grad=True), L.zeros(2, requires_grad=True)]
        out = L.utils.data.default_collate(xs)
        out.sum().backward()
        return [out.grad_fn.name(), xs[0].grad.tolist()]
    assert same(run)[1] == [1.0, 1.0]


def test_collate_puts_each_field_on_the_device_once(monkeypatch):
    from hookgrad import _host_transfer
    calls = []  # the arrays each transfer moves: hookgrad's own entry, or jax.device_put
    real_put, real_device_put, inside = _host_transfer.put, jax.device_put, []

    def counting_put(values, *a, **k):
        # the sampler's key splits move two keys' data (hookgrad/_random.py): not a field
        if not all(v.dtype == np.uint32 and v.shape == (2,) for v in values):
            calls.append(len(values))
        inside.append(1)
        try:
            return real_put(values, *a, **k)
        finally:
            inside.pop()

    def counting_device_put(x, *a, **k):
        if not inside:  # put's own fallback is counted once, by put
            calls.append(len(jax.tree.leaves(x)))
        return real_device_put(x, *a, **k)

    samples = [(hg.tensor([float(i), 1.0]), np.arange(3) + i, i) for i in range(8)]
    ds = tensor_ds(hg, 64)
    monkeypatch.setattr(_host_transfer, "put", counting_put)
    monkeypatch.setattr(jax, "device_put", counting_device_put)
    x, y, z = D.default_collate(samples)
    # one per field; the ints are one hookgrad.tensor of them all, which stays on the host
    # (docs/modes.md: a small torch.tensor keeps its copy there), so they move none
    from hookgrad._host_value import Host
    assert calls == [1, 1] and z._arr.__class__ is Host
    calls.clear()
    xb, yb = next(iter(D.DataLoader(ds, batch_size=32, shuffle=True)))
    assert calls == [2] and tuple(xb.shape) == (32, 2)  # both fields in one call


def test_numpy_asarray_of_a_tensor():
    t = hg.arange(6, dtype=hg.float32).reshape(2, 3)
    a = np.array(t)
    a[0, 0] = 7  # a copy, writable, as np.array of a torch tensor
    assert t[0, 0].item() == 0 and a.dtype == np.float32
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    np.testing.assert_array_equal(np.stack([t, t])[1], np.arange(6).reshape(2, 3))
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        np.asarray(t, dtype=np.float64, copy=False)


# --------------------------------------------------------------------------- DataLoader


def loader_errors(L):
    d = L.utils.data
    ds = tensor_ds(L)

    class Stream(d.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    sampler = d.SequentialSampler(ds)
    bs = d.BatchSampler(sampler, 2, False)
    return [
        error_of(lambda: d.DataLoader(ds, sampler=sampler, shuffle=True)),
        error_of(lambda: d.DataLoader(ds, batch_sampler=bs, batch_size=2)),
        error_of(lambda: d.DataLoader(ds, batch_sampler=bs, shuffle=True)),
        error_of(lambda: d.DataLoader(ds, batch_sampler=bs, sampler=sampler)),
        error_of(lambda: d.DataLoader(ds, batch_sampler=bs, drop_last=True)),
        error_of(lambda: d.DataLoader(ds, num_workers=-1)),
        error_of(lambda: d.DataLoader(ds, timeout=-1)),
        error_of(lambda: d.DataLoader(ds, prefetch_factor=2)),
        error_of(lambda: d.DataLoader(ds, num_workers=1, prefetch_factor=-1)),
        error_of(lambda: d.DataLoader(ds, persistent_workers=True)),
        error_of(lambda: d.DataLoader(ds, batch_size=None, drop_last=True)),
        error_of(lambda: d.DataLoader(ds, batch_size=0)),
        error_of(lambda: d.DataLoader(ds, multiprocessing_context="spawn")),
        error_of(lambda: d.DataLoader(Stream(), shuffle=True)),
        error_of(lambda: d.DataLoader(Stream(), sampler=[0])),
        error_of(lambda: d.DataLoader(Stream(), batch_sampler=[[0]])),
        error_of(lambda: setattr(d.DataLoader(ds), "batch_size", 3)),
        error_of(lambda: d.DataLoader(d.TensorDataset(L.zeros(0, 2)), shuffle=True)),
    ]


def test_dataloader_argument_errors_match_torch():
    errs = same(loader_errors)
    assert all(e is not None for e in errs)
    ds = tensor_ds(hg)
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        D.DataLoader(ds, sampler=D.SequentialSampler(ds), shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive with "
                                         "batch_size, shuffle, sampler, and drop_last"):
        D.DataLoader(ds, batch_sampler=[[0]], drop_last=True)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        D.DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified"):
        D.DataLoader(ds, prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        D.DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="expected unspecified shuffle option, but got "
                                         "shuffle=True"):
        D.DataLoader(D.ChainDataset([]), shuffle=True)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, "
                                         "but got num_samples=0"):
        D.DataLoader(D.TensorDataset(hg.zeros(0, 2)), batch_size=2, shuffle=True)


def loader_runs(L):
    d = L.utils.data
    ds = tensor_ds(L)

    class Stream(d.IterableDataset):
        def __iter__(self):
            return iter({"v": i, "sq": np.float32(i * i)} for i in range(5))

        def __len__(self):
            return 5

    def batches(loader):
        return [len(loader), [summary(b) for b in loader]]

    empty = d.TensorDataset(L.zeros(0, 2))
    # PyTorch's worker processes are forked, which JAX's threads do not survive: torch
    # runs these without workers (its workers return the batches of num_workers=0 too)
    workers = {"num_workers": 2} if L is hg else {}
    persistent = {"persistent_workers": True, "timeout": 5} if L is hg else {}
    return [
        batches(d.DataLoader(ds)),
        batches(d.DataLoader(ds, batch_size=4)),
        batches(d.DataLoader(ds, batch_size=4, drop_last=True)),
        batches(d.DataLoader(ds, batch_size=None)),
        batches(d.DataLoader(ds, batch_sampler=[[3, 1], [0]])),
        batches(d.DataLoader(ds, batch_size=3, sampler=[9, 0, 4, 4])),
        batches(d.DataLoader(d.Subset(ds, [5, 6, 7]), batch_size=2)),
        batches(d.DataLoader(d.ConcatDataset([ds, ds]), batch_size=8)),
        batches(d.DataLoader(ds, batch_size=4, collate_fn=lambda b: len(b))),
        batches(d.DataLoader(Stream(), batch_size=2)),
        batches(d.DataLoader(Stream(), batch_size=2, drop_last=True)),
        batches(d.DataLoader(Stream(), batch_size=None)),
        batches(d.DataLoader(empty, batch_size=2, drop_last=True)),
        batches(d.DataLoader(empty, batch_size=2)),
        batches(d.DataLoader(ds, batch_size=4, **workers)),
        batches(d.DataLoader(ds, batch_size=4, drop_last=True, pin_memory=False,
                             **workers, **persistent)),
    ]


def test_dataloader_batches_match_torch():
    got = same(loader_runs)
    assert got[1][0] == 3 and got[1][1][2][1][0] == ("T", "float", (2, 2), [[16.0, 17.0],
                                                                              [18.0, 19.0]])
    assert got[12] == [0, []]


def test_shuffle_is_a_permutation_and_reproducible_with_manual_seed():
    ds = tensor_ds(hg, 23)
    loader = D.DataLoader(ds, batch_size=5, shuffle=True)

    def epoch():
        return [y.tolist() for _, y in loader]

    hg.manual_seed(7)
    e1, e2 = epoch(), epoch()
    assert [len(b) for b in e1] == [5, 5, 5, 5, 3]
    assert sorted(sum(e1, [])) == list(range(23)) and e1 != e2
    hg.manual_seed(7)
    assert epoch() == e1 and epoch() == e2
    seeded = D.DataLoader(ds, batch_size=5, shuffle=True, generator=KeyGen(4))
    again = D.DataLoader(ds, batch_size=5, shuffle=True, generator=KeyGen(4))
    assert [y.tolist() for _, y in seeded] == [y.tolist() for _, y in again]
    g = hg.Generator().manual_seed(2)
    with_gen = D.DataLoader(ds, batch_size=5, shuffle=True, generator=g)
    first = [y.tolist() for _, y in with_gen]
    hg.manual_seed(7)  # the global seed does not touch a loader's own generator
    assert [y.tolist() for _, y in with_gen] != first
    g.manual_seed(2)
    assert [y.tolist() for _, y in with_gen] == first
    # the features follow their labels
    for x, y in D.DataLoader(ds, batch_size=5, shuffle=True):
        np.testing.assert_array_equal(np.asarray(x)[:, 0], 2 * np.asarray(y))


def test_workers_give_the_batches_of_num_workers_0():
    ds = tensor_ds(hg, 37)

    def epochs(**kw):
        hg.manual_seed(11)
        loader = D.DataLoader(ds, batch_size=4, shuffle=True, **kw)
        return [[(x.tolist(), y.tolist()) for x, y in loader] for _ in range(2)]

    base = epochs()
    assert epochs(num_workers=2) == base
    assert epochs(num_workers=2, persistent_workers=True, prefetch_factor=1) == base
    assert epochs(num_workers=3, pin_memory=True, timeout=30) == base


def test_worker_info_and_worker_init_fn():
    seen, inits = [], []

    class Probe(D.Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            info = D.get_worker_info()
            seen.append((info.id, info.num_workers, info.seed, info.dataset is probe,
                         threading.current_thread() is not threading.main_thread()))
            return i

    probe = Probe()
    assert D.get_worker_info() is None
    loader = D.DataLoader(probe, batch_size=2, num_workers=2,
                          worker_init_fn=lambda wid: inits.append(wid))
    assert [b.tolist() for b in loader] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert sorted(inits) == [0, 1]
    assert {s[0] for s in seen} == {0, 1} and all(s[1] == 2 and s[3] and s[4] for s in seen)
    seeds = {s[0]: s[2] for s in seen}
    assert seeds[1] == seeds[0] + 1
    info = D.get_worker_info
    with pytest.raises(RuntimeError, match="Cannot assign attributes to WorkerInfo objects"):
        from hookgrad.utils.data._utils.worker import WorkerInfo
        WorkerInfo(id=0).id = 1
    assert info() is None


def test_iterable_dataset_with_workers_shards_by_worker_info():
    class Range(D.IterableDataset):
        def __iter__(self):
            info = D.get_worker_info()
            if info is None:
                return iter(range(10))
            return iter(range(info.id, 10, info.num_workers))

    got = sorted(sum((b.tolist() for b in D.DataLoader(Range(), batch_size=3,
                                                       num_workers=2)), []))
    assert got == list(range(10))
    assert sum((b.tolist() for b in D.DataLoader(Range(), batch_size=3)), []) == list(range(10))


def test_worker_errors_reach_the_caller():
    class Broken(D.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            raise KeyError(f"bad index {i}")

    with pytest.raises(KeyError, match="bad index 0"):
        list(D.DataLoader(Broken(), num_workers=2))
    with pytest.raises(ZeroDivisionError):
        list(D.DataLoader(tensor_ds(hg), num_workers=1, worker_init_fn=lambda w: 1 / 0))


def test_dataset_subclasses_keep_their_own_getitem():
    class Doubled(D.TensorDataset):
        def __getitem__(self, i):
            x, y = super().__getitem__(i)
            return x * 2, y

    x, y = next(iter(D.DataLoader(Doubled(*tensor_ds(hg).tensors), batch_size=3)))
    assert x.tolist() == [[0.0, 2.0], [4.0, 6.0], [8.0, 10.0]] and y.tolist() == [0, 1, 2]


def test_requires_grad_dataset_keeps_per_sample_indexing():
    w = hg.ones(4, 2, requires_grad=True)
    (xb,) = next(iter(D.DataLoader(D.TensorDataset(w), batch_size=4)))
    xb.sum().backward()
    assert w.grad.tolist() == [[1.0, 1.0]] * 4


def test_compiled_training_loop_consumes_the_loader():
    hg.manual_seed(0)
    x = hg.randn(32, 3)
    y = (x.sum(dim=1, keepdim=True) > 0).float()
    ds = D.TensorDataset(x, y)

    def make():
        hg.manual_seed(1)
        m = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
        return m, hg.optim.SGD(m.parameters(), lr=0.5)

    def train(compiled, **workers):
        m, opt = make()
        loader = D.DataLoader(ds, batch_size=8, shuffle=True, drop_last=True, **workers)

        def step(xb, yb):
            loss = F.binary_cross_entropy_with_logits(m(xb), yb)
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss

        run = hg.compile(step) if compiled else step
        hg.manual_seed(5)
        losses = [run(xb, yb).item() for _ in range(4) for xb, yb in loader]
        return losses, [np.asarray(p.detach()) for p in m.parameters()]

    lc, pc = train(True, num_workers=2)  # worker threads fill batches while it runs
    le, pe = train(False)
    np.testing.assert_allclose(lc, le, rtol=1e-5, atol=1e-6)
    for a, b in zip(pc, pe):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert np.mean(lc[-4:]) < np.mean(lc[:4])


@needs_torch
def test_public_names_match_torch():
    mine = set(D.__all__)
    theirs = {n for n in torch.utils.data.__all__ if "Pipe" not in n and "DataChunk" not in n}
    missing = theirs - mine
    # datapipes, DistributedSampler and the datapipe decorators are not part of hookgrad
    assert missing <= {"DistributedSampler", "argument_validation", "functional_datapipe",
                       "guaranteed_datapipes_determinism", "non_deterministic",
                       "runtime_validation", "runtime_validation_disabled"}, missing


@pytest.mark.parametrize("name", ["DataLoader", "RandomSampler", "SubsetRandomSampler",
                                  "BatchSampler", "SequentialSampler", "TensorDataset",
                                  "Subset", "ConcatDataset", "StackDataset",
                                  "WeightedRandomSampler"])
def test_signatures_match_torch(name):
    def sig(L):
        params = inspect.signature(getattr(L.utils.data, name).__init__).parameters.values()
        return [(p.name, p.kind.name, repr(p.default)) for p in params]
    assert same(sig)[0][0] == "self"


def test_iterable_dataset_longer_than_its_len_warns():
    class Liar(D.IterableDataset):
        def __iter__(self):
            return iter(range(4))

        def __len__(self):
            return 2

    loader = D.DataLoader(Liar(), batch_size=None)
    assert len(loader) == 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert [int(v) for v in loader] == [0, 1, 2, 3]
    msgs = [str(w.message) for w in caught]
    assert len(msgs) == 2 and all(m.endswith(f"was reported to be 2(when accessing "
                                             f"len(dataloader)), but {k} samples have been "
                                             "fetched. ") for m, k in zip(msgs, (3, 4)))
