"""autograd.functional (vjp, jvp, jacobian, hessian, vhp, hvp) against PyTorch and JAX."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg
from hookgrad.autograd import functional as AF
from tests.differential import py, raises, same_as_torch


def kinds(x):
    """The structure of a result: tuples as lists, Tensors as their type name."""
    if isinstance(x, tuple):
        return [kinds(v) for v in x]
    return type(x).__name__


def both(x):
    return {"kinds": kinds(x), "values": py(x)}


def f1(x):
    return (x.sin() * x).sum()


def f1v(x):
    return x.exp() * x


def f2(x, y):
    return (x * y.sum(), (y ** 2).tanh())


def f2s(x, y):
    return (x ** 2 * y.sum() + y.exp().sum()).sum()


def _inputs(L):
    return L.tensor([0.5, -1.0, 2.0]), L.tensor([0.3, 1.2])


def test_vjp_one_and_two_inputs():
    def f(L):
        F = L.autograd.functional
        x, y = _inputs(L)
        return [both(F.vjp(f1, x)),
                both(F.vjp(f1v, x, L.ones(3))),
                both(F.vjp(f2, (x, y), (L.ones(3), L.tensor([1.0, -2.0]))))]
    got = same_as_torch(f)
    assert got[0]["kinds"] == ["Tensor", "Tensor"]
    assert got[2]["kinds"] == [["Tensor", "Tensor"], ["Tensor", "Tensor"]]
    x = jnp.array([0.5, -1.0, 2.0])
    want = jax.grad(lambda x: jnp.sum(jnp.sin(x) * x))(x)
    np.testing.assert_allclose(got[0]["values"][1], want, rtol=1e-6)


def test_jvp_one_and_two_inputs():
    def f(L):
        F = L.autograd.functional
        x, y = _inputs(L)
        return [both(F.jvp(f1v, x, L.tensor([1.0, 0.0, -1.0]))),
                both(F.jvp(f2, (x, y), (L.ones(3), L.tensor([1.0, -2.0])))),
                both(F.jvp(lambda s: s * 3, L.tensor([2.0])))]
    got = same_as_torch(f)
    assert got[1]["kinds"] == [["Tensor", "Tensor"], ["Tensor", "Tensor"]]
    assert got[2]["values"] == [[6.0], [3.0]]


def test_jacobian_structures_and_strategies():
    def f(L):
        F = L.autograd.functional
        x, y = _inputs(L)
        return [both(F.jacobian(f1v, x)),
                both(F.jacobian(lambda x, y: x * y.sum(), (x, y))),
                both(F.jacobian(lambda x: (x.exp(), x.sum()), x)),
                both(F.jacobian(f2, (x, y))),
                both(F.jacobian(f2, (x, y), vectorize=True, strategy="forward-mode"))]
    got = same_as_torch(f)
    assert got[0]["kinds"] == "Tensor"
    assert got[1]["kinds"] == ["Tensor", "Tensor"]
    assert got[2]["kinds"] == ["Tensor", "Tensor"]
    assert got[3]["kinds"] == [["Tensor", "Tensor"], ["Tensor", "Tensor"]]
    x = jnp.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(got[0]["values"], jax.jacrev(lambda x: jnp.exp(x) * x)(x),
                               rtol=1e-6)


def test_hessian_vhp_hvp():
    def f(L):
        F = L.autograd.functional
        x, y = _inputs(L)
        v = (L.tensor([1.0, 2.0, 0.5]), L.tensor([-1.0, 0.25]))
        return [both(F.hessian(f1, x)), both(F.hessian(f2s, (x, y))),
                both(F.hessian(f2s, (x, y), vectorize=True,
                               outer_jacobian_strategy="forward-mode")),
                both(F.vhp(f1, x, v[0])), both(F.vhp(f2s, (x, y), v)),
                both(F.hvp(f1, x, v[0])), both(F.hvp(f2s, (x, y), v))]
    got = same_as_torch(f)
    assert got[0]["kinds"] == "Tensor"
    assert got[1]["kinds"] == [["Tensor", "Tensor"], ["Tensor", "Tensor"]]
    assert got[4]["kinds"] == ["Tensor", ["Tensor", "Tensor"]]
    x = jnp.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(got[0]["values"],
                               jax.hessian(lambda x: jnp.sum(jnp.sin(x) * x))(x), rtol=1e-5)


def test_create_graph_results_are_differentiable():
    def f(L):
        F = L.autograd.functional
        x = L.tensor([0.5, -1.0, 2.0], requires_grad=True)
        _, g = F.vjp(lambda x: (x ** 3).sum(), x, create_graph=True)
        (gx,) = L.autograd.grad(g.sum(), x)
        _, j = F.jvp(lambda x: x.sin(), x, L.ones(3), create_graph=True)
        (jx,) = L.autograd.grad(j.sum(), x)
        h = F.hessian(lambda x: (x ** 4).sum(), x, create_graph=True)
        (hx,) = L.autograd.grad(h.sum(), x)
        plain = F.vjp(lambda x: (x ** 3).sum(), x)[1]
        return [g.requires_grad, py(gx), py(jx), py(hx), plain.requires_grad]
    got = same_as_torch(f)
    assert got[0] is True and got[4] is False
    assert got[1] == pytest.approx([3.0, -6.0, 12.0])


def test_hooks_inside_func_run_functionally():
    seen = []

    def func(x):
        y = x * 2
        y.register_hook(lambda g: seen.append(np.asarray(g._data).tolist()) or g * 10)
        return y.sum()
    _, g = AF.vjp(func, hg.tensor([1.0, 2.0]))
    assert g.tolist() == [20.0, 20.0]
    assert seen == [[1.0, 1.0]]


def _err(call):
    def f(L):
        return raises(call, L)
    return f


@pytest.mark.parametrize("call, match", [
    (lambda L: L.autograd.functional.vjp(f1v, L.ones(3)), "v can only be None if the "
     "user-provided function returns a single Tensor with a single element"),
    (lambda L: L.autograd.functional.vjp(f1v, L.ones(3), L.ones(2)),
     r"v has invalid size: should be \w+\.Size\(\[3\]\) but got \w+\.Size\(\[2\]\)"),
    (lambda L: L.autograd.functional.vjp(f2, (L.ones(3), L.ones(2)), (L.ones(3),)),
     "v is a tuple of invalid length: should be 2 but got 1"),
    (lambda L: L.autograd.functional.jvp(f2, (L.ones(3), L.ones(2)), (L.ones(3), L.ones(3))),
     r"Entry 1 in v has invalid size"),
    (lambda L: L.autograd.functional.jvp(f1v, L.ones(3), (L.ones(3), L.ones(3))),
     "The given v should contain a single Tensor"),
    (lambda L: L.autograd.functional.jacobian(lambda x: 3.0, L.ones(3)),
     "The outputs of the user-provided function given to jacobian must be either a Tensor "
     "or a tuple of Tensors but the given outputs of the user-provided function has type"),
    (lambda L: L.autograd.functional.vjp(f1, [L.ones(3)]),
     "The inputs given to vjp must be either a Tensor or a tuple of Tensors"),
    (lambda L: L.autograd.functional.jacobian(lambda x, y: x * 2, (L.ones(3), L.ones(2)),
                                              strict=True),
     "Output 0 of the user-provided function is independent of input 1. This is not allowed "
     "in strict mode."),
    (lambda L: L.autograd.functional.vjp(lambda x, y: (x * 2).sum(), (L.ones(3), L.ones(2)),
                                         strict=True),
     "The output of the user-provided function is independent of input 1. This is not "
     "allowed in strict mode."),
    (lambda L: L.autograd.functional.jvp(lambda x: L.ones(3), L.ones(3), L.ones(3),
                                         strict=True),
     "Output 0 of the user-provided function does not require gradients"),
    (lambda L: L.autograd.functional.hessian(lambda x: x * 2, L.ones(3)),
     "The Tensor returned by the function given to hessian should contain a single element"),
    (lambda L: L.autograd.functional.hessian(lambda x: (x * 2).sum(), L.ones(3), strict=True),
     "While computing the hessian, found that the jacobian of the user-provided function "
     "with respect to input 0 is independent of the input"),
    (lambda L: L.autograd.functional.vhp(lambda x: (x, x), L.ones(3), L.ones(3)),
     "The function given to vhp should return a single Tensor"),
    (lambda L: L.autograd.functional.jacobian(f1v, L.ones(3), strategy="forward"),
     "Expected strategy to be either"),
    (lambda L: L.autograd.functional.jacobian(f1v, L.ones(3), strategy="forward-mode"),
     "only implemented for `vectorize=True`"),
    (lambda L: L.autograd.functional.jacobian(f1v, L.ones(3), strict=True, vectorize=True),
     "`strict=True` and `vectorized=True` are not supported together"),
])
def test_errors_as_torch(call, match):
    got = same_as_torch(_err(call))
    assert "raises" in got, got
    err = {"RuntimeError": RuntimeError, "TypeError": TypeError,
           "NotImplementedError": NotImplementedError, "AssertionError": AssertionError}
    with pytest.raises(err[got["raises"]], match=match):
        call(hg)


def test_module_hooks_fire_once_inside_func():
    def f(L):
        F = L.autograd.functional
        L.manual_seed(0)
        m = L.nn.Linear(3, 2)
        with L.no_grad():
            m.weight.copy_(L.tensor([[0.5, -1.0, 0.25], [1.0, 0.5, -0.5]]))
            m.bias.copy_(L.tensor([0.1, -0.2]))
        seen = []
        m.register_forward_hook(lambda mod, i, o: seen.append("forward"))
        m.register_full_backward_hook(lambda mod, gi, go: seen.append("backward"))
        x = L.tensor([[1.0, 2.0, -1.0]])
        out = [py(F.vjp(lambda x: m(x).tanh().sum(), x)), list(seen)]
        seen.clear()
        # one batched backward here, where PyTorch runs one backward per output element
        out += [py(F.jacobian(lambda x: m(x).tanh(), x)), "backward" in seen]
        seen.clear()
        out += [py(F.jvp(lambda x: m(x).tanh(), x, L.ones(1, 3))[1]), "backward" in seen]
        return out
    got = same_as_torch(f)
    assert got[1] == ["forward", "backward"]


def test_inside_compile_equals_eager():
    def step(x):
        return AF.vjp(lambda x: (x.sin() * x).sum(), x)[1], AF.hessian(lambda x: (x ** 3).sum(), x)
    x = hg.tensor([0.5, 1.0])
    eager, compiled = step(x), hg.compile(step)(x)
    for a, b in zip(eager, compiled):
        np.testing.assert_allclose(np.asarray(b._data), np.asarray(a._data), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(compiled[1]._data), np.diag([3.0, 6.0]), rtol=1e-6)


def test_create_graph_differentiable_wrt_v():
    def f(L):
        F = L.autograd.functional
        v = L.tensor([1.0, 2.0], requires_grad=True)
        _, g = F.vjp(lambda x: x.sin() * 3, L.tensor([0.5, 1.0]), v, create_graph=True)
        (gv,) = L.autograd.grad(g.sum(), v)
        return py(gv)
    assert same_as_torch(f) == pytest.approx([3 * np.cos(0.5), 3 * np.cos(1.0)])
