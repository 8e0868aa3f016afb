"""PyTorch's older linear-algebra functions that ``torch.linalg`` replaced but PyTorch still
runs (each warns that it is deprecated): ``lu``, ``lu_solve``, ``lu_unpack``,
``triangular_solve`` and ``chain_matmul``, with their Tensor forms. They are the
``torch.linalg`` ops with the old argument orders and results, recording PyTorch's nodes
(``LinalgLuFactorExBackward0``, ``LuUnpackBackward0``, ``TriangularSolveBackward0``)."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .._tensor import Tensor
from .dispatch import apply
from .linalg_decomp import check_floating, check_matrix, return_type, warn_caller
from .linalg_lu import lu_factor_ex, lu_solve as _linalg_lu_solve
from .linalg_products import multi_dot
from .registry import defop, export

lu_with_info_result = return_type("_lu_with_info", ["LU", "pivots", "info"])
lu_unpack_result = return_type("lu_unpack", ["P", "L", "U"])
triangular_solve_result = return_type("triangular_solve", ["solution", "cloned_coefficient"])


@export
def lu(A, pivot=True, get_infos=False, out=None):
    """``lu(A, pivot=True, get_infos=False, out=None)``: ``(A_LU, pivots)`` of the LU
    factorization with partial pivoting (and ``infos`` when ``get_infos``: 0, or the index
    of the first zero pivot, as :func:`hookgrad.linalg.lu_factor_ex`'s)."""
    warn_caller("torch.lu is deprecated in favor of torch.linalg.lu_factor / "
                "torch.linalg.lu_factor_ex and will be removed in a future PyTorch release.\n"
                "LU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\nLU, pivots "
                "= torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = "
                "torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\nLU, "
                "pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")
    res = lu_factor_ex(A, pivot=pivot)  # a singular A is no error, as in PyTorch
    res = lu_with_info_result(*res) if get_infos else (res.LU, res.pivots)
    if out is not None:
        for o, r in zip(out, res):
            o.copy_(r)
        return out
    return res


@export
def lu_solve(b, LU_data, LU_pivots, *, out=None) -> Tensor:
    """``lu_solve(b, LU_data, LU_pivots, *, out=None)``: ``x`` with ``A @ x = b`` from
    :func:`lu`'s factorization of ``A`` (:func:`hookgrad.linalg.lu_solve`, arguments
    reordered)."""
    warn_caller("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be "
                "removed in a future PyTorch release.\nNote that torch.linalg.lu_solve has its "
                "arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be replaced "
                "with\nX = torch.linalg.lu_solve(LU, pivots, B)")
    res = _linalg_lu_solve(LU_data, LU_pivots, b)
    return res if out is None else out.copy_(res)


def _lu_unpack(lu_, unpack_data):
    if not unpack_data:
        empty = jnp.zeros((0,), lu_.dtype)
        return empty, empty
    m, n = lu_.shape[-2:]
    k = min(m, n)
    low = jnp.tril(lu_[..., :, :k], -1) + jnp.eye(m, k, dtype=lu_.dtype)
    return low, jnp.triu(lu_[..., :k, :])


LU_UNPACK = defop("lu_unpack", _lu_unpack, "LuUnpackBackward0", (),
                  names="LU_data -> LU_data_sym_argsize_minus_1 "
                        "LU_data_sym_argsize_minus_2")


def _permutation(pivots, m, dtype):
    # LAPACK's row swaps (row i with row pivots[i] - 1, in order) as the matrix P of A = PLU
    perm = jax.lax.linalg.lu_pivots_to_permutation(pivots - 1, m)
    return jnp.swapaxes(jax.nn.one_hot(perm, m, dtype=dtype), -1, -2)


@export(method=False)
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """``lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None)``:
    ``(P, L, U)`` with ``A = P @ L @ U`` from :func:`lu`'s compact factorization; ``P`` is
    empty unless ``unpack_pivots``, ``L`` and ``U`` unless ``unpack_data``."""
    check_matrix("torch.lu_unpack", LU_data, square=False, floating=False)
    if LU_pivots.dtype.name != "int32":
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor "
                           "of torch.int32 dtype.\nNote: this function is intended to be used "
                           "with the output produced by torch.linalg.lu_factor")
    low, up = apply(LU_UNPACK, (LU_data,), {"unpack_data": bool(unpack_data)})
    m = LU_data.shape[-2]
    p = Tensor._wrap(_permutation(LU_pivots._data, m, LU_data._data.dtype)) if unpack_pivots \
        else Tensor._wrap(jnp.zeros((0,), LU_data._data.dtype))
    res = lu_unpack_result(p, low, up)
    if out is not None:
        for o, r in zip(out, res):
            o.copy_(r)
        return out
    return res


def _triangular_solve(b, a, upper, transpose, unitriangular):
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    x = jax.lax.linalg.triangular_solve(a, jnp.broadcast_to(b, batch + b.shape[-2:]),
                                        left_side=True, lower=not upper,
                                        transpose_a=transpose, unit_diagonal=unitriangular)
    return x, a


TRIANGULAR_SOLVE = defop("triangular_solve", _triangular_solve, "TriangularSolveBackward0",
                         names="self A -> self A upper transpose unitriangular "
                               "solution=result0")


@export
def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """``triangular_solve(b, A, upper=True, transpose=False, unitriangular=False)``:
    ``(solution, cloned_coefficient)``: ``X`` with ``A @ X = b`` (``A.mT`` when
    ``transpose``) for an upper (lower) triangular ``A``, and a copy of ``A``."""
    warn_caller("torch.triangular_solve is deprecated in favor of "
                "torch.linalg.solve_triangularand will be removed in a future PyTorch "
                "release.\ntorch.linalg.solve_triangular has its arguments reversed and does "
                "not return a copy of one of the inputs.\nX = torch.triangular_solve(B, "
                "A).solution\nshould be replaced with\nX = torch.linalg.solve_triangular(A, B).")
    for name, t in (("b", b), ("A", A)):
        if t.ndim < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {name} to have at least 2 "
                               f"dimensions, but it has {t.ndim} dimensions instead")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    check_floating("torch.triangular_solve", b)
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is "
                           f"{A.shape[-2]} by {A.shape[-1]} but each b matrix is "
                           f"{b.shape[-2]} by {b.shape[-1]}")
    res = triangular_solve_result(*apply(TRIANGULAR_SOLVE, (b, A), {
        "upper": bool(upper), "transpose": bool(transpose),
        "unitriangular": bool(unitriangular)}))
    if out is not None:
        for o, r in zip(out, res):
            o.copy_(r)
        return out
    return res


@export(method=False)
def chain_matmul(*matrices, out=None) -> Tensor:
    """``chain_matmul(*matrices, out=None)``: the product of the matrices, in the order of
    fewest multiplications (:func:`hookgrad.linalg.multi_dot`); one matrix is copied."""
    warn_caller("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                "release. Use torch.linalg.multi_dot instead, which accepts a list of two or "
                "more tensors rather than multiple parameters.")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for i, m in enumerate(matrices):
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    res = matrices[0].clone() if len(matrices) == 1 else multi_dot(matrices)
    return res if out is None else out.copy_(res)
