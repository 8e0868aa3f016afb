"""LU factorizations of ``torch.linalg``: lu_factor (and its ``_ex`` form), lu, lu_solve.
Pivots are PyTorch's: 1-based int32 row swaps. Every backward is JAX's vjp."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl

from .._tensor import Tensor
from .dispatch import apply
from .linalg_decomp import (check_cpu_kernel, check_floating, check_matrix, raise_for_info,
                             return_type)
from .linalg_solve import check_rows, zero_pivot
from .registry import defop


def _lu_factor_ex(a):
    lu, piv, _ = jax.lax.linalg.lu(a)
    return lu, piv.astype(jnp.int32) + 1, zero_pivot(jax.lax.stop_gradient(lu))


LU_FACTOR_EX = defop("linalg_lu_factor_ex", _lu_factor_ex, "LinalgLuFactorExBackward0",
                     names="A -> LU=result pivot=True pivots=result1")
def _lu(a):
    f = jsl.lu
    for _ in range(a.ndim - 2):  # jax.scipy's lu takes one matrix; PyTorch's batches too
        f = jax.vmap(f)
    return tuple(f(a))


LU = defop("linalg_lu", _lu, "LinalgLuBackward0",
           names="A -> pivot=True P=result L=result1 U=result2")
lu_factor_ex_result = return_type("linalg_lu_factor_ex", ["LU", "pivots", "info"])
lu_factor_result = return_type("linalg_lu_factor", ["LU", "pivots"])
lu_result = return_type("linalg_lu", ["P", "L", "U"])


def _check_lu(fname, A, pivot):
    if A.ndim < 2:
        raise RuntimeError(f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(A.shape)} instead")
    check_cpu_kernel("lu_cpu", A)
    if not pivot:
        raise RuntimeError(f"{fname}: LU without pivoting is not implemented on the CPU")


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """``linalg.lu_factor_ex(A, *, pivot=True, check_errors=False)``: :func:`lu_factor`'s
    ``LU`` and ``pivots`` and ``info`` (0, or the index of the first zero pivot)."""
    _check_lu("linalg.lu_factor_ex", A, pivot)
    res = lu_factor_ex_result(*apply(LU_FACTOR_EX, (A,)))
    if check_errors:
        raise_for_info("torch.linalg.lu_factor_ex", res.info, _zero_u, RuntimeError)
    return res


def _zero_u(k):
    return (f"U[{k},{k}] is zero and using it on lu_solve would result in a division by zero. "
            "If you still want to perform the factorization, consider calling linalg.lu(A, "
            "pivot) or linalg.lu_factor_ex(A, pivot)")


def lu_factor(A, *, pivot=True):
    """``linalg.lu_factor(A, *, pivot=True)``: the LU factorization with partial pivoting
    of ``A`` in compact form (``L`` below the diagonal, ``U`` on and above) and the 1-based
    row ``pivots``; for :func:`lu_solve`. Raises when ``U`` has a zero on its diagonal."""
    _check_lu("linalg.lu_factor", A, pivot)
    res = lu_factor_ex(A)
    raise_for_info("torch.linalg.lu_factor", res.info, _zero_u, RuntimeError)
    return lu_factor_result(res.LU, res.pivots)


def lu(A, *, pivot=True):
    """``linalg.lu(A, *, pivot=True)``: ``P``, ``L``, ``U`` with ``A = P @ L @ U``: a
    permutation, unit lower triangular and upper triangular (trapezoidal) factors."""
    _check_lu("linalg.lu", A, pivot)
    p, low, up = apply(LU, (A,))
    return lu_result(p.detach(), low, up)


def _lu_solve(lu_, piv, b, left, adjoint):
    batch = jnp.broadcast_shapes(lu_.shape[:-2], b.shape[:-2])
    lu_ = jnp.broadcast_to(lu_, batch + lu_.shape[-2:])
    piv = jnp.broadcast_to(piv, batch + piv.shape[-1:]) - 1
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    conj = 2 if jnp.iscomplexobj(lu_) else 1
    if left:
        return jsl.lu_solve((lu_, piv), b, trans=conj if adjoint else 0)
    # X A = B  <=>  A^T X^T = B^T (A^H for the adjoint)
    bt = jnp.swapaxes(b, -1, -2)
    x = jsl.lu_solve((lu_, piv), bt.conj() if adjoint else bt, trans=0 if adjoint else 1)
    x = jnp.swapaxes(x, -1, -2)
    return x.conj() if adjoint else x


LU_SOLVE = defop("linalg_lu_solve", _lu_solve, "LinalgLuSolveBackward0", nondiff=(1,),
                 names="LU pivots B -> LU pivots result left adjoint")


def lu_solve(LU, pivots, B, *, left=True, adjoint=False) -> Tensor:
    """``linalg.lu_solve(LU, pivots, B, *, left=True, adjoint=False)``: ``X`` with
    ``A @ X = B`` (``X @ A = B`` when not ``left``; ``A.mH`` for ``A`` when ``adjoint``),
    from :func:`lu_factor`'s ``LU`` and ``pivots`` of a square ``A``."""
    check_matrix("linalg.lu_solve", LU)
    check_floating("linalg.lu_solve", B)
    if B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 "
                           "dimensions.")
    check_rows("linalg.lu_solve", LU, B, left, False)
    return apply(LU_SOLVE, (LU, pivots, B), {"left": bool(left), "adjoint": bool(adjoint)})
