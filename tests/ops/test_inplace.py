"""In-place ops: version counters, history rebased onto the in-place node, the leaf check,
saved-tensor version checks, and writes through ``detach()`` / ``.data``. Each scenario
runs under PyTorch too when it is installed (``same_as_torch``)."""
import pytest

import hookgrad as hg
from tests.differential import py, raises, same_as_torch, torch

# (id, in-place call on a float tensor of 3 values that requires grad through history)
INPLACE = [
    ("add_", lambda L, t: t.add_(1.5)),
    ("add_tensor", lambda L, t: t.add_(L.tensor([1.0, 2.0, 3.0]))),
    ("add_alpha", lambda L, t: t.add_(L.tensor([1.0, 2.0, 3.0], requires_grad=True), alpha=2)),
    ("sub_", lambda L, t: t.sub_(0.5)),
    ("mul_", lambda L, t: t.mul_(3.0)),
    ("mul_tensor", lambda L, t: t.mul_(L.tensor([1.0, -1.0, 2.0], requires_grad=True))),
    ("div_", lambda L, t: t.div_(2.0)),
    ("zero_", lambda L, t: t.zero_()),
    ("fill_", lambda L, t: t.fill_(2.0)),
    ("fill_tensor", lambda L, t: t.fill_(L.tensor(2.0, requires_grad=True))),
    ("copy_", lambda L, t: t.copy_(L.tensor([4.0, 5.0, 6.0], requires_grad=True))),
    ("copy_broadcast", lambda L, t: t.copy_(L.tensor(7.0))),
    ("clamp_", lambda L, t: t.clamp_(-1.0, 1.0)),
    ("clamp_min_", lambda L, t: t.clamp_min_(0.0)),
    ("clamp_max_", lambda L, t: t.clamp_max_(0.0)),
    ("sin_", lambda L, t: t.sin_()),
    ("exp_", lambda L, t: t.exp_()),
    ("relu_", lambda L, t: t.relu_()),
    ("sigmoid_", lambda L, t: t.sigmoid_()),
    ("tanh_", lambda L, t: t.tanh_()),
    ("neg_", lambda L, t: t.neg_()),
    ("pow_", lambda L, t: t.pow_(2)),
    ("pow_tensor", lambda L, t: t.pow_(L.tensor([1.0, 2.0, 3.0], requires_grad=True))),
    ("masked_fill_", lambda L, t: t.masked_fill_(L.tensor([True, False, True]), 0.5)),
    ("lerp_", lambda L, t: t.lerp_(L.tensor([1.0, 1.0, 1.0]), 0.25)),
    ("scatter_add_", lambda L, t: t.scatter_add_(0, L.tensor([0, 0]), L.tensor([1.0, 2.0]))),
    ("index_put_", lambda L, t: t.index_put_((L.tensor([2]),), L.tensor(9.0))),
    # alias and variant forms, made from the same table entry as the primary name
    ("subtract_alpha", lambda L, t: t.subtract_(L.tensor([1.0, 2.0, 3.0], requires_grad=True),
                                                alpha=2)),
    ("divide_floor", lambda L, t: t.divide_(2.0, rounding_mode="floor")),
    ("clip_", lambda L, t: t.clip_(min=0.0)),
    ("round_decimals", lambda L, t: t.round_(decimals=1)),
    ("iadd", lambda L, t: t.__iadd__(2.0)),
    ("imul", lambda L, t: t.__imul__(L.tensor([2.0, 2.0, 2.0]))),
    ("setitem_int", lambda L, t: t.__setitem__(0, 5.0)),
    ("setitem_slice_tensor", lambda L, t: t.__setitem__(slice(1, None),
                                                         L.tensor([1.0, 2.0], requires_grad=True))),
    ("setitem_index", lambda L, t: t.__setitem__(L.tensor([0, 2]), 3.0)),
    ("setitem_mask", lambda L, t: t.__setitem__(t > 0, 0.0)),
]


def _names(node):
    return [(n.name() if n is not None else None, nr) for n, nr in node.next_functions]


@pytest.mark.parametrize("call", [c for _, c in INPLACE], ids=[i for i, _ in INPLACE])
def test_inplace_bumps_version_and_rebases_history_as_torch(call):
    def f(L):
        x = L.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = x * 1.5
        v0 = y._version
        out = call(L, y)
        res = {"returns_self": out is y if out is not None else None,
               "version_delta": y._version - v0,
               "value": py(y),
               "is_leaf": y.is_leaf,
               "node": y.grad_fn.name(),
               "next": _names(y.grad_fn)}
        (y * L.tensor([1.0, 2.0, 3.0])).sum().backward()
        res["x_grad"] = py(x.grad)
        return res
    got = same_as_torch(f)
    assert got["version_delta"] == 1 and got["is_leaf"] is False
    assert got["next"][0][0] == "MulBackward0"  # the in-place node's first input: old history


@pytest.mark.parametrize("call", [c for _, c in INPLACE], ids=[i for i, _ in INPLACE])
def test_inplace_on_leaf_requiring_grad_raises(call):
    x = hg.tensor([0.5, -1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad is being used in "
                                           "an in-place operation"):
        call(hg, x)
    assert x.tolist() == [0.5, -1.0, 2.0] and x._version == 0 and x.grad_fn is None


@pytest.mark.parametrize("call", [c for _, c in INPLACE], ids=[i for i, _ in INPLACE])
def test_inplace_on_leaf_under_no_grad_is_allowed(call):
    def f(L):
        x = L.tensor([0.5, -1.0, 2.0], requires_grad=True)
        with L.no_grad():
            call(L, x)
        return {"value": py(x), "version": x._version, "leaf": x.is_leaf,
                "requires_grad": x.requires_grad, "grad_fn": x.grad_fn is None}
    got = same_as_torch(f)
    assert got["version"] == 1 and got["leaf"] and got["requires_grad"] and got["grad_fn"]


def test_version_counts_each_inplace_op():
    def f(L):
        x = L.zeros(3)
        vs = [x._version]
        x.add_(2)
        vs.append(x._version)
        x.mul_(3).sub_(1)
        vs.append(x._version)
        x[0] = 7.0
        vs.append(x._version)
        y = x + 1  # out-of-place: no bump
        vs.append(x._version)
        return [vs, py(x), y._version]
    assert same_as_torch(f) == [[0, 1, 3, 4, 4], [7.0, 5.0, 5.0], 0]


def test_inplace_with_grad_operand_makes_result_require_grad():
    def f(L):
        w = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        a = L.zeros(3)
        a.add_(w * 2)
        res = [a.requires_grad, a.is_leaf, a.grad_fn.name()]
        a.sum().backward()
        return res + [py(w.grad)]
    assert same_as_torch(f) == [True, False, "AddBackward0", [2.0, 2.0, 2.0]]


def test_modified_saved_output_raises_in_backward():
    def f(L):
        x = L.tensor([0.5, 1.0], requires_grad=True)
        y = x.exp()
        y.add_(1)
        return raises(lambda: y.sum().backward())
    got = same_as_torch(f)
    assert got["raises"] == "RuntimeError"
    assert ("one of the variables needed for gradient computation has been modified by an "
            "inplace operation: [hookgrad.FloatTensor [2]], which is output 0 of Exp, is at "
            "version 1; expected version 0 instead.") in got["message"]


def test_modified_saved_input_raises_in_backward():
    def f(L):
        x = L.tensor([0.5, 1.0], requires_grad=True)
        a = x * 1
        b = a * a
        a.mul_(2)
        return raises(lambda: b.sum().backward())
    got = same_as_torch(f)
    assert "which is output 0 of Mul, is at version 1; expected version 0" in got["message"]


def test_inplace_after_use_by_op_that_saves_nothing_is_fine():
    def f(L):
        x = L.tensor([0.5, 1.0], requires_grad=True)
        a = x * 1
        b = a + 2  # add saves nothing
        a.mul_(3)
        (a.sum() + b.sum()).backward()
        return py(x.grad)
    assert same_as_torch(f) == [4.0, 4.0]


def test_detach_writes_through_and_shares_the_version_counter():
    def f(L):
        x = L.tensor([0.5, 1.0], requires_grad=True)
        y = x * 1
        z = y.exp()  # saves its output z, not y
        s = y.sin()  # saves y
        d = y.detach()
        v = y._version
        d.add_(1)
        return {"y": py(y), "y_bump": y._version - v, "d_leaf": d.is_leaf,
                "d_requires_grad": d.requires_grad,
                "backward_through_y": raises(lambda: s.sum().backward())["raises"],
                "z_ok": raises(lambda: z.sum().backward())}
    got = same_as_torch(f)
    assert got["y"] == [1.5, 2.0] and got["y_bump"] == 1
    assert got["backward_through_y"] == "RuntimeError"


def test_data_writes_through_without_bumping_the_version():
    def f(L):
        x = L.tensor([0.5, 1.0], requires_grad=True)
        v = x._version
        x.data.mul_(2)
        d = x.data
        return {"x": py(x), "version_delta": x._version - v, "data_leaf": d.is_leaf,
                "data_requires_grad": d.requires_grad, "x_requires_grad": x.requires_grad}
    assert same_as_torch(f) == {"x": [1.0, 2.0], "version_delta": 0, "data_leaf": True,
                                "data_requires_grad": False, "x_requires_grad": True}


def test_data_setter_replaces_values_keeping_autograd_state():
    def f(L):
        x = L.tensor([0.5, 1.0], requires_grad=True)
        x.data = L.tensor([3.0, 4.0])
        (x * x).sum().backward()
        return [py(x), x.requires_grad, x.is_leaf, py(x.grad)]
    assert same_as_torch(f) == [[3.0, 4.0], True, True, [6.0, 8.0]]


def test_inplace_errors_leave_tensor_unchanged():
    x = hg.zeros(2, dtype=hg.int32)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Int"):
        x.add_(1.5)
    assert x.tolist() == [0, 0] and x._version == 0
    y = hg.zeros(3)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the "
                                           r"broadcast shape \[2, 3\]"):
        y.add_(hg.zeros(2, 3))
    assert y._version == 0
    if torch is not None:
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type Int"):
            torch.zeros(2, dtype=torch.int32).add_(1.5)
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            torch.zeros(3).add_(torch.zeros(2, 3))


def test_inplace_keeps_tensor_hooks_with_the_old_history():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        log = []
        y.register_hook(lambda g: log.append(["before", py(g)]))
        y.mul_(3)
        y.register_hook(lambda g: log.append(["after", py(g)]))
        y.sum().backward()
        return [log, py(x.grad)]
    assert same_as_torch(f) == [[["after", [1.0, 1.0]], ["before", [3.0, 3.0]]], [6.0, 6.0]]


def test_double_backward_through_inplace_op():
    def f(L):
        x = L.tensor([0.5, 1.0], requires_grad=True)
        y = x * 1
        y.sin_()
        (g,) = L.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = L.autograd.grad(g.sum(), x)
        return [py(g), py(gg)]
    same_as_torch(f)
