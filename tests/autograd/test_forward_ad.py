"""autograd.forward_ad: dual levels, make_dual/unpack_dual, tangents through ops, against
PyTorch's forward AD and jax.jvp."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg
import hookgrad.autograd.forward_ad as fwAD
from tests.differential import py, raises, same_as_torch


def test_importable_as_torch_has_it():
    assert hg.autograd.forward_ad is fwAD
    assert fwAD.UnpackedDualTensor._fields == ("primal", "tangent")


def test_tangent_through_ops_and_dropped_outside_level():
    def f(L):
        A = L.autograd.forward_ad
        x = L.tensor([0.5, -1.0, 2.0])
        with A.dual_level():
            d = A.make_dual(x, L.tensor([1.0, 0.0, -2.0]))
            y = (d.sin() * d).exp() + d ** 2
            z = y.sum()
            out = [py(A.unpack_dual(y)), py(A.unpack_dual(z)),
                   A.unpack_dual(x).tangent is None, type(A.unpack_dual(y)).__name__]
        out.append(A.unpack_dual(y).tangent is None)
        return out
    got = same_as_torch(f)
    x = jnp.array([0.5, -1.0, 2.0])
    _, want = jax.jvp(lambda x: jnp.exp(jnp.sin(x) * x) + x ** 2, (x,),
                      (jnp.array([1.0, 0.0, -2.0]),))
    np.testing.assert_allclose(got[0][1], want, rtol=1e-6)
    assert got[2:] == [True, "UnpackedDualTensor", True]


def test_mlp_jvp_equals_jax_and_torch():
    def f(L):
        A = L.autograd.forward_ad
        L.manual_seed(0)
        lin1 = L.nn.Linear(3, 4)
        lin2 = L.nn.Linear(4, 2)
        with L.no_grad():  # the same weights in both libraries
            for p, k in ((lin1.weight, 1), (lin1.bias, 2), (lin2.weight, 3), (lin2.bias, 4)):
                p.copy_(L.arange(p.numel(), dtype=L.float32).reshape(p.shape).sin() * k / 4)
        x = L.tensor([[0.5, -1.0, 2.0], [1.0, 0.25, -0.5]])
        v = L.tensor([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]])
        with A.dual_level():
            out = lin2(L.tanh(lin1(A.make_dual(x, v))))
            primal, tangent = A.unpack_dual(out)
        params = [py(p) for p in (lin1.weight, lin1.bias, lin2.weight, lin2.bias)]
        return [py(primal), py(tangent), params]
    got = same_as_torch(f)
    w1, b1, w2, b2 = (jnp.array(p) for p in got[2])

    def mlp(x):
        return jnp.tanh(x @ w1.T + b1) @ w2.T + b2
    x = jnp.array([[0.5, -1.0, 2.0], [1.0, 0.25, -0.5]])
    v = jnp.array([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]])
    out, tan = jax.jvp(mlp, (x,), (v,))
    np.testing.assert_allclose(got[0], out, rtol=1e-5)
    np.testing.assert_allclose(got[1], tan, rtol=1e-5, atol=1e-6)


def test_make_dual_keeps_backward_and_levels_functions():
    x = hg.tensor([1.0, 2.0], requires_grad=True)
    level = fwAD.enter_dual_level()
    try:
        assert level == 0
        d = fwAD.make_dual(x, hg.ones(2))
        primal, tangent = fwAD.unpack_dual(d * 3)
        assert tangent.tolist() == [3.0, 3.0]
        primal.sum().backward()
        assert x.grad.tolist() == [3.0, 3.0]
    finally:
        fwAD.exit_dual_level(level=level)
    assert fwAD.unpack_dual(d).tangent is None


def test_dual_level_as_decorator_and_inplace_op():
    @fwAD.dual_level()
    def run():
        d = fwAD.make_dual(hg.tensor([1.0, 2.0]), hg.tensor([1.0, 1.0]))
        y = d * 1
        y.mul_(d)
        return fwAD.unpack_dual(y).tangent.tolist()
    assert run() == [2.0, 4.0]


@pytest.mark.parametrize("call, match", [
    (lambda L: L.autograd.forward_ad.make_dual(L.ones(2), L.ones(2)),
     "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
     r"enter_dual_level\(\) first."),
    (lambda L: _in_level(L, lambda A: A.make_dual(L.ones(3), L.ones(2))),
     r"Trying to set a forward gradient that has a different size than that of the original "
     r"Tensor, this is not supported. Tensor is of size \[3\] while the given forward "
     r"gradient is of size \[2\]."),
    (lambda L: _in_level(L, lambda A: A.make_dual(L.ones(2, dtype=L.int64), L.ones(2))),
     "Expected primal to be floating point or complex, but got: "),
    (lambda L: _in_level(L, lambda A: A.make_dual(L.ones(2), L.ones(2, dtype=L.int64))),
     "Expected tangent to be floating point or complex, but got: "),
    (lambda L: _in_level(L, lambda A: A.make_dual(A.make_dual(L.ones(2), L.ones(2)),
                                                  L.ones(2))),
     "Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
     "level 0 is not supported."),
    (lambda L: _in_level(L, lambda A: A.dual_level().__enter__()),
     "Nested forward mode AD is not supported at the moment"),
    (lambda L: _in_level(L, lambda A: A.exit_dual_level(level=3)),
     "Trying to exit a forward AD level that was not the last one that was created"),
])
def test_errors_as_torch(call, match):
    got = same_as_torch(lambda L: raises(call, L))
    assert "raises" in got, got
    err = {"RuntimeError": RuntimeError, "ValueError": ValueError}[got["raises"]]
    with pytest.raises(err, match=match):
        call(hg)
    assert fwAD._current_level == -1  # nothing left open


def _in_level(L, fn):
    with L.autograd.forward_ad.dual_level():
        return fn(L.autograd.forward_ad)


def test_views_indexing_inplace_and_detach_as_torch():
    def f(L):
        A = L.autograd.forward_ad
        x = L.tensor([[0.5, -1.0, 2.0], [1.0, 0.25, -0.5]])
        out = []
        with A.dual_level():
            d = A.make_dual(x, L.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]]))
            c = d.clone()
            c[0] = d[1] * 3
            for y in (d[0], d.reshape(3, 2), d.t(), d @ d.t(), L.cat([d, d]), L.relu(d),
                      d.mean(), d.max(dim=1).values, c, d.detach(),
                      L.nn.functional.mse_loss(d, L.zeros(2, 3))):
                t = A.unpack_dual(y).tangent
                out.append(None if t is None else py(t))
        return out
    got = same_as_torch(f)
    assert got[0] == [1.0, 2.0, 3.0] and got[9] is None


def test_inside_compile_equals_eager():
    def step(x):
        with fwAD.dual_level():
            return fwAD.unpack_dual(fwAD.make_dual(x, hg.ones(2)).sin() * 2).tangent
    x = hg.tensor([0.5, 1.0])
    np.testing.assert_allclose(np.asarray(hg.compile(step)(x)._data),
                               2 * np.cos([0.5, 1.0]), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(step(x)._data), 2 * np.cos([0.5, 1.0]), rtol=1e-6)
