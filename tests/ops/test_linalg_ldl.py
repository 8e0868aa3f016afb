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
