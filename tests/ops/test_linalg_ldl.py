"""``linalg.ldl_factor`` and ``ldl_factor_ex``: LAPACK's LD and pivots (2x2 blocks too),
symmetric and Hermitian, PyTorch's errors, no derivative; against torch, and without it
against the factorization's definition and SciPy's ``ldl``."""
import numpy as np
import pytest
import scipy.linalg

import hookgrad as hg
from tests.differential import py, raises_as_torch, same_as_torch

_SYM = [[4.0, 1.0, 2.0], [1.0, -3.0, 0.5], [2.0, 0.5, 3.0]]
_SWAP = [[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 0.1]]  # zero diagonal: 2x2 pivots
_HERM = [[2.0, 1 + 2j, 0.5j], [1 - 2j, -1.0, 3.0], [-0.5j, 3.0, 0.5]]


@pytest.mark.parametrize("call, exc, match", [
    (lambda L: L.linalg.ldl_factor(L.ones(2, 3)), RuntimeError,
     r"^torch\.linalg\.ldl_factor_ex: A must be batches of square matrices, but they are 2 "
     r"by 3 matrices$"),
    (lambda L: L.linalg.ldl_factor(L.ones(3)), RuntimeError,
     r"^torch\.linalg\.ldl_factor_ex: The input tensor A must have at least 2 dimensions\.$"),
    (lambda L: L.linalg.ldl_factor(L.ones(2, 2, dtype=L.int64)), RuntimeError,
     r"^torch\.linalg\.ldl_factor_ex: Expected a floating point or complex tensor as input\. "
     r"Got Long$"),
    (lambda L: L.linalg.ldl_factor(L.ones(2, 2, dtype=L.float16)), NotImplementedError,
     r"^\"ldl_factor_kernel_cpu\" not implemented for 'Half'$"),
    # PyTorch 2.13 words an exactly singular D as an internal assert; the tail is the same
    (lambda L: L.linalg.ldl_factor(L.zeros(2, 2)), RuntimeError,
     r"torch\.linalg\.ldl_factor: Unknown error code: 1\.$"),
    (lambda L: L.linalg.ldl_factor(L.eye(3, requires_grad=True)).LD.sum().backward(),
     RuntimeError, r"^derivative for aten::linalg_ldl_factor_ex is not implemented")])
def test_ldl_factor_refuses_as_pytorchs(call, exc, match):
    raises_as_torch(call, exc, match)


def test_ldl_factor_is_lapacks_as_pytorchs():
    def scenario(L):
        out = []
        for m, dt, herm in ((_SYM, L.float32, False), (_SWAP, L.float64, False),
                            (_HERM, L.complex128, True), (_HERM, L.complex128, False)):
            r = L.linalg.ldl_factor(L.tensor(m, dtype=dt), hermitian=herm)
            ld = L.view_as_real(r.LD) if r.LD.is_complex() else r.LD
            out.append([type(r).__name__, py(ld), py(r.pivots), str(r.pivots.dtype)[-5:]])
        batch = L.stack([L.tensor(_SYM), L.tensor(_SWAP)])
        ex = L.linalg.ldl_factor_ex(batch)
        out.append([type(ex).__name__, py(ex.LD), py(ex.pivots), py(ex.info)])
        ex = L.linalg.ldl_factor_ex(L.stack([L.eye(2), L.zeros(2, 2)]))
        out.append([py(ex.info), py(ex.pivots)])
        out.append(py(L.linalg.ldl_factor(L.ones(2, 0, 0)).pivots))
        a = L.tensor(_SYM, requires_grad=True)
        r = L.linalg.ldl_factor(a)
        out.append([r.LD.requires_grad, r.pivots.requires_grad])
        return out
    got = same_as_torch(scenario, tol=1e-6)
    assert got[1][2] == [-3, -3, 3] and got[5] == [[0, 1], [[1, 2], [1, 2]]]
    # no pivoting for _SYM (pivots 1, 2, 3): A = L D L^T, L unit lower below LD's diagonal
    ld = np.array(got[0][1])
    unit_l = np.tril(ld, -1) + np.eye(3)
    np.testing.assert_allclose(unit_l @ np.diag(np.diag(ld)) @ unit_l.T, _SYM, rtol=1e-6)
    # a 2x2 block for _SWAP (pivots -3, -3): D's block is LD's [0:2, 0:2], symmetric,
    # and SciPy's ldl (the same sytrf) finds the same D
    _, d, _ = scipy.linalg.ldl(np.array(_SWAP), lower=True)
    ld = np.array(got[1][1])
    np.testing.assert_allclose(np.diag(d), np.diag(ld), atol=1e-12)
    np.testing.assert_allclose(d[1, 0], ld[1, 0], atol=1e-12)


def test_ldl_factor_runs_compiled():
    a = hg.tensor(_SWAP)
    f = hg.compile(lambda x: hg.linalg.ldl_factor_ex(x).LD * 2)
    np.testing.assert_allclose(np.array(f(a).tolist()),
                               2 * np.array(hg.linalg.ldl_factor(a).LD.tolist()))


def _factored(L, m, dt, herm=False, batch=()):
    a = L.tensor(m, dtype=dt)
    ld, piv = L.linalg.ldl_factor(a.expand(*batch, *a.shape).clone(), hermitian=herm)
    return a, ld, piv


@pytest.mark.parametrize("call, exc, match", [
    (lambda L, ld, p, b: L.linalg.ldl_solve(ld[0], p, b), RuntimeError,
     r"^torch\.linalg\.ldl_solve: The input tensor A must have at least 2 dimensions\.$"),
    (lambda L, ld, p, b: L.linalg.ldl_solve(ld[:2], p, b), RuntimeError,
     r"^torch\.linalg\.ldl_solve: A must be batches of square matrices, but they are 2 by 3 "
     r"matrices$"),
    (lambda L, ld, p, b: L.linalg.ldl_solve(ld.long(), p, b), RuntimeError,
     r"^torch\.linalg\.ldl_solve: Expected a floating point or complex tensor as input\. "
     r"Got Long$"),
    # the dtypes before B's rows, the pivots' shape and type
    (lambda L, ld, p, b: L.linalg.ldl_solve(ld, p[:2].double(), b[:2].float()), RuntimeError,
     r"^Expected b and A to have the same dtype, but found b of type Float and A of type "
     r"Double instead\.$"),
    (lambda L, ld, p, b: L.linalg.ldl_solve(ld, p, b[:, 0]), IndexError,
     r"^Dimension out of range \(expected to be in range of \[-1, 0\], but got -2\)$"),
    (lambda L, ld, p, b: L.linalg.ldl_solve(ld, p, b[0, 0]), IndexError,
     r"^Dimension specified as -2 but tensor has no dimensions$"),
    (lambda L, ld, p, b: L.linalg.ldl_solve(ld, p[:2], b[:2]), RuntimeError,
     r"^Incompatible matrix sizes for torch\.linalg\.ldl_solve: each A matrix is 3 by 3 but "
     r"each b matrix is 2 by 2$"),
    (lambda L, ld, p, b: L.linalg.ldl_solve(ld, p.expand(1, 3), b), RuntimeError,
     r"^torch\.linalg\.ldl_solve: Expected LD\.shape\[:-1\] and pivots\.shape to be the "
     r"same, but got pivots with shape \[1, 3\] instead$"),
    (lambda L, ld, p, b: L.linalg.ldl_solve(ld, p.double(), b), RuntimeError,
     r"^torch\.linalg\.ldl_solve: Expected pivots to be integers\. Got Double$"),
    (lambda L, ld, p, b: L.linalg.ldl_solve(ld, p.bool(), b), RuntimeError,
     r"^torch\.linalg\.ldl_solve: Expected pivots to be integers\. Got Bool$"),
    (lambda L, ld, p, b: L.linalg.ldl_solve(ld.expand(2, 3, 3), p.expand(2, 3),
                                            b.expand(3, 3, 2)), RuntimeError,
     r"^The size of tensor a \(3\) must match the size of tensor b \(2\) at non-singleton "
     r"dimension 0$"),
    (lambda L, ld, p, b: L.linalg.ldl_solve(ld.half(), p, b.half()), NotImplementedError,
     r"^\"ldl_solve_kernel_cpu\" not implemented for 'Half'$"),
    (lambda L, ld, p, b: L.linalg.ldl_solve(ld, None, b), TypeError,
     r"^linalg_ldl_solve\(\): argument 'pivots' \(position 2\) must be Tensor, not NoneType$"),
    (lambda L, ld, p, b: L.linalg.ldl_solve(ld, p, b, hermitian=1), TypeError,
     r"^linalg_ldl_solve\(\): argument 'hermitian' must be bool, not int$"),
    (lambda L, ld, p, b: L.linalg.ldl_solve(ld, p, b, True), TypeError,
     r"^linalg_ldl_solve\(\) takes 3 positional arguments but 4 were given$"),
    (lambda L, ld, p, b: L.linalg.ldl_solve(ld, p, b, foo=1), TypeError,
     r"^linalg_ldl_solve\(\) got an unexpected keyword argument 'foo'$"),
    (lambda L, ld, p, b: L.linalg.ldl_solve(ld, p, b, out=L.empty(0)), RuntimeError,
     r"^Expected out tensor to have dtype double, but got float instead$"),
    (lambda L, ld, p, b: L.linalg.ldl_solve(ld, p, b.requires_grad_()).sum().backward(),
     RuntimeError, r"^derivative for aten::linalg_ldl_solve is not implemented$"),
    (lambda L, ld, p, b: L.linalg.ldl_solve(ld.requires_grad_(), p, b).sum().backward(),
     RuntimeError, r"^derivative for aten::linalg_ldl_solve is not implemented$")])
def test_ldl_solve_refuses_as_pytorchs(call, exc, match):
    def run(L):
        _, ld, p = _factored(L, _SWAP, L.float64)
        return call(L, ld, p, L.ones(3, 2, dtype=L.float64))
    raises_as_torch(run, exc, match)


def test_ldl_solve_solves_as_pytorchs():
    """Against torch, and against the system itself: ``A @ X == B`` for 1x1 and 2x2
    pivots, symmetric and Hermitian (and complex symmetric), broadcast batches, ``out``
    (``B`` itself too) and an empty system."""
    def scenario(L):
        out = []
        rhs = L.tensor([[1.0, 2.0], [3.0, -4.0], [0.5, 6.0]])
        for m, dt, herm in ((_SYM, L.float32, False), (_SWAP, L.float64, False),
                            (_HERM, L.complex128, True), (_HERM, L.complex128, False)):
            a, ld, p = _factored(L, m, dt, herm)
            b = rhs.to(dt)
            x = L.linalg.ldl_solve(ld, p.long(), b, hermitian=herm)
            out.append([py(L.view_as_real(x) if x.is_complex() else x), str(x.dtype)[-7:],
                        x.requires_grad])
        a, ld, p = _factored(L, _SWAP, L.float64, batch=(2,))
        x = L.linalg.ldl_solve(ld, p, rhs.double())  # B broadcast over LD's batch
        out.append(list(x.shape))
        b = rhs.double().clone()
        got = L.linalg.ldl_solve(ld[0], p[0], b, out=b)
        out.append([got is b, py(b)])
        out.append(list(L.linalg.ldl_solve(L.empty(0, 0), L.empty(0, dtype=L.int32),
                                           L.empty(0, 2)).shape))
        x = L.linalg.ldl_solve(ld[0], p[0], rhs.double().requires_grad_())
        out.append([x.requires_grad, x.grad_fn.name()])
        return out
    got = same_as_torch(scenario, tol=1e-5, names=False)
    rhs = np.array([[1.0, 2.0], [3.0, -4.0], [0.5, 6.0]])
    for m, (x, *_rest), herm in zip((_SYM, _SWAP, _HERM, _HERM), got, (0, 0, 1, 0)):
        x = np.array(x)
        if x.ndim == 3:
            x = x[..., 0] + 1j * x[..., 1]
        a = np.array(m)
        a = a if herm else np.tril(a) + np.tril(a, -1).T  # the lower triangle, symmetric
        np.testing.assert_allclose(a @ x, rhs, atol=1e-5)
    assert got[4] == [2, 3, 2] and got[5][0] is True and got[6] == [0, 2]
    np.testing.assert_allclose(np.array(_SWAP) @ np.array(got[5][1]), rhs, atol=1e-12)
    assert got[7] == [True, "torch::autograd::NotImplemented"]


def test_ldl_solve_broadcasts_LD_over_B():
    """LD's batch broadcast over B's (PyTorch 2.13 crashes on this: hookgrad solves each
    system)."""
    ld, p = hg.linalg.ldl_factor(hg.tensor([_SYM, _SWAP], dtype=hg.float64))
    b = hg.arange(24.0, dtype=hg.float64).reshape(4, 1, 3, 2)
    x = np.array(hg.linalg.ldl_solve(ld, p, b).tolist())
    assert x.shape == (4, 2, 3, 2)
    for i, m in enumerate((_SYM, _SWAP)):
        np.testing.assert_allclose(np.array(m) @ x[:, i], np.array(b.tolist())[:, 0],
                                   atol=1e-10)


def test_ldl_solve_runs_compiled_and_refuses_jax_grad():
    a, b = hg.tensor(_SWAP, dtype=hg.float64), hg.tensor([[1.0], [2.0], [3.0]], dtype=hg.float64)
    f = hg.compile(lambda m, r: hg.linalg.ldl_solve(*hg.linalg.ldl_factor(m), r) * 2)
    np.testing.assert_allclose(np.array(f(a, b).tolist()),
                               2 * np.linalg.solve(np.array(_SWAP), np.array(b.tolist())),
                               rtol=1e-12)
    # (JAX may append a note on its filtered traceback)
    with pytest.raises(RuntimeError, match=r"^derivative for aten::linalg_ldl_solve is not "
                                           r"implemented"):
        hg.func.grad(lambda r: hg.linalg.ldl_solve(*hg.linalg.ldl_factor(a), r).sum())(b)
