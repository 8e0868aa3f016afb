"""Tensor hooks, retain_grad, post-accumulate-grad hooks, Node hooks: order, return values,
errors. Scenarios run under PyTorch too when installed."""
import pytest

import hookgrad as hg
from tests.differential import py, raises, same_as_torch


# ---- tensor hooks

@pytest.mark.parametrize("leaf", [True, False])
def test_tensor_hooks_chain_in_registration_order(leaf):
    def f(L):
        x = L.tensor([1.0, -1.0], requires_grad=True)
        t = x if leaf else x.exp()
        log = []
        t.register_hook(lambda g: log.append(["first", py(g)]) or g + 1)
        t.register_hook(lambda g: log.append(["second", py(g)]) or g * 2)
        (t * 3).sum().backward()
        return {"log": log, "x_grad": py(x.grad)}
    r = same_as_torch(f)
    assert r["log"] == [["first", [3.0, 3.0]], ["second", [4.0, 4.0]]]


def test_hook_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                                           "require gradient"):
        hg.ones(2).register_hook(lambda g: g)


def test_hook_removing_itself_and_a_later_hook_still_runs_this_time():
    def f(L):
        x = L.tensor([1.0], requires_grad=True)
        y = x * 2
        log = []
        handles = {}
        handles["a"] = y.register_hook(lambda g: log.append("a") or handles["a"].remove()
                                       or handles["b"].remove())
        handles["b"] = y.register_hook(lambda g: log.append("b"))
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        return log
    assert same_as_torch(f) == ["a", "b"]


def test_hook_runs_once_for_tensor_used_twice_with_summed_grad():
    def f(L):
        x = L.tensor([0.0, 1.0], requires_grad=True)
        y = x * 2
        seen = []
        y.register_hook(lambda g: seen.append(py(g)))
        (y.sin() + y.cos()).sum().backward()
        return seen
    assert len(same_as_torch(f)) == 1


def test_hook_change_shape_dtype_type_errors():
    x = hg.tensor([1.0, 2.0], requires_grad=True)

    def named_shape(g):
        return g.sum()

    y = x * 2
    y.register_hook(named_shape)
    with pytest.raises(RuntimeError, match="hook 'named_shape' has changed the size of value"):
        y.sum().backward()
    y = x * 2
    y.register_hook(lambda g: g.to(hg.float16))
    with pytest.raises(RuntimeError, match=r"hook '<lambda>' has changed the type of value \(was "
                                           r"hookgrad.FloatTensor got hookgrad.HalfTensor\)"):
        y.sum().backward()
    y = x * 2
    y.register_hook(lambda g: 1)
    with pytest.raises(TypeError, match="expected Variable, but hook returned 'int'"):
        y.sum().backward()


def test_hook_errors_leave_graph_usable_with_retain_graph():
    x = hg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    h = y.register_hook(lambda g: g.sum())
    with pytest.raises(RuntimeError):
        y.sum().backward(retain_graph=True)
    h.remove()
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_hook_on_unused_branch_not_called():
    def f(L):
        x = L.tensor([1.0], requires_grad=True)
        used, unused = x * 2, x * 5
        calls = []
        unused.register_hook(lambda g: calls.append("unused"))
        used.sum().backward()
        return calls
    assert same_as_torch(f) == []


def test_hook_called_with_none_for_unused_output_of_multi_output_node():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        a, b = x.clone().unbind(0)
        log = []
        b.register_hook(lambda g: log.append("b" if g is None else "b!"))
        a.register_hook(lambda g: log.append("a"))
        a.backward()
        return [log, py(x.grad)]
    assert same_as_torch(f) == [["b", "a"], [1.0, 0.0]]


# ---- retain_grad

def test_retain_grad_sees_result_of_all_hooks_whatever_the_order():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: g + 1)
        y.retain_grad()
        y.register_hook(lambda g: g * 10)
        y.sum().backward()
        return {"y_grad": py(y.grad), "x_grad": py(x.grad), "retains": y.retains_grad}
    assert same_as_torch(f) == {"y_grad": [20.0, 20.0], "x_grad": [40.0, 40.0], "retains": True}


def test_retain_grad_accumulates_and_leaf_noop():
    def f(L):
        x = L.tensor([1.0], requires_grad=True)
        x.retain_grad()
        y = x * 3
        y.retain_grad()
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        return [py(y.grad), x.retains_grad, py(x.grad)]
    assert same_as_torch(f) == [[2.0], False, [6.0]]


def test_retain_grad_follows_inplace():
    def f(L):
        x = L.tensor([1.0], requires_grad=True)
        y = x * 3
        y.retain_grad()
        y.mul_(2)
        (y * 5).sum().backward()
        return py(y.grad)
    assert same_as_torch(f) == [5.0]


# ---- post accumulate grad hooks

def test_post_accumulate_hook_order_and_value():
    def f(L):
        w = L.tensor([1.0, 1.0], requires_grad=True)
        log = []
        w.register_post_accumulate_grad_hook(lambda p: log.append(["post", py(p.grad)]))
        w.register_hook(lambda g: log.append(["pre", py(g)]) or g * 2)
        (w * 3).sum().backward()
        (w * 3).sum().backward()
        return log
    assert same_as_torch(f) == [["pre", [3.0, 3.0]], ["post", [6.0, 6.0]],
                                ["pre", [3.0, 3.0]], ["post", [12.0, 12.0]]]


def test_post_accumulate_hook_errors():
    w = hg.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on "
                                           "non-leaf tensors"):
        (w + 1).register_post_accumulate_grad_hook(lambda p: None)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        hg.ones(1).register_post_accumulate_grad_hook(lambda p: None)
    w.register_post_accumulate_grad_hook(lambda p: p.clone())  # `p` itself is allowed
    with pytest.raises(RuntimeError, match="Tensor post accumulate grad hooks should return None."):
        (w * 2).sum().backward()


def test_post_accumulate_hook_runs_with_grad_mode_off():
    seen = []
    w = hg.tensor([1.0], requires_grad=True)
    w.register_post_accumulate_grad_hook(lambda p: seen.append(hg.is_grad_enabled()))
    (w * 2).sum().backward()
    assert seen == [False]


# ---- node hooks

def test_node_hook_order_within_one_node():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        log = []
        y.grad_fn.register_hook(lambda gi, go: log.append("post"))
        y.grad_fn.register_prehook(lambda go: log.append("pre"))
        y.retain_grad()
        y.register_hook(lambda g: log.append("tensor"))
        y.sum().backward()
        return log
    assert same_as_torch(f) == ["tensor", "pre", "post"]


def test_node_posthook_sees_and_replaces_grad_inputs():
    def f(L):
        a = L.tensor([1.0, 2.0], requires_grad=True)
        b = L.tensor([3.0, 4.0], requires_grad=True)
        c = a * b
        seen = []

        def hook(gi, go):
            seen.append([py(gi), py(go)])
            return (gi[0] * 10, None)
        c.grad_fn.register_hook(hook)
        c.sum().backward()
        return {"seen": seen, "a": py(a.grad), "b": b.grad is None}
    assert same_as_torch(f) == {"seen": [[[[3.0, 4.0], [1.0, 2.0]], [[1.0, 1.0]]]],
                                "a": [30.0, 40.0], "b": True}


def test_node_prehook_replaces_grad_outputs():
    def f(L):
        a = L.tensor([1.0, 2.0], requires_grad=True)
        b = a * 5
        b.grad_fn.register_prehook(lambda go: (go[0] * 3,))
        b.sum().backward()
        return py(a.grad)
    assert same_as_torch(f) == [15.0, 15.0]


def test_node_hook_return_checks():
    def scenario(hook_kind, result):
        def f(L):
            a = L.tensor([1.0, 2.0], requires_grad=True)
            b = a * 5
            if hook_kind == "pre":
                b.grad_fn.register_prehook(lambda go: result(L, go))
            else:
                b.grad_fn.register_hook(lambda gi, go: result(L, gi))
            return raises(lambda: b.sum().backward())["raises"]
        return f

    cases = {
        ("pre", "list"): (lambda L, g: [g[0]], "TypeError"),
        ("pre", "long"): (lambda L, g: (g[0], g[0]), "RuntimeError"),
        ("post", "nonetensor"): (lambda L, g: (g[0], L.ones(2)), "RuntimeError"),
        ("post", "int"): (lambda L, g: (3, None), "TypeError"),
        ("post", "shape"): (lambda L, g: (L.ones(3), None), "RuntimeError"),
    }
    for (kind, _), (fn, err) in cases.items():
        assert same_as_torch(scenario(kind, fn)) == err


def test_node_hook_messages():
    a = hg.tensor([1.0, 2.0], requires_grad=True)

    def too_many(go):
        return (go[0], go[0])

    b = a * 5
    b.grad_fn.register_prehook(too_many)
    with pytest.raises(RuntimeError, match=r"hook 'too_many' has returned an incorrect number of "
                                           r"values \(got 2, but expected 1\)"):
        b.sum().backward()
    b = a * 5
    b.grad_fn.register_hook(lambda gi, go: (gi[0], hg.ones(2)))
    with pytest.raises(RuntimeError, match="can't replace a None gradient with a non-None value"):
        b.sum().backward()
    b = a * 5
    b.grad_fn.register_hook(lambda gi, go: [gi[0], None])
    with pytest.raises(TypeError, match="expected tuple, but hook returned 'list'"):
        b.sum().backward()


def test_hook_handles_are_removable_and_context_managers():
    def f(L):
        x = L.tensor([1.0], requires_grad=True)
        y = x * 2
        h1 = y.grad_fn.register_prehook(lambda go: (go[0] * 100,))
        h1.remove()
        h1.remove()
        with y.register_hook(lambda g: g * 10):
            pass
        y.sum().backward()
        return py(x.grad)
    assert same_as_torch(f) == [2.0]


def test_accumulate_grad_node_hooks():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        node = L.autograd.graph.get_gradient_edge(x).node
        log = []
        node.register_prehook(lambda go: log.append(["pre", py(go)]) or (go[0] * 2,))
        node.register_hook(lambda gi, go: log.append(["post", len(gi), py(go)]))
        (x * 3).sum().backward()
        return [log, py(x.grad), node.name()]
    assert same_as_torch(f, names=False) == [
        [["pre", [[3.0, 3.0]]], ["post", 0, [[6.0, 6.0]]]], [6.0, 6.0],
        "torch::autograd::AccumulateGrad"]


def test_hooks_during_create_graph_are_differentiable():
    def f(L):
        x = L.tensor([1.0, -2.0], requires_grad=True)
        y = x * x
        y.register_hook(lambda g: g * x)
        (g,) = L.autograd.grad(y.sum(), x, create_graph=True)
        (g2,) = L.autograd.grad(g.sum(), x)
        return [py(g), py(g2)]
    assert same_as_torch(f) == [[2.0, 8.0], [4.0, -8.0]]
