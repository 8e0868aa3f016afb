"""``linalg.ldl_factor`` and ``ldl_factor_ex``: LAPACK's Bunch-Kaufman factorization of a
symmetric (``sytrf``) or Hermitian (``hetrf``) matrix, read from its lower triangle.

JAX has no ``sytrf``, so SciPy's LAPACK wrappers compute it on the host (a callback, so it
runs inside ``hookgrad.compile`` too): its ``LD`` and 1-based ``pivots`` are LAPACK's
exactly, as PyTorch's are. Like PyTorch's, it has no derivative."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from scipy.linalg import lapack

from .dispatch import apply
from .linalg_decomp import check_matrix, kind, raise_for_info, return_type, write_outs
from .registry import defop
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


LDL_FACTOR_EX = defop("linalg_ldl_factor_ex", _ldl, "NotImplemented")


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

