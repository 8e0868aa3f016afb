"""``linalg.ldl_factor`` and ``ldl_factor_ex``: LAPACK's Bunch-Kaufman factorization of a
symmetric (``sytrf``) or Hermitian (``hetrf``) matrix, read from its lower triangle; and
``linalg.ldl_solve``, which solves with it (``sytrs``/``hetrs``).

JAX has no ``sytrf``, so SciPy's LAPACK wrappers compute it on the host (a callback, so it
runs inside ``hookgrad.compile`` too): its ``LD`` and 1-based ``pivots`` are LAPACK's
exactly, as PyTorch's are. Like PyTorch's, neither has a derivative."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from scipy.linalg import lapack

from .._dtype import c_type_name
from .._tensor import Tensor
from .dispatch import NOT_IMPLEMENTED, apply
from .jax_errors import shape_broadcast_error
from .linalg_decomp import check_matrix, kind, raise_for_info, return_type, write_outs
from .parser_errors import boolean, not_a
from .registry import defop, with_out
from .special import no_derivative

ldl_factor_result = return_type("linalg_ldl_factor", ["LD", "pivots"])
ldl_factor_ex_result = return_type("linalg_ldl_factor_ex", ["LD", "pivots", "info"])


def _host_ldl(a, hermitian):
    a = np.asarray(a)
    kind_ = "he" if hermitian and np.iscomplexobj(a) else "sy"
    routine = lapack.get_lapack_funcs(kind_ + "trf", (a,))
    flat = a.reshape((int(np.prod(a.shape[:-2])),) + a.shape[-2:])
    ld, piv = np.empty_like(flat), np.empty(flat.shape[:-1], np.int32)
    info = np.empty(flat.shape[:1], np.int32)
    for i, m in enumerate(flat):
        if m.shape[-1]:
            f, p, info[i] = routine(m, lower=1)
            ld[i], piv[i] = np.tril(f), p
        else:
            info[i] = 0
    return (ld.reshape(a.shape), piv.reshape(a.shape[:-1]), info.reshape(a.shape[:-2]))


def _on_host(a, hermitian):
    shapes = (jax.ShapeDtypeStruct(a.shape, a.dtype),
              jax.ShapeDtypeStruct(a.shape[:-1], jnp.int32),
              jax.ShapeDtypeStruct(a.shape[:-2], jnp.int32))
    return jax.pure_callback(lambda x: _host_ldl(x, hermitian), shapes, a,
                             vmap_method="sequential")


# a callback has no derivative to trace: a zero one here, so that the vjp reaches
# no_derivative's, which raises PyTorch's error
_on_host = jax.custom_vjp(_on_host, nondiff_argnums=(1,))
_on_host.defvjp(lambda a, hermitian: (_on_host(a, hermitian), a.shape),
                lambda hermitian, shape, cts: (jnp.zeros(shape, cts[0].dtype),))


def _ldl(a, hermitian):
    return _on_host(no_derivative(
        a, "derivative for aten::linalg_ldl_factor_ex is not implemented"), hermitian)


LDL_FACTOR_EX = defop("linalg_ldl_factor_ex", _ldl, NOT_IMPLEMENTED)


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """``linalg.ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None)``:
    :func:`ldl_factor`'s ``(LD, pivots)`` and LAPACK's ``info`` (``k > 0``: the ``k``-th
    diagonal entry of ``D`` is exactly zero)."""
    fname = "torch.linalg.ldl_factor_ex"
    check_matrix(fname, A)
    if A._data.dtype.itemsize < 4 and not A.is_complex():  # LAPACK has no half types
        raise NotImplementedError(f"\"ldl_factor_kernel_cpu\" not implemented for '{kind(A)}'")
    res = ldl_factor_ex_result(*apply(LDL_FACTOR_EX, (A,), {"hermitian": bool(hermitian)}))
    if check_errors:
        raise_for_info(fname, res.info, _unknown, RuntimeError)
    return write_outs(res, out)


def _unknown(k):  # PyTorch 2.13's own wording for sytrf's info > 0 (an internal assert)
    return f"Unknown error code: {k}."


def ldl_factor(A, *, hermitian=False, out=None):
    """``linalg.ldl_factor(A, *, hermitian=False, out=None)``: ``(LD, pivots)``, the
    compact Bunch-Kaufman factorization ``A = P L D L^H P^T`` of a symmetric (Hermitian
    when ``hermitian``) ``A`` from its lower triangle: ``L`` below the diagonal of ``LD``,
    the 1x1 and 2x2 blocks of ``D`` on and below it, LAPACK's pivots (negative for a 2x2
    block). Raises for an exactly singular ``D``."""
    res = ldl_factor_ex(A, hermitian=hermitian)
    raise_for_info("torch.linalg.ldl_factor", res.info, _unknown, RuntimeError)
    return write_outs(ldl_factor_result(res.LD, res.pivots), out)



# --------------------------------------------------------------------------- ldl_solve


def _host_ldl_solve(ld, piv, b, hermitian):
    ld, piv, b = np.asarray(ld), np.asarray(piv).astype(np.int32), np.asarray(b)
    kind_ = "he" if hermitian and np.iscomplexobj(ld) else "sy"
    routine = lapack.get_lapack_funcs(kind_ + "trs", (ld,))
    batch = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    ld = np.broadcast_to(ld, batch + ld.shape[-2:]).reshape((-1,) + ld.shape[-2:])
    piv = np.broadcast_to(piv, batch + piv.shape[-1:]).reshape((-1,) + piv.shape[-1:])
    b = np.broadcast_to(b, batch + b.shape[-2:]).reshape((-1,) + b.shape[-2:])
    x = np.empty_like(b)
    for i in range(b.shape[0]):
        # (an empty system has nothing to solve: LAPACK's wrappers refuse n = 0)
        x[i] = routine(ld[i], piv[i], b[i], lower=1)[0] if b[i].size else b[i]
    return x.reshape(batch + b.shape[-2:])


def _solve_on_host(ld, piv, b, hermitian):
    batch = jnp.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    return jax.pure_callback(lambda *a: _host_ldl_solve(*a, hermitian),
                             jax.ShapeDtypeStruct(batch + b.shape[-2:], b.dtype), ld, piv, b,
                             vmap_method="sequential")


_NO_SOLVE_DERIVATIVE = "derivative for aten::linalg_ldl_solve is not implemented"


def _no_solve_derivative(hermitian, res, ct):
    # PyTorch has no formula (its NotImplemented node's RuntimeError); JAX traces this only
    # for a wanted gradient, under jax.grad (eagerly the node raises first)
    raise RuntimeError(_NO_SOLVE_DERIVATIVE)


_ldl_solve = jax.custom_vjp(_solve_on_host, nondiff_argnums=(3,))
_ldl_solve.defvjp(lambda ld, piv, b, hermitian: (_ldl_solve(ld, piv, b, hermitian), None),
                  _no_solve_derivative)


# PyTorch has no derivative formula: its node raises at backward (nothing saved); under
# jax.grad, _no_solve_derivative does
LDL_SOLVE = defop("linalg_ldl_solve", _ldl_solve, NOT_IMPLEMENTED, (), nondiff=(1,))


def linalg_ldl_solve(LD, pivots, B, hermitian):
    """:func:`ldl_solve` without ``out``, named as PyTorch's messages name it."""
    fname = "torch.linalg.ldl_solve"
    for name, pos, t in (("LD", 1, LD), ("pivots", 2, pivots), ("B", 3, B)):
        if not isinstance(t, Tensor):
            raise not_a("linalg_ldl_solve", name, t, "Tensor", pos)
    boolean("linalg_ldl_solve", "hermitian", hermitian)
    # PyTorch's checks, in its order
    check_matrix(fname, LD)
    if B.dtype != LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{kind(B)} and A of type {kind(LD)} instead.")
    if B.ndim < 2:  # PyTorch reads B's size(-2) unchecked: its IndexError
        raise IndexError("Dimension specified as -2 but tensor has no dimensions" if not B.ndim
                         else "Dimension out of range (expected to be in range of [-1, 0], "
                              "but got -2)")
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {fname}: each A matrix is {n} by "
                           f"{n} but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"{fname}: Expected LD.shape[:-1] and pivots.shape to be the same, "
                           f"but got pivots with shape {list(pivots.shape)} instead")
    if pivots.is_floating_point() or pivots.is_complex() or pivots._data.dtype == np.bool_:
        raise RuntimeError(f"{fname}: Expected pivots to be integers. Got {kind(pivots)}")
    err = shape_broadcast_error(tuple(B.shape[:-2]), tuple(LD.shape[:-2]))
    if err is not None:
        raise err
    if LD._data.dtype.itemsize < 4 and not LD.is_complex():  # LAPACK has no half types
        raise NotImplementedError(f"\"ldl_solve_kernel_cpu\" not implemented for '{kind(LD)}'")
    return apply(LDL_SOLVE, (LD, pivots, B), {"hermitian": hermitian})


_solve_into = with_out(linalg_ldl_solve)


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None) -> Tensor:
    """``linalg.ldl_solve(LD, pivots, B, *, hermitian=False, out=None)``: ``X`` with
    ``A @ X = B``, from :func:`ldl_factor`'s ``LD`` and ``pivots`` of ``A`` (factorized
    with the same ``hermitian``); the batch dimensions broadcast. No derivative, as
    PyTorch's."""
    if out is None:
        return linalg_ldl_solve(LD, pivots, B, hermitian)
    if isinstance(out, Tensor) and isinstance(B, Tensor) and out.dtype != B.dtype:
        linalg_ldl_solve(LD, pivots, B, hermitian)  # its errors first, as PyTorch's
        raise RuntimeError(f"Expected out tensor to have dtype {c_type_name(B._data.dtype)}, "
                           f"but got {c_type_name(out._data.dtype)} instead")
    return _solve_into(LD, pivots, B, hermitian, out=out)


ldl_solve.__name__ = ldl_solve.__qualname__ = "linalg_ldl_solve"  # its TypeErrors' name
