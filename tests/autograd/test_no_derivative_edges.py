"""The node of an op with no derivative formula (``torch::autograd::NotImplemented``) links
only the inputs that require grad, in the op's argument order (a repeated one each time),
as PyTorch's autograd fallback records it; backward reaching it raises."""
import pytest

from tests.differential import py, raises_as_torch, same_as_torch


def _edges(t):
    return [t.grad_fn.name(), [(None if n is None else type(n).__name__, k)
                               for n, k in t.grad_fn.next_functions]]


def _ldl(L):
    m = L.tensor([[4.0, 1.0, 2.0], [1.0, -3.0, 0.5], [2.0, 0.5, 3.0]], dtype=L.float64)
    return m, L.ones(3, 2, dtype=L.float64)


@pytest.mark.parametrize("case", [
    lambda L, a, b: L.floor_divide(a, b),
    lambda L, a, b: L.floor_divide(b, a),
    lambda L, a, b: L.remainder(3.0, a),
    lambda L, a, b: L.binomial(b, a.detach().sigmoid().requires_grad_()),
    lambda L, a, b: L.binomial(a, a),  # the same input twice: two edges
    lambda L, a, b: L.bernoulli(a.detach().sigmoid().requires_grad_(), 0.3),
    lambda L, a, b: L.bincount(L.tensor([0, 1, 1]), weights=a[:1].expand(3)),
    lambda L, a, b: L.linalg.ldl_factor_ex(_ldl(L)[0].requires_grad_())[0],
    lambda L, a, b: L.linalg.ldl_solve(*L.linalg.ldl_factor(_ldl(L)[0]),
                                       _ldl(L)[1].requires_grad_()),
    lambda L, a, b: L.linalg.ldl_solve(*L.linalg.ldl_factor(_ldl(L)[0].requires_grad_()),
                                       _ldl(L)[1]),
    lambda L, a, b: L.linalg.ldl_solve(*L.linalg.ldl_factor(_ldl(L)[0].requires_grad_()),
                                       _ldl(L)[1].requires_grad_()),
])
def test_only_inputs_requiring_grad_have_edges(case):
    def run(L):
        a, b = L.tensor([5.0, 7.0], requires_grad=True), L.tensor([2.0, 3.0])
        return _edges(case(L, a, b))
    got = same_as_torch(run)
    assert got[0] == "torch::autograd::NotImplemented" and None not in [n for n, _ in got[1]]


def test_histogramdd_links_the_input_and_weight():
    def run(L):
        a = L.tensor([5.0, 7.0, 1.0, 2.0, 3.0, 0.5], requires_grad=True)
        e = L.tensor([0.0, 4.0, 9.0], requires_grad=True)
        out = []
        y = L.histogramdd(a.view(3, 2), bins=[2, 3], weight=a[:3] * 1)
        out += [_edges(y.hist), _edges(y.bin_edges[1]), py(y.hist)]
        y = L.histogramdd(a.view(3, 2), bins=[2, 3], range=[0.0, 10.0, 0.0, 8.0])
        out += [_edges(y.hist), py(y.hist)]
        y = L.histogramdd(a.view(3, 2), bins=[e, e.detach()], weight=a[:3].detach())
        out += [_edges(y.hist), py(y.hist)]
        y = L.histogramdd(a.view(3, 2).detach(), bins=[e.detach(), e], weight=a[:3] * 1)
        return out + [_edges(y.hist), py(y.hist)]
    same_as_torch(run)


def test_backward_through_the_node_raises():
    raises_as_torch(lambda L: L.floor_divide(L.tensor([5.0], requires_grad=True),
                                             L.tensor([2.0])).sum().backward(),
                    RuntimeError, r"^derivative for aten::floor_divide is not implemented$")
