"""The *_copy functions of multi-output and strided views, detach_copy, detach_ and
as_strided_scatter: fresh tensors, PyTorch's nodes and errors (values and gradients are
op-table rows)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad
from tests.differential import py, raises, same_as_torch


def _names(ts):
    return [(t.grad_fn.name() if t.grad_fn is not None else None, t._base is None,
             list(t.shape)) for t in (ts if isinstance(ts, (tuple, list)) else (ts,))]


def test_copies_are_fresh_tensors_with_copy_nodes():
    def run(L):
        y = L.arange(12.0).reshape(3, 4).requires_grad_() * 1
        return [_names(f(y)) for f in (
            lambda y: L.expand_copy(y[:1], (2, 4)), lambda y: L.split_copy(y, 2),
            lambda y: L.split_with_sizes_copy(y, [1, 2]), lambda y: L.unbind_copy(y, 1),
            lambda y: L.unfold_copy(y, 1, 2, 1),
            lambda y: L.as_strided_copy(y, (2, 2), (1, 4), 1), L.detach_copy)]
    got = same_as_torch(run)
    assert got[1][0] == ("SplitBackward0_copy", True, [2, 4])


def test_a_copy_does_not_follow_its_source():
    def run(L):
        x = L.zeros(2, 3)
        a, b = L.unbind_copy(x)
        s = L.split_copy(x, 1)[0]
        x.add_(1)
        return [py(a), py(b), py(s)]
    assert same_as_torch(run)[0] == [0.0, 0.0, 0.0]


def test_detach_copy_has_no_derivative():
    def run(L):
        y = L.ones(2, requires_grad=True) * 1
        z = L.detach_copy(y)
        return [z.requires_grad, raises(lambda: z.sum().backward())]
    got = same_as_torch(run, names=False)
    assert got[1]["raises"] == "RuntimeError"
    with pytest.raises(RuntimeError, match="derivative for aten::detach_copy is not "
                                           "implemented"):
        hookgrad.detach_copy(hookgrad.ones(2, requires_grad=True) * 1).sum().backward()


def test_detach_in_place():
    def run(L):
        z = L.ones(2, requires_grad=True) * 1
        r = L.detach_(z)
        return [r is z, z.requires_grad, z.grad_fn is None, z.is_leaf,
                raises(lambda: L.detach_(L.ones(2, requires_grad=True)[0:1])),
                raises(lambda: (L.ones(3, requires_grad=True) * 1)[1:].detach_())]
    got = same_as_torch(run)
    assert got[:4] == [True, False, True, True] and got[4]["raises"] == "RuntimeError"


def test_as_strided_scatter():
    def run(L):
        x = L.zeros(3, 4)
        return [py(L.as_strided_scatter(x, L.arange(4.0).reshape(2, 2), (2, 2), (1, 4), 1)),
                py(x.as_strided_scatter(L.ones(2), (2,), (5,))),
                raises(lambda: L.as_strided_scatter(x, L.ones(2, 3), (2, 2), (1, 4))),
                raises(lambda: L.as_strided_scatter(x, L.ones(2, 2), (2, 2), (1, 4), 20)),
                raises(lambda: L.as_strided_scatter(x, L.ones(2, 2), (2,), (1, 4)))]
    got = same_as_torch(run)
    assert got[0][1] == [0.0, 1.0, 3.0, 0.0]


def test_as_strided_scatter_gradients():
    # src's gradient is PyTorch's; input's is JAX's: PyTorch 2.13 gives input the gradient
    # at the written places instead of outside them (docs/differences.md)
    g = np.arange(12.0, dtype=np.float32).reshape(3, 4)

    def run(L):
        x, s = L.zeros(3, 4, requires_grad=True), L.zeros(2, 2, requires_grad=True)
        L.as_strided_scatter(x, s, (2, 2), (1, 4), 1).backward(L.tensor(g))
        return py(s.grad)
    assert same_as_torch(run) == [[1.0, 5.0], [2.0, 6.0]]
    x, s = hookgrad.zeros(3, 4, requires_grad=True), hookgrad.zeros(2, 2, requires_grad=True)
    hookgrad.as_strided_scatter(x, s, (2, 2), (1, 4), 1).backward(hookgrad.tensor(g))
    idx = np.array([[1, 5], [2, 6]])
    want = jax.grad(lambda a: jnp.sum(a.reshape(-1).at[idx].set(0.0).reshape(3, 4) * g))(
        jnp.zeros((3, 4)))
    assert x.grad.tolist() == np.asarray(want).tolist()
    assert x.grad.tolist()[0] == [0.0, 0.0, 0.0, 3.0]
