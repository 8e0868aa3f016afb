"""vander, cumulative_trapezoid and gradient beyond their op rows: PyTorch's graphs and
errors, integer inputs, and vander's gradient (which PyTorch's backward cannot give)."""
import pytest

import hookgrad as hg

from tests._pytorch_error import pytorch_error
from tests.differential import py, same_as_torch


def _names(t):
    out, stack = [], [(t.grad_fn, 0)]
    while stack:
        node, depth = stack.pop()
        if node is None or depth > 4:
            continue
        out.append((depth, node.name().replace("torch::autograd::", "")))
        stack.extend((n, depth + 1) for n, _ in reversed(node.next_functions))
    return out


@pytest.mark.parametrize("build", [
    lambda L, x: L.vander(x), lambda L, x: L.vander(x, N=4, increasing=True),
    lambda L, x: L.cumulative_trapezoid(L.outer(x, x)),
    lambda L, x: L.cumulative_trapezoid(L.outer(x, x), L.tensor([0.0, 1.0, 3.0]), dim=0),
    lambda L, x: L.gradient(L.outer(x, x), dim=1, edge_order=2)[0],
    lambda L, x: L.gradient(L.outer(x, x), spacing=[L.tensor([0.0, 1.0, 3.0])], dim=0)[0],
], ids=["vander", "vander.increasing", "cumulative_trapezoid", "cumulative_trapezoid.x",
        "gradient.edge2", "gradient.coordinates"])
def test_graphs_are_pytorchs(build):
    same_as_torch(lambda L: [_names(build(L, L.tensor([1.0, 2.0, 3.0], requires_grad=True))),
                             py(build(L, L.tensor([1.0, 2.0, 3.0])))])


def test_vander_backward_raises_pytorchs_version_error():
    # PyTorch's kernel copies the running product into the slice it was computed from
    def fn(L):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        try:
            L.vander(x, N=4).sum().backward()
        except RuntimeError as e:
            return str(e).split(", which")[0].replace("torch.", "").replace("hookgrad.", "")
    assert "modified by an inplace operation" in same_as_torch(fn)


def test_integer_inputs():
    got = same_as_torch(lambda L: [py(L.vander(L.tensor([1, 2, 3]))),
                                   str(L.vander(L.tensor([1, 2])).dtype)[-5:],
                                   py(L.cumulative_trapezoid(L.tensor([1, 2, 4]))),
                                   py(L.gradient(L.tensor([1, 4, 9]))),
                                   py(L.gradient(L.tensor([1.0, 4.0, 9.0]), spacing=2)),
                                   py(L.gradient(L.outer(L.arange(3.0), L.arange(4.0)) ** 2))])
    assert got[1] == "int64" and got[3] == [[3.0, 4.0, 5.0]]


@pytest.mark.parametrize("call", [
    lambda L: L.vander(L.ones(2, 2)), lambda L: L.vander(L.ones(2), N=-1),
    lambda L: L.cumulative_trapezoid(L.ones(3, 4), L.ones(3)),
    lambda L: L.gradient(L.ones(1)), lambda L: L.gradient(L.ones(3), edge_order=3),
    lambda L: L.gradient(L.ones(3, 3), spacing=[1.0, 2.0, 3.0]),
    lambda L: L.gradient(L.ones(3, 3), spacing=[1.0, 2.0, 3.0], dim=[0, 1]),
])
def test_bad_input_gets_pytorchs_error(call):
    pytorch_error(call)


def test_cumulative_trapezoid_refuses_a_number_for_x():
    with pytest.raises(TypeError, match="received an invalid combination of arguments"):
        hg.cumulative_trapezoid(hg.ones(3), 2.0)
