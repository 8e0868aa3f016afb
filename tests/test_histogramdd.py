"""torch.histogramdd against PyTorch: counts, edges, weights, density, edge tensors, batches
of points, the missing derivative and errors."""
import pytest

from tests._pytorch_error import pytorch_error
from tests.differential import py, same_as_torch


def _pts(L):
    return L.tensor([[0.0, 1.0], [1.0, 3.0], [2.0, 2.0], [2.0, 5.0]])


@pytest.mark.parametrize("call", [
    lambda L: L.histogramdd(_pts(L), bins=[2, 3]),
    lambda L: L.histogramdd(_pts(L), bins=2, range=[0.0, 4.0, 0.0, 4.0],
                            weight=L.tensor([1.0, 2.0, 3.0, 4.0]), density=True),
    lambda L: L.histogramdd(L.tensor([[1.0, 1.0], [1.0, 1.0]]), bins=2),
    lambda L: L.histogramdd(_pts(L), bins=[L.tensor([0.0, 1.0, 3.0]), L.tensor([0.0, 2.0, 6.0])]),
    lambda L: L.histogramdd(_pts(L).reshape(2, 2, 2), bins=(1, 4)),
], ids=["counts", "weighted_density", "flat_extent", "edge_tensors", "batched_points"])
def test_histogram_and_edges_are_pytorchs(call):
    got = same_as_torch(lambda L: [type(call(L)).__name__, *(py(r) for r in call(L))])
    assert got[0] == "histogramdd"


def test_no_derivative():
    def fn(L):
        r = L.histogramdd(_pts(L).requires_grad_(), bins=2)
        try:
            r.hist.sum().backward()
        except RuntimeError as e:
            return [r.hist.requires_grad, [e.requires_grad for e in r.bin_edges], str(e)]
    assert same_as_torch(fn)[0] is True


@pytest.mark.parametrize("call", [
    lambda L: L.histogramdd(_pts(L), bins=[2, 2, 2]),
    lambda L: L.histogramdd(_pts(L).long(), bins=2),
    lambda L: L.histogramdd(_pts(L), bins=2, range=[0.0, 1.0]),
    lambda L: L.histogramdd(_pts(L), bins=2, weight=L.ones(3)),
    lambda L: L.histogramdd(_pts(L), bins=2, range=[1.0, 0.0, 0.0, 1.0]),
    lambda L: L.histogramdd(L.ones(3), bins=2),
])
def test_bad_input_gets_pytorchs_error(call):
    pytorch_error(call)
