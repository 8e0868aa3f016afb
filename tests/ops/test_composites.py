"""The functions built from other ops (stacking.py, statistics.py): values, gradients and
the nodes they record, against PyTorch."""
import numpy as np
import pytest

from tests.differential import py, raises, same_as_torch

_RNG = np.random.default_rng(30)
A = _RNG.standard_normal((3, 4)).astype(np.float32)
B = _RNG.standard_normal((3, 4)).astype(np.float32)
V3 = _RNG.standard_normal(3).astype(np.float32)
V4 = _RNG.standard_normal(4).astype(np.float32)


def _outs(res):
    return list(res) if isinstance(res, (tuple, list)) else [res]


def run(fn, *arrays, node=True):
    """fn's outputs, the gradients of a weighted sum of them w.r.t. the inputs, and the
    first output's node name, under library ``L``."""
    def go(L):
        xs = [L.tensor(a, requires_grad=True) for a in arrays]
        outs = _outs(fn(L, *xs))
        live = [o for o in outs if o.requires_grad]
        if live:
            loss = sum((o * L.linspace(0.5, 1.5, o.numel()).reshape(o.shape)).sum()
                       for o in live)
            grads = L.autograd.grad(loss, xs, allow_unused=True)
        else:
            grads = []
        name = outs[0].grad_fn.name() if node and outs[0].grad_fn is not None else None
        return {"values": [py(o) for o in outs], "grads": [py(g) for g in grads],
                "node": name}
    return same_as_torch(go, tol=1e-4, names=False)


@pytest.mark.parametrize("fn, arrays", [
    (lambda L, a, b: L.hstack([a, b]), (A, B)),
    (lambda L, a, b: L.hstack((a, b)), (V3, V4)),
    (lambda L, a, b: L.vstack([a, b]), (V4, V4)),
    (lambda L, a, b: L.row_stack([a, b]), (A, B)),
    (lambda L, a, b: L.dstack([a, b]), (A, B)),
    (lambda L, a, b: L.column_stack([a, b]), (V3, A)),
    (lambda L, a: L.atleast_1d(a.sum()), (A,)),
    (lambda L, a, b: L.atleast_2d(a, b), (V3, A)),
    (lambda L, a, b: L.atleast_3d([a, b]), (V3, A)),
    (lambda L, a: L.tensor_split(a, 3, dim=1), (A,)),
    (lambda L, a: a.tensor_split([1, -1], 1), (A,)),
    (lambda L, a: L.hsplit(a, 2), (A,)),
    (lambda L, a: a.vsplit([1]), (A,)),
    (lambda L, a: L.dsplit(a.reshape(3, 2, 2), 2), (A,)),
    (lambda L, a, b: L.meshgrid(a, b, indexing="ij"), (V3, V4)),
    (lambda L, a, b: L.meshgrid([a, b], indexing="xy"), (V3, V4)),
    (lambda L, a, b: L.cartesian_prod(a, b), (V3, V4)),
    (lambda L, a, b: L.block_diag(a, b, a[0, 0]), (A, V3)),
    (lambda L, a: L.tile(a, (2,)), (A,)),
    (lambda L, a: a.tile(2, 1, 1), (A,)),
    (lambda L, a: a.ravel(), (A,)),
    (lambda L, a: L.fliplr(a), (A,)),
    (lambda L, a: a.flipud(), (A,)),
    (lambda L, a: L.diag(a, -1), (A,)),
    (lambda L, a: L.nanmean(L.log(a), 1), (A,)),
    (lambda L, a: a.nanmean(), (A,)),
    (lambda L, a: L.diff(a), (A,)),
    (lambda L, a, b: a.diff(n=2, dim=0, append=b), (A, B)),
    (lambda L, a: L.trapezoid(a), (A,)),
    (lambda L, a, x: L.trapezoid(a, x), (A, V4)),
    (lambda L, a: L.trapezoid(a, dx=0.5, dim=0), (A,)),
    (lambda L, a: L.trapz(a, dim=0), (A,)),
    (lambda L, a: L.cov(a), (A,)),
    (lambda L, a: a.cov(correction=0), (A,)),
    (lambda L, a: L.corrcoef(a), (A,)),
    (lambda L, a: L.positive(a), (A,)),
], ids=lambda v: "" if not callable(v) else None)
def test_same_values_gradients_and_nodes_as_torch(fn, arrays):
    got = run(fn, *arrays)
    assert got["values"] and all(g is not None for g in got["grads"])


def test_cov_with_weights():
    fw, aw = np.array([1, 2, 1, 3]), np.array([0.5, 1.0, 2.0, 1.0], np.float32)
    got = same_as_torch(lambda L: py(L.cov(L.tensor(A), fweights=L.tensor(fw),
                                           aweights=L.tensor(aw))), tol=1e-4)
    assert len(got) == 3


@pytest.mark.parametrize("call", [
    lambda L: L.diff(L.tensor(1.0)),
    lambda L: L.fliplr(L.ones(3)),
    lambda L: L.rot90(L.ones(2, 2), 1, (0, 0)),
    lambda L: L.vsplit(L.ones(3), 1),
    lambda L: L.hsplit(L.ones(3, 3), 2),
    lambda L: L.tensor_split(L.ones(3), 0),
    lambda L: L.meshgrid(L.ones(2), indexing="yx"),
    lambda L: L.block_diag(L.ones(1, 1, 1)),
    lambda L: L.diag(L.ones(1, 1, 1)),
    lambda L: L.diag_embed(L.ones(2), 0, 0, 0),
    lambda L: L.cdist(L.ones(2), L.ones(2, 2)),
    lambda L: L.cdist(L.ones(2, 3), L.ones(2, 2)),
    lambda L: L.quantile(L.ones(3), 1.5),
    lambda L: L.quantile(L.ones(3), 0.5, interpolation="cubic"),
    lambda L: L.nanmean(L.ones(3, dtype=L.int32)),
    lambda L: L.aminmax(L.ones(0)),
    lambda L: L.cov(L.ones(2, 2, 2)),
    lambda L: L.ones(2).float_power_(2),
])
def test_bad_input_gets_torchs_error(call):
    got = same_as_torch(lambda L: raises(call, L))
    assert got["raises"] in ("RuntimeError", "TypeError", "IndexError")


@pytest.mark.parametrize("fn, arrays", [
    (lambda L, a: a.sum_to_size(1, 4), (A,)),
    (lambda L, a: a.sum_to_size(4), (A,)),
    (lambda L, a: L.combinations(a), (V4,)),
    (lambda L, a: L.combinations(a, 3, with_replacement=True), (V3,)),
    (lambda L, a: L.constant_pad_nd(a, (-1, 2)), (A,)),
])
def test_more_composites(fn, arrays):
    run(fn, *arrays)


def test_unravel_index_histogram_and_casts():
    def run_(L):
        x = L.tensor(A)
        h = L.histogram(x, 4)
        hw = L.histogram(x, L.tensor([-1.0, 0.0, 0.5, 2.0]), weight=x.abs(), density=True)
        return {"unravel": [py(t) for t in L.unravel_index(L.tensor([5, 7, 11]), (3, 4))],
                "hist": [py(h.hist), py(h.bin_edges), py(hw.hist)],
                "casts": [str(x.char().dtype), str(x.cfloat().dtype), str(x.cdouble().dtype)],
                "inference": x.is_inference()}
    got = same_as_torch(lambda L: {k: (v if k != "casts" else [s.split(".")[1] for s in v])
                                   for k, v in run_(L).items()}, tol=1e-4)
    assert got["unravel"] == [[1, 1, 2], [1, 3, 3]]
