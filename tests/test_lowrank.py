"""svd_lowrank and pca_lowrank against PyTorch: their random sketches differ (hookgrad's
generator), so what is compared is what the sketch does not change: the singular values and
the reconstruction of a matrix whose rank is at most ``q``, and gradients through them."""
import numpy as np
import pytest

from tests._pytorch_error import pytorch_error
from tests.differential import py, same_as_torch

_RNG = np.random.default_rng(0)
_RANK3 = (_RNG.standard_normal((8, 3)) @ _RNG.standard_normal((3, 5))).astype(np.float32)


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("pca", [False, True])
def test_rank_q_matrices_are_recovered_as_by_pytorch(wide, pca):
    def fn(L):
        a = L.tensor(_RANK3.T if wide else _RANK3)
        U, S, V = L.pca_lowrank(a, q=4) if pca else L.svd_lowrank(a, q=4, niter=1)
        return [py(S[:3]), py(U @ L.diag(S) @ V.mT), list(U.shape), list(V.shape)]
    same_as_torch(fn, tol=1e-4)


def test_gradients_through_an_exact_factorization():
    def fn(L):
        a = L.tensor(_RANK3[:, :3], requires_grad=True)
        U, S, V = L.svd_lowrank(a, q=3)
        (U @ L.diag(S) @ V.mT * L.arange(24.0).reshape(8, 3)).sum().backward()
        return py(a.grad)
    same_as_torch(fn, tol=1e-3)


def test_svd_lowrank_with_m_subtracts_it():
    def fn(L):
        a = L.tensor(_RANK3)
        m = L.ones(1, 5)
        U, S, V = L.svd_lowrank(a + m, q=4, M=m)
        return py(U @ L.diag(S) @ V.mT)
    same_as_torch(fn, tol=1e-4)


@pytest.mark.parametrize("call", [lambda L: L.pca_lowrank(L.ones(3, 4), q=5),
                                  lambda L: L.pca_lowrank(L.ones(3, 4), niter=-1)])
def test_bad_arguments_raise_pytorchs_value_error(call):
    assert pytorch_error(call)[0] == "ValueError"
