"""The record stage at an op site (``stages/record.py``'s ``record_at_site``): a deferred
op's node follows the plan its site's last node left (per argument: an edge or none,
kept or not, a constant), and takes the full record stage where an argument's edge is not
the plan's. What is recorded is PyTorch's either way: edges, saved values and their
version checks, saved-tensor hooks, the gradients."""
import pytest

import hookgrad
from hookgrad._ops.stages import record
from tests.differential import graph, py, same_as_torch

A = [[0.5, -1.25, 2.0], [1.5, 0.25, -0.75]]
B = [[-0.3, 0.8, 1.1], [0.6, -1.4, 0.2]]


@pytest.fixture
def full(monkeypatch):
    """The ops ``record_at_site`` handed to the full record stage, by name."""
    names = []
    real = record._record

    def spy(op, *args, **kwargs):
        names.append(op.name)
        return real(op, *args, **kwargs)
    monkeypatch.setattr(record, "_record", spy)
    return names


def test_an_argument_that_starts_or_stops_requiring_grad_at_a_planned_site(full):
    """``b`` requires grad from the fourth step, ``a`` stops at the sixth: the step of
    each change takes the full stage at ``mul``'s site, the steps after its plan."""
    per_step = []

    def f(L):
        out = []
        a = L.tensor(A, requires_grad=True)
        b = L.tensor(B)
        for step in range(8):
            if step == 3:
                b.requires_grad_()
            if step == 5:
                a = a.detach()
            a.grad = b.grad = None
            full.clear()
            y = (a * b).sin().exp()
            per_step.append("mul" in full)
            out.append([graph(y), y.requires_grad])
            if y.requires_grad:
                y.sum().backward()
            out.append([py(a.grad), py(b.grad)])
        return out
    same_as_torch(f)
    # (the first call may run eagerly and the second make the site's plan: a site this
    # process met before has one)
    assert per_step[2:8] == [False, True, False, True, False, False]


def test_saved_tensor_hooks_opened_at_a_planned_site():
    """The plan kept the arguments as plain tuples; with hooks open they are packed, in
    PyTorch's order (``mul``'s ``other`` then ``self``; ``exp`` its result)."""
    def f(L):
        out = []
        a = L.tensor(A, requires_grad=True)
        b = L.tensor(B, requires_grad=True)
        for step in range(5):
            packed = []

            def pack(t):
                packed.append(py(t))
                return t
            a.grad = b.grad = None
            if step >= 3:
                with L.autograd.graph.saved_tensors_hooks(pack, lambda t: t * 2):
                    y = (a * b).exp()
            else:
                y = (a * b).exp()
            y.sum().backward()
            out.append([packed, py(a.grad), py(b.grad)])
        return out
    same_as_torch(f)


def test_a_saved_argument_changed_in_place_after_a_planned_op():
    def f(L):
        out = []
        for step in range(4):
            a = L.tensor(A, requires_grad=True)
            h = a * 2.0
            y = h * h
            if step == 3:
                with L.no_grad():
                    h.add_(1.0)
            try:
                y.sum().backward()
                out.append(py(a.grad))
            except RuntimeError as e:
                out.append(str(e).split(":")[0])
        return out
    got = same_as_torch(f)
    assert "modified by an inplace operation" in got[-1]


def test_masks_constants_and_leaves_at_planned_sites():
    """``where``'s condition has no edge (non-differentiable), a Python number is a
    constant (``pow``'s exponent, which its saving rule keeps), a leaf's edge is its
    ``AccumulateGrad``, an integer Tensor operand is kept whatever requires grad."""
    def f(L):
        out = []
        a = L.tensor(A, requires_grad=True)
        i = L.tensor([[1, 2, 3], [4, 5, 6]])
        for step in range(4):
            a.grad = None
            h = a.sin()
            y = L.where(h > 0, h.pow(3.0), h * i) + a
            out.append(graph(y))
            y.sum().backward()
            out.append(py(a.grad))
        return out
    same_as_torch(f)
