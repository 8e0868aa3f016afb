"""unique, unique_consecutive, bincount, histc, searchsorted: what the op table's rows do
not show (errors, backward through them, sorted=False, eager-only shapes)."""
import pytest

import hookgrad
from tests.differential import py, raises, same_as_torch, torch


def test_unique_of_a_float_tensor_records_a_node_whose_backward_raises():
    def run(L):
        x = L.tensor([3.0, 1.0, 3.0], requires_grad=True)
        u = L.unique(x)
        return {"values": py(u), "requires_grad": u.requires_grad}, u
    got = same_as_torch(lambda L: run(L)[0])
    assert got == {"values": [1.0, 3.0], "requires_grad": True}
    # PyTorch's NotImplementedError names its kernel (_unique2); hookgrad's node is its
    # NotImplemented node, which raises RuntimeError as for every op without a derivative
    with pytest.raises(RuntimeError, match="derivative for aten::unique is not implemented"):
        run(hookgrad)[1].sum().backward()


def test_unique_flattens_and_sorts():
    got = same_as_torch(lambda L: py(L.unique(L.tensor([[4, 1], [1, 2]]), sorted=False,
                                              return_inverse=True)))
    assert got == [[1, 2, 4], [[2, 0], [0, 1]]]


def test_unique_consecutive_along_a_dim():
    got = same_as_torch(lambda L: py(L.unique_consecutive(
        L.tensor([[1, 1, 2, 2], [0, 0, 3, 3]]), dim=1, return_inverse=True,
        return_counts=True)))
    assert got == [[[1, 2], [0, 3]], [0, 0, 1, 1], [2, 2]]


def test_bincount_with_weights_has_no_derivative():
    def run(L):
        w = L.tensor([0.5, 1.0, 2.0], requires_grad=True)
        c = L.bincount(L.tensor([0, 2, 2]), w)
        return {"values": py(c), "backward": raises(lambda: c.sum().backward())}
    got = same_as_torch(run)
    assert got["values"] == [0.5, 0.0, 3.0] and got["backward"]["raises"] == "RuntimeError"


@pytest.mark.parametrize("call", [
    lambda L: L.bincount(L.tensor([-1, 2])),
    lambda L: L.bincount(L.tensor([[1]])),
    lambda L: L.bincount(L.tensor([1.0])),
    lambda L: L.histc(L.tensor([1, 2])),
    lambda L: L.histc(L.tensor([1.0]), min=2, max=1),
    lambda L: L.bucketize(L.tensor([1.0]), L.tensor([[1.0]])),
    lambda L: L.searchsorted(L.tensor([1.0]), L.tensor([1.0]), side="middle"),
    lambda L: L.searchsorted(L.tensor([[1.0], [2.0]]), L.tensor([[1.0]])),
    lambda L: L.addcdiv(L.tensor([1]), L.tensor([1]), L.tensor([2])),
])
def test_bad_input_gets_torchs_error(call):
    got = same_as_torch(lambda L: raises(call, L))
    assert got["raises"] in ("RuntimeError", "NotImplementedError")
    if torch is not None:
        assert got["message"] == raises(call, torch)["message"]


def test_histc_of_the_datas_own_range():
    got = same_as_torch(lambda L: py(L.histc(L.tensor([1.0, 2.0, 1.0, 4.0]), bins=3)))
    assert got == [2.0, 1.0, 1.0]


def test_searchsorted_with_a_sorter_and_side():
    got = same_as_torch(lambda L: py(L.searchsorted(
        L.tensor([3.0, 1.0, 2.0]), L.tensor([2.0, 3.0]), side="right",
        sorter=L.tensor([1, 2, 0]))))
    assert got == [2, 3]


def test_unique_inside_compile_says_it_is_eager_only():
    @hookgrad.compile(fullgraph=True)   # by default: eagerly
    def f(x):
        return hookgrad.unique(x)
    with pytest.raises(RuntimeError, match="data-dependent output shape"):
        f(hookgrad.tensor([1, 2, 2]))


@pytest.mark.parametrize("shape, wrap", [((3, 4), False), ((7, 3), True), ((7, 3), False),
                                         ((3, 3, 3), False)])
def test_fill_diagonal_writes_through_a_view(shape, wrap):
    def run(L):
        x = L.ones(*shape, requires_grad=True)
        y = x * 2
        y.fill_diagonal_(-1.0, wrap=wrap)
        y.sum().backward()
        return {"values": py(y), "grad": py(x.grad), "node": y.grad_fn.name()}
    got = same_as_torch(run, names=False)
    assert got["node"].endswith("CopySlices")


@pytest.mark.parametrize("call", [
    lambda L: L.ones(3).fill_diagonal_(1.0),
    lambda L: L.ones(2, 3, 3).fill_diagonal_(1.0),
    lambda L: L.ones(2, 3).put(L.tensor([0, 1]), L.ones(3)),
    lambda L: L.ones(2, 3).put(L.tensor([6]), L.ones(1)),
    lambda L: L.ones(2, 3).masked_scatter(L.ones(2, 3, dtype=L.bool), L.ones(4)),
    lambda L: L.ones(2, 3).unfold(1, 4, 1),
    lambda L: L.ones(2, 3).unfold(1, 2, 0),
])
def test_placement_errors(call):
    got = same_as_torch(lambda L: raises(call, L))
    assert got["raises"] in ("RuntimeError", "IndexError")
