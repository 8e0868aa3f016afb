"""The backward engine: accumulation, graph retention, inputs=, autograd.grad, higher order,
node execution order, deep graphs. Each scenario runs under PyTorch too when installed."""
import threading

import jax
import jax.numpy as jnp
import pytest

import hookgrad as hg
from tests.differential import py, raises, same_as_torch


def test_grad_accumulates_across_backward_calls():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = (x ** 2).sum()
        y.backward(retain_graph=True)
        y.backward()
        return py(x.grad)
    assert same_as_torch(f) == [4.0, 8.0]


def test_the_implied_root_gradient_is_fresh_ones_for_each_backward():
    # the ones a scalar root's backward starts from are shared between backwards (made
    # once per shape and dtype): a hook writing them in place changes no later backward
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        for _ in range(3):
            y = (x * 2).sum()
            y.register_hook(lambda g: seen.append(py(g.mul_(3))))
            x.grad = None
            y.backward()
            seen.append(py(x.grad))
        z = (x * x).mean()  # another shape of root: its own ones
        z.register_hook(lambda g: seen.append(py(g.add_(1))))
        z.reshape(1, 1).backward()
        seen.append(py(x.grad))
        return seen
    assert same_as_torch(f) == [3.0, [6.0, 6.0]] * 3 + [2.0, [8.0, 10.0]]


def test_accumulation_is_in_place_on_the_grad_tensor():
    x = hg.tensor([1.0, 2.0], requires_grad=True)
    (x * 3).sum().backward()
    g = x.grad
    v = g._version
    (x * 3).sum().backward()
    assert x.grad is g and g.tolist() == [6.0, 6.0] and g._version == v + 1


def test_second_backward_without_retain_graph_raises():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp().sum()
        y.backward()
        return raises(y.backward)
    r = same_as_torch(f)
    assert r["raises"] == "RuntimeError"
    assert "Trying to backward through the graph a second time" in r["message"]


def test_nodes_without_saved_values_may_run_twice():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = (x + 1).sum()
        y.backward()
        y.backward()
        return py(x.grad)
    assert same_as_torch(f) == [2.0, 2.0]


def test_non_scalar_backward_needs_gradient():
    x = hg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    (x * 2).backward(hg.tensor([1.0, 10.0]))
    assert x.grad.tolist() == [2.0, 20.0]


def test_gradient_shape_mismatch_raises():
    x = hg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\]"):
        (x * 2).backward(hg.tensor([1.0, 2.0, 3.0]))


def test_a_root_gradient_of_another_real_dtype_is_cast_to_the_roots():
    """PyTorch's engine casts it, as every gradient on an edge (was a raw JAX ValueError)."""
    def f(L):
        x = L.ones(3, dtype=L.float64, requires_grad=True)
        g, = L.autograd.grad(x * 2, x, grad_outputs=L.ones(3, dtype=L.float32))
        (x * 3).sum().backward(L.tensor(1.0, dtype=L.float32))
        y = x * 4
        h, = L.autograd.grad(y, x, grad_outputs=L.ones(3, dtype=L.float16, requires_grad=True),
                             create_graph=True)
        def name(t):
            return str(t.dtype).rsplit(".", 1)[-1]
        return [name(g), g.tolist(), name(x.grad), x.grad.tolist(), name(h), h.requires_grad]
    assert same_as_torch(f) == ["float64", [2.0] * 3, "float64", [3.0] * 3, "float64", True]


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        hg.ones(2).sum().backward()


def test_inputs_restricts_accumulation():
    def f(L):
        a = L.tensor([1.0], requires_grad=True)
        b = L.tensor([2.0], requires_grad=True)
        (a * b).sum().backward(inputs=[b])
        return [a.grad is None, py(b.grad)]
    assert same_as_torch(f) == [True, [1.0]]


def test_inputs_restricts_execution():
    def f(L):
        a = L.tensor([1.0], requires_grad=True)
        b = L.tensor([2.0], requires_grad=True)
        ran = []
        c = a.exp()
        c.grad_fn.register_prehook(lambda g: ran.append("exp"))
        (c * b).sum().backward(inputs=[b])
        return ran
    assert same_as_torch(f) == []


def test_inputs_non_leaf_gets_grad():
    def f(L):
        a = L.tensor([1.0, 2.0], requires_grad=True)
        h = a * 2
        (h * h).sum().backward(inputs=[h])
        return [py(h.grad), a.grad is None]
    assert same_as_torch(f) == [[4.0, 8.0], True]


def test_autograd_grad_returns_and_does_not_accumulate():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        (g,) = L.autograd.grad((x * x).sum(), x)
        return [py(g), x.grad is None]
    assert same_as_torch(f) == [[2.0, 4.0], True]


def test_autograd_grad_unused_input():
    def f(L):
        x = L.tensor([1.0], requires_grad=True)
        z = L.tensor([1.0], requires_grad=True)
        err = raises(lambda: L.autograd.grad((x * 5).sum(), [x, z]))
        gx, gz = L.autograd.grad((x * 5).sum(), [x, z], allow_unused=True)
        mx, mz = L.autograd.grad((x * 5).sum(), [x, z], materialize_grads=True)
        return [err["raises"], py(gx), gz is None, py(mz)]
    assert same_as_torch(f) == ["RuntimeError", [5.0], True, [0.0]]


def test_autograd_grad_wrt_intermediate_and_leaf():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        h = x.sin()
        out = (h * h).sum()
        gh, gx = L.autograd.grad(out, [h, x])
        return [py(gh), py(gx)]
    same_as_torch(f)


def test_autograd_grad_with_grad_outputs_and_multiple_outputs():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        a, b = x * 2, x * x
        (g,) = L.autograd.grad([a, b], x, grad_outputs=[L.ones(2), L.tensor([1.0, 0.5])])
        return py(g)
    assert same_as_torch(f) == [4.0, 4.0]


def test_gradient_edge_as_input_survives_inplace():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        a = x * 2
        edge = L.autograd.graph.get_gradient_edge(a)
        a.mul_(3)
        (g,) = L.autograd.grad(a.sum(), edge)
        return py(g)
    assert same_as_torch(f) == [3.0, 3.0]


@pytest.mark.parametrize("order", [2, 3])
def test_higher_order_gradients(order):
    def f(L):
        x = L.tensor([0.5, -1.0], requires_grad=True)
        y = (x ** 4).sum()
        out = []
        for _ in range(order):
            (y,) = L.autograd.grad(y, x, create_graph=True)
            out.append(py(y))
            y = y.sum()
        return out
    res = same_as_torch(f)
    x = jnp.array([0.5, -1.0])
    g = lambda v: jnp.sum(v ** 4)  # noqa: E731
    for k in range(order):
        g = jax.grad(lambda v, g=g: jnp.sum(g(v))) if k else jax.grad(g)
        assert jnp.allclose(jnp.asarray(res[k]), g(x), rtol=1e-5)


def test_create_graph_of_output_saving_op():
    x = hg.tensor([0.3, 0.7], requires_grad=True)
    (g,) = hg.autograd.grad(x.tanh().sum(), x, create_graph=True)
    (g2,) = hg.autograd.grad(g.sum(), x)
    want = jax.grad(lambda v: jnp.sum(jax.grad(lambda u: jnp.sum(jnp.tanh(u)))(v)))(
        jnp.array([0.3, 0.7]))
    assert jnp.allclose(g2._data, want, rtol=1e-5)


def test_execution_order_highest_sequence_number_first():
    # two independent branches: the branch created last runs first, as in PyTorch
    def f(L):
        x = L.tensor([1.0], requires_grad=True)
        log = []
        a = x * 2
        b = x * 3
        a.grad_fn.register_prehook(lambda g: log.append("a"))
        b.grad_fn.register_prehook(lambda g: log.append("b"))
        x.register_hook(lambda g: log.append("leaf"))
        (a + b).sum().backward()
        return log
    assert same_as_torch(f) == ["b", "a", "leaf"]


def test_accumulate_grad_runs_as_soon_as_ready():
    def f(L):
        x = L.tensor([1.0], requires_grad=True)
        w = L.tensor([2.0], requires_grad=True)
        log = []
        h = (x * 2).exp()
        y = h * w
        w.register_hook(lambda g: log.append("w"))
        h.grad_fn.register_prehook(lambda g: log.append("exp"))
        x.register_hook(lambda g: log.append("x"))
        y.sum().backward()
        return log
    assert same_as_torch(f) == ["w", "exp", "x"]


def test_grad_summed_where_edges_meet():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        (y.sin() + y.cos() + y).sum().backward()
        return py(x.grad)
    same_as_torch(f)



def test_grad_summed_where_edges_meet_is_recorded_under_create_graph():
    # the engine sums the two gradients meeting at ``y``'s node; under create_graph that
    # sum is part of the new graph, so the second backward sees both terms
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        (g,) = L.autograd.grad((y.sin() + y.cos()).sum(), x, create_graph=True)
        g.sum().backward()
        return py(x.grad)
    same_as_torch(f)

def test_non_leaf_grad_access_warns():
    x = hg.tensor([1.0], requires_grad=True)
    z = x * 2
    z.sum().backward()
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        assert z.grad is None


def test_deep_chain_has_no_recursion_limit():
    x = hg.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + 1.0
    y.backward()
    assert x.grad.item() == 1.0


def test_backward_in_threads_is_independent():
    results = {}

    def work(k):
        x = hg.tensor([float(k)], requires_grad=True)
        (x * x).sum().backward()
        results[k] = x.grad.item()

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert results == {k: 2.0 * k for k in range(4)}


# ---- grad modes

def test_no_grad_enable_grad_set_grad_enabled():
    x = hg.tensor([1.0], requires_grad=True)
    with hg.no_grad():
        assert not (x * 2).requires_grad
        with hg.enable_grad():
            assert (x * 2).requires_grad
        assert not hg.is_grad_enabled()
    assert hg.is_grad_enabled()
    with hg.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert hg.is_grad_enabled()
    hg.set_grad_enabled(False)
    try:
        assert not hg.is_grad_enabled()
    finally:
        hg.set_grad_enabled(True)


def test_grad_mode_decorators():
    x = hg.tensor([1.0], requires_grad=True)

    @hg.no_grad()
    def f():
        return x * 2

    @hg.no_grad
    def g():
        return x * 2

    @hg.inference_mode()
    def h():
        return x * 2

    assert not f().requires_grad and not g().requires_grad and not h().requires_grad
    assert (x * 2).requires_grad


def test_grad_mode_decorated_generator_ends_like_a_generator():
    # a decorated generator runs each step under the mode and returns its value at the end
    # (it raised "generator raised StopIteration" once exhausted)
    def program(L):
        x = L.tensor([1.0], requires_grad=True)

        @L.no_grad()
        def steps():
            yield (x * 2).requires_grad
            sent = yield L.is_grad_enabled()
            return sent

        @L.enable_grad()
        def nothing():
            return
            yield

        gen = steps()
        seen = [next(gen), next(gen)]
        try:
            gen.send("done")
        except StopIteration as stop:
            seen.append(stop.value)
        return {"seen": seen, "outside": L.is_grad_enabled(), "empty": list(nothing()),
                "listed": list(steps())}

    assert same_as_torch(program) == {"seen": [False, False, "done"], "outside": True,
                                      "empty": [], "listed": [False, False]}


def test_grad_mode_is_thread_local():
    seen = []
    with hg.no_grad():
        t = threading.Thread(target=lambda: seen.append(hg.is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True]


def test_backward_grad_mode_follows_create_graph():
    modes = []
    x = hg.tensor([1.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: modes.append(hg.is_grad_enabled()))
    y.sum().backward(retain_graph=True)
    hg.autograd.grad(y.sum(), x, create_graph=True)
    assert modes == [False, True]
