"""``linalg.vander``, ``tensorinv``, ``tensorsolve``, ``cond`` (compositions of ops, recorded
as PyTorch records them) and ``householder_product`` (a row): values, gradients, the graph
and PyTorch's errors, against torch and, where JAX has the function, ``jax.grad``."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg
from tests.differential import graph, needs_torch, py, raises_as_torch, same_as_torch

_M = [[2.0, 1.0, 0.5], [0.3, 3.0, -1.0], [1.0, 0.2, 4.0]]


@pytest.mark.parametrize("call, exc, match", [
    (lambda L: L.linalg.vander(L.ones(3), N=1), RuntimeError, r"^N must be greater than 1\.$"),
    (lambda L: L.linalg.vander(L.tensor(1.0)), RuntimeError, r"^N must be greater than 1\.$"),
    (lambda L: L.linalg.vander(L.ones(3, dtype=L.bool)), RuntimeError,
     r"^linalg\.vander supports floating point, complex, and integer tensors, but got Bool$"),
    (lambda L: L.linalg.vander(L.ones(3, dtype=L.float16)), RuntimeError, r"but got Half$"),
    (lambda L: L.linalg.vander(L.ones(3), N=2.5), TypeError,
     r"^linalg_vander\(\): argument 'N' must be int, not float$"),
    (lambda L: L.linalg.tensorinv(L.ones(4, 6, 8, 3), ind=0), RuntimeError,
     r"^Expected a strictly positive integer for 'ind', but got 0$"),
    (lambda L: L.linalg.tensorinv(L.ones(4, 6, 8, 3), ind=1), RuntimeError,
     r"^Expected self to satisfy the requirement prod\(self\.shape\[ind:\]\) == "
     r"prod\(self\.shape\[:ind\]\), but got 144 != 4$"),
    (lambda L: L.linalg.tensorinv(L.zeros(2, 2, 4), ind=2), RuntimeError,
     r"^inv: The diagonal element 1 is zero"),
    (lambda L: L.linalg.tensorinv(L.ones(2, 2, dtype=L.int64), ind=1), RuntimeError,
     r"^linalg\.inv: Expected a floating point or complex tensor as input\. Got Long$"),
    (lambda L: L.linalg.tensorsolve(L.ones(2, 3, 6), L.ones(2, 2)), RuntimeError,
     r"^Expected self to satisfy the requirement prod\(self\.shape\[other\.ndim:\]\) == "
     r"prod\(self\.shape\[:other\.ndim\]\), but got 6 != 4$"),
    (lambda L: L.linalg.tensorsolve(L.ones(2, 3, 6), L.ones(2, 3), dims=(5,)), IndexError,
     r"^Dimension out of range \(expected to be in range of \[-3, 2\], but got 5\)$"),
    (lambda L: L.linalg.tensorsolve(L.zeros(6, 6), L.zeros(6)), RuntimeError,
     r"^torch\.linalg\.solve: The solver failed because the input matrix is singular\.$"),
    (lambda L: L.linalg.cond(L.ones(3)), RuntimeError,
     r"^linalg\.cond: The input tensor must have at least 2 dimensions\.$"),
    (lambda L: L.linalg.cond(L.eye(3), 3), RuntimeError,
     r"^linalg\.cond got an invalid norm type: 3$"),
    (lambda L: L.linalg.cond(L.eye(3), "a"), RuntimeError,
     r"^linalg\.cond got an invalid norm type: a$"),
    (lambda L: L.linalg.cond(L.ones(2, 3), 1), RuntimeError,
     r"^linalg\.cond\(ord=1\): A must be batches of square matrices, but they are 2 by 3"),
    (lambda L: L.linalg.cond(L.ones(2, 3), 1.0), RuntimeError, r"^linalg\.cond\(ord=1\.000000\)"),
    (lambda L: L.linalg.cond(L.ones(2, 3), -float("inf")), RuntimeError,
     r"^linalg\.cond\(ord=-inf\)"),
    (lambda L: L.linalg.cond(L.ones(2, 3), "a"), RuntimeError, r"^linalg\.cond\(ord=a\): A must"),
    (lambda L: L.linalg.cond(L.ones(2, 2, dtype=L.int64)), RuntimeError,
     r"^linalg\.svd: Expected a floating point or complex tensor as input\. Got Long$"),
    (lambda L: L.linalg.cond(L.ones(2, 2, dtype=L.int64), 1), RuntimeError,
     r"^linalg\.inv: Expected a floating point or complex tensor as input\. Got Long$"),
    (lambda L: L.linalg.householder_product(L.ones(2, 3), L.ones(1)), RuntimeError,
     r"^torch\.linalg\.householder_product: input\.shape\[-2\] must be greater than or equal "
     r"to input\.shape\[-1\]$"),
    (lambda L: L.linalg.householder_product(L.ones(3, 2), L.ones(3)), RuntimeError,
     r"input\.shape\[-1\] must be greater than or equal to tau\.shape\[-1\]$"),
    (lambda L: L.linalg.householder_product(L.ones(3), L.ones(1)), RuntimeError,
     r"^torch\.linalg\.householder_product: input must have at least 2 dimensions\.$"),
    (lambda L: L.linalg.householder_product(L.ones(3, 2), L.ones(1, dtype=L.float64)),
     RuntimeError, r"tau dtype Double does not match input dtype Float$"),
    (lambda L: L.linalg.householder_product(L.ones(2, 3, 2), L.ones(3, 1)), RuntimeError,
     r"Expected batch dimensions of tau to be equal to input\.shape\[:-2\], but got \[3\]$"),
    (lambda L: L.linalg.householder_product(L.ones(2, 3, 2), L.ones(1)), RuntimeError,
     r"Expected tau to have one dimension less than input, but got tau\.ndim equal to 1 and "
     r"input\.ndim is equal to 3$"),
    (lambda L: L.linalg.householder_product(L.ones(3, 2), L.ones(())), IndexError,
     r"^Dimension specified as -1 but tensor has no dimensions$"),
    (lambda L: L.linalg.householder_product(L.ones(3, 2, dtype=L.float16),
                                            L.ones(1, dtype=L.float16)),
     NotImplementedError, r"^\"orgqr_cpu\" not implemented for 'Half'$")])
def test_refuses_as_pytorchs(call, exc, match):
    raises_as_torch(call, exc, match)


def test_vander_values_dtypes_grads_and_graph_are_pytorchs():
    def scenario(L):
        x = L.tensor([[1.0, -2.0, 0.5], [3.0, 0.0, 1.5]], requires_grad=True)
        v = L.linalg.vander(x, N=4)
        (v * L.arange(4.0)).sum().backward()
        out = [py(v), py(x.grad), graph(v)]
        out.append(py(L.linalg.vander(L.tensor([1, 2, 3], dtype=L.int32))))
        out.append([str(L.linalg.vander(L.ones(2, dtype=d)).dtype).split(".")[-1]
                    for d in (L.int32, L.uint8, L.float64, L.complex64)])
        z = L.tensor([1 + 1j, -0.5j], requires_grad=True)
        L.view_as_real(L.linalg.vander(z)).pow(2).sum().backward()
        out.append(py(L.view_as_real(z.grad)))
        return out
    got = same_as_torch(scenario)
    assert got[0][0][0] == [1.0, 1.0, 1.0, 1.0] and got[0][1][0] == [1.0, 3.0, 9.0, 27.0]
    # jax.grad of the same loss over jnp.vander (increasing powers), which is nan at 0
    x = jnp.array([[1.0, -2.0, 0.5], [3.0, 0.0, 1.5]])
    want = jax.grad(lambda a: (jnp.vander(a.reshape(-1), 4, increasing=True)
                               * jnp.arange(4.0)).sum())(x)
    finite = np.isfinite(np.asarray(want))
    assert finite.sum() == 5
    np.testing.assert_allclose(np.array(got[1])[finite], np.asarray(want)[finite], rtol=1e-6)


def test_tensorinv_and_tensorsolve_values_grads_and_graph_are_pytorchs():
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((4, 6, 8, 3)) + 3 * np.eye(24).reshape(4, 6, 8, 3)).tolist()
    s = (rng.standard_normal((2, 3, 6)) + 3 * np.eye(6).reshape(2, 3, 6)).tolist()
    rhs = rng.standard_normal((2, 3)).tolist()

    def scenario(L):
        A = L.tensor(a, dtype=L.float64, requires_grad=True)
        inv = L.linalg.tensorinv(A, ind=2)
        (inv ** 2).sum().backward()
        S = L.tensor(s, dtype=L.float64, requires_grad=True)
        b = L.tensor(rhs, dtype=L.float64, requires_grad=True)
        x = L.linalg.tensorsolve(S, b)
        x.pow(3).sum().backward()
        Sm = L.tensor(s, dtype=L.float64).movedim(2, 0).requires_grad_()
        xm = L.linalg.tensorsolve(Sm, b.detach(), dims=(0,))
        xm.sum().backward()
        out = L.empty(0, dtype=L.float64)
        L.linalg.tensorsolve(S.detach(), b.detach(), out=out)
        return [list(inv.shape), py(A.grad), graph(inv)[1:], py(x), py(S.grad), py(b.grad),
                graph(x), py(xm), py(Sm.grad), graph(xm), py(out)]
    got = same_as_torch(scenario, tol=1e-8)
    assert got[0] == [8, 3, 4, 6]
    np.testing.assert_allclose(got[3], np.linalg.tensorsolve(np.array(s), np.array(rhs)),
                               rtol=1e-10)
    want = jax.grad(lambda m: (jnp.linalg.tensorinv(m, 2) ** 2).sum())(jnp.array(a))
    np.testing.assert_allclose(got[1], np.asarray(want), rtol=1e-8)
    want = jax.grad(lambda m, r: (jnp.linalg.tensorsolve(m, r) ** 3).sum(), (0, 1))(
        jnp.array(s), jnp.array(rhs))
    np.testing.assert_allclose(got[4], np.asarray(want[0]), rtol=1e-8)
    np.testing.assert_allclose(got[5], np.asarray(want[1]), rtol=1e-8)


# no ties among the row or column sums (of A or its inverse): amax's gradient is one
# entry's; and no zero entry: abs's subgradient at 0 is 0 in PyTorch, 1 in JAX
_CONDS = [_M, [[1.0, 2.3, 0.1], [0.2, 1.1, 0.4], [0.5, 0.3, 2.7]]]
_BY_INVERSE = (1, -1, float("inf"), -float("inf"), "fro")


@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, float("inf"), -float("inf"), "fro", "nuc"])
def test_cond_values_grads_and_graph_are_pytorchs(p):
    def scenario(L):
        A = L.tensor(_CONDS, dtype=L.float64, requires_grad=True)
        c = L.linalg.cond(A, p)
        sing = L.linalg.cond(L.tensor([[1.0, 2.0], [2.0, 4.0]]), p)
        return [py(c), graph(c), str(c.dtype).split(".")[-1],
                py(sing) if p in _BY_INVERSE else None,
                py(L.linalg.cond(L.zeros(2, 0, 0), p)),
                str(L.linalg.cond(L.eye(2, dtype=L.complex64), p).dtype).split(".")[-1]]
    got = same_as_torch(scenario, tol=1e-8)
    assert got[4] == [0.0, 0.0] and got[2] == "float64" and got[5] == "float32"
    if p in _BY_INVERSE:
        assert got[3] == "inf"  # a singular A: inf, as NumPy's

    def grad(L):
        A = L.tensor(_CONDS, dtype=L.float64, requires_grad=True)
        L.linalg.cond(A, p).sum().backward()
        return py(A.grad)
    if p not in _BY_INVERSE:  # see test_cond_by_the_inverse_is_differentiable
        same_as_torch(grad, tol=1e-8)
    got = grad(hg)
    if p != "nuc":  # jnp.linalg.cond has no 'nuc'
        want = jax.grad(lambda m: jnp.linalg.cond(m, p).sum())(jnp.array(_CONDS))
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-8)


@needs_torch
@pytest.mark.parametrize("p", _BY_INVERSE)
def test_cond_by_the_inverse_is_differentiable(p):
    """PyTorch 2.13 writes inf into ``linalg_inv_ex``'s saved result in place, so its
    backward raises; hookgrad records the same nodes out of place and differentiates
    (docs/differences.md); its gradient is checked against jax.grad above."""
    import torch
    A = torch.tensor(_CONDS, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        torch.linalg.cond(A, p).sum().backward()


def test_householder_product_is_orgqr_and_pytorchs():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 4, 3)).tolist()

    def scenario(L):
        A = L.tensor(a, dtype=L.float64)
        h, tau = L.geqrf(A)
        h.requires_grad_()
        tau.requires_grad_()
        q = L.linalg.householder_product(h, tau)
        (q * L.arange(12.0, dtype=L.float64).reshape(4, 3)).sum().backward()
        same = L.orgqr(h.detach(), tau.detach())
        return [py(q), py(h.grad), py(tau.grad), graph(q), py(same - q.detach()),
                py(L.linalg.householder_product(L.ones(3, 0), L.ones(0)))]
    got = same_as_torch(scenario, tol=1e-8)
    q = np.array(got[0])
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(3), (2, 3, 3)),
                               atol=1e-12)


def test_out_arguments_take_the_result():
    def scenario(L):
        A = L.tensor(_M)
        outs = [L.empty(3, 3), L.empty(()), L.empty(3, 3)]
        r = [L.linalg.tensorinv(A, ind=1, out=outs[0]), L.linalg.cond(A, out=outs[1]),
             L.linalg.householder_product(A, L.tensor([0.5, 0.2]), out=outs[2])]
        return [py(o) for o in outs] + [all(x is o for x, o in zip(r, outs))]
    assert same_as_torch(scenario)[-1] is True
