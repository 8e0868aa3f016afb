"""The in-place view ops (unsqueeze_, squeeze_, t_, transpose_, swapaxes_, swapdims_,
as_strided_): identity, version, recorded node, views staying views, PyTorch's errors —
against PyTorch. Values and gradients are op-table rows (tests/ops/_op_table.py)."""
import pytest

import hookgrad
from tests.differential import py, raises, same_as_torch


def _node(t):
    return None if t.grad_fn is None else t.grad_fn.name().rpartition("::")[2]


CALLS = [lambda y: y.unsqueeze_(0), lambda y: y.squeeze_(), lambda y: y.squeeze_(1),
         lambda y: y.squeeze_((1,)), lambda y: y.transpose_(0, 2), lambda y: y.swapaxes_(0, 2),
         lambda y: y.swapdims_(2, 0), lambda y: y.as_strided_((3, 2), (1, 3)),
         lambda y: y.squeeze_().t_()]


@pytest.mark.parametrize("call", CALLS)
def test_same_tensor_new_shape_version_and_node(call):
    def run(L):
        x = L.arange(6.0).reshape(2, 1, 3).requires_grad_()
        y = x * 1
        out = call(y)
        (out * L.arange(6.0).reshape(out.shape)).sum().backward()
        return [out is y, list(y.shape), y._version, _node(y),
                y.grad_fn.next_functions[0][0].name(), py(y), py(x.grad)]
    same_as_torch(run)


def test_a_view_stays_a_view_of_its_base():
    def run(L):
        x = L.zeros(2, 3, requires_grad=True)
        y = x * 1
        v = y[0]
        v.unsqueeze_(0)
        shape, stride, base = list(v.shape), v.stride(), v._base is y
        v.mul_(2).add_(1)
        y.sum().backward()
        a = L.arange(6.0).reshape(2, 3)
        b = a[1]
        b.unsqueeze_(0)
        b.mul_(10)
        c = a.t()
        c.t_()
        c.add_(1)
        return [shape, stride, base, py(y), _node(y), _node(v), py(x.grad), py(a),
                b.stride(), c.stride(), c.is_contiguous(), a._version, b._version]
    got = same_as_torch(run)
    assert got[3] == [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]


def test_a_saved_tensor_changed_by_an_inplace_view_op_fails_backward():
    def run(L):
        x = L.ones(2, 3, requires_grad=True)
        y = x * 1
        s = y.sin()
        y.t_()
        return raises(lambda: s.sum().backward())
    got = same_as_torch(run)
    assert got["raises"] == "RuntimeError"


def test_pytorchs_errors():
    def run(L):
        x = L.ones(2, 3, requires_grad=True)
        y = x * 1
        with L.no_grad():
            v = y[0]
        a, _ = (x * 1).unbind(0)
        with L.no_grad():
            z = L.ones(2, 3, requires_grad=True)
            z.unsqueeze_(0)
        return [raises(lambda: x.unsqueeze_(0)), raises(lambda: x[0].unsqueeze_(0)),
                raises(lambda: v.unsqueeze_(0)), raises(lambda: a.unsqueeze_(0)),
                raises(lambda: L.ones(2, 3, 4).t_()), raises(lambda: L.ones(2).unsqueeze_(5)),
                raises(lambda: L.ones(2, 3).squeeze_(5)), list(z.shape), z._version,
                list(L.ones(3).expand(2, 3).unsqueeze_(0).shape)]
    got = same_as_torch(run)
    assert got[7] == [1, 2, 3]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                           "in an in-place operation"):
        hookgrad.ones(2, requires_grad=True).unsqueeze_(0)
    with pytest.raises(RuntimeError, match=r"t_\(\) expects a tensor with <= 2 dimensions, but "
                                           "self is 3D"):
        hookgrad.ones(2, 3, 4).t_()
