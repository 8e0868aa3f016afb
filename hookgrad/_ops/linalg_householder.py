"""Householder QR in LAPACK's compact form: ``geqrf`` (the reflectors below the diagonal of
``R`` and their scales ``tau``), ``orgqr`` (``Q``'s first columns from them,
``torch.linalg.householder_product``) and ``ormqr`` (a matrix times ``Q``).

JAX has no derivative of its ``householder_product``, and PyTorch's ``orgqr``/``ormqr``
are differentiable, so the reflections are written here in ``jnp`` (LAPACK's ``larfg``
convention, so the factors are LAPACK's) and JAX differentiates them. ``geqrf`` has no
derivative in PyTorch: a gradient asked for it raises its error."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .._tensor import Tensor
from .dispatch import apply
from .._dtype import TORCH_KINDS
from .linalg_decomp import return_type, write_outs
from .registry import defop, export, with_out
from .special import no_derivative

geqrf_result = return_type("geqrf", ["a", "tau"])


def _reflector(col, j, rows):
    """LAPACK's ``larfg`` on ``col[j:]``: ``(v, tau, beta)`` with ``v[j] = 1`` and zeros
    above ``j``, such that ``(I - tau v v^H)^H col[j:] = (beta, 0, ...)``."""
    alpha = col[..., j]
    below = jnp.where(rows > j, col, 0)
    xnorm = jnp.sqrt(jnp.sum(jnp.abs(below) ** 2, axis=-1))
    trivial = (xnorm == 0) & (jnp.imag(alpha) == 0)
    sign = jnp.where(jnp.real(alpha) >= 0, 1.0, -1.0)
    beta = -sign * jnp.sqrt(jnp.abs(alpha) ** 2 + xnorm ** 2)
    safe = jnp.where(trivial, 1.0, beta)
    tau = jnp.where(trivial, 0, (safe - alpha) / safe)
    scale = jnp.where(trivial, 1.0, alpha - safe)
    v = jnp.where(rows > j, below / scale[..., None], 0) + (rows == j)
    return v, tau.astype(col.dtype), jnp.where(trivial, jnp.real(alpha), beta)


def _geqrf(a):
    m, n = a.shape[-2:]
    k = min(m, n)
    rows, cols = jnp.arange(m), jnp.arange(n)

    def body(j, carry):
        r, taus = carry
        col = jax.lax.dynamic_index_in_dim(r, j, axis=r.ndim - 1, keepdims=False)
        v, tau, beta = _reflector(col, j, rows)
        w = jnp.where(cols > j, jnp.einsum("...m,...mn->...n", v.conj(), r), 0)
        r = r - tau.conj()[..., None, None] * v[..., :, None] * w[..., None, :]
        stored = jnp.where(rows > j, v, jnp.where(rows == j, beta.astype(r.dtype)[..., None], col))
        r = jnp.where(cols == j, stored[..., :, None], r)
        return r, jnp.where(jnp.arange(k) == j, tau[..., None], taus)
    taus = jnp.zeros(a.shape[:-2] + (k,), a.dtype)
    return jax.lax.fori_loop(0, k, body, (a, taus))


def _q(a, tau, ncols):
    """``H_1 ... H_k`` applied to the first ``ncols`` columns of the identity."""
    m = a.shape[-2]
    rows = jnp.arange(m)
    q = jnp.broadcast_to(jnp.eye(m, ncols, dtype=a.dtype), a.shape[:-2] + (m, ncols))
    for i in reversed(range(tau.shape[-1])):  # LAPACK's org2r: accumulate backwards
        v = jnp.where(rows > i, a[..., :, i], 0) + (rows == i)
        w = jnp.einsum("...m,...mn->...n", v.conj(), q)
        q = q - tau[..., i, None, None] * v[..., :, None] * w[..., None, :]
    return q


def _ormqr(a, tau, c, left, transpose):
    q = _q(a, tau, a.shape[-2])
    if transpose:
        q = jnp.swapaxes(q, -1, -2).conj()
    return q @ c if left else c @ q


GEQRF = defop("geqrf", lambda a: _geqrf(no_derivative(
    a, "the derivative for 'geqrf' is not implemented.")), "GeqrfBackward0")
ORGQR = defop("linalg_householder_product", lambda a, tau: _q(a, tau, a.shape[-1]),
              "LinalgHouseholderProductBackward0", names="input tau -> input tau result")
ORMQR = defop("ormqr", _ormqr, "OrmqrBackward0",
              names="self input2 input3 -> input2 input3 self result left transpose")


@export
def geqrf(input, *, out=None):
    """``geqrf(input, *, out=None)``: LAPACK's QR factorization in compact form, ``(a,
    tau)``: ``R`` on and above the diagonal of ``a``, the Householder vectors below it, and
    their scales ``tau`` (for :func:`orgqr` and :func:`ormqr`). It has no derivative."""
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"\"geqrf_cpu\" not implemented for "
                                  f"'{TORCH_KINDS[input.dtype.name]}'")
    return write_outs(geqrf_result(*apply(GEQRF, (input,))), out)


def _check_reflectors(name, input, tau):
    if input.ndim < 2:
        raise RuntimeError(f"torch.{name}: input must have at least 2 dimensions.")
    if tau.shape[-1] > input.shape[-1]:
        raise RuntimeError(f"torch.{name}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")


@export
def orgqr(input, tau, *, out=None) -> Tensor:
    """``orgqr(input, tau)``: the first ``n`` columns of ``Q = H_1 ... H_k`` from
    :func:`geqrf`'s reflectors (``torch.linalg.householder_product``)."""
    return householder_product(input, tau, out=out)


@with_out
def householder_product(A, tau) -> Tensor:
    """``linalg.householder_product(A, tau, *, out=None)``: the first ``n`` columns of the
    product of the Householder reflectors ``I - tau_i v_i v_i^H`` whose vectors are below
    the diagonal of ``A`` (LAPACK's ``orgqr``); differentiable in ``A`` and ``tau``."""
    name = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    if not tau.ndim:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    _check_reflectors("linalg.householder_product", A, tau)
    if A.ndim - tau.ndim != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau.ndim} and input.ndim is equal to "
                           f"{A.ndim}")
    if A.ndim > 2 and tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tau.dtype != A.dtype:
        raise RuntimeError(f"{name}: tau dtype {_kind(tau)} does not match input dtype "
                           f"{_kind(A)}")
    if not (A.dtype.is_complex or A.dtype.is_floating_point and A.dtype.itemsize >= 4):
        raise NotImplementedError(f"\"orgqr_cpu\" not implemented for '{_kind(A)}'")
    return apply(ORGQR, (A, tau))


def _kind(t):
    return TORCH_KINDS[t.dtype.name]


@export
def ormqr(input, input2, input3, left=True, transpose=False, *, out=None) -> Tensor:
    """``ormqr(input, tau, other, left=True, transpose=False)``: ``other`` multiplied by
    the ``Q`` of :func:`geqrf`'s reflectors, ``Q @ other`` (``other @ Q`` when not
    ``left``; ``Q^H`` for ``Q`` when ``transpose``), without forming ``Q`` for the user."""
    _check_reflectors("ormqr", input, input2)
    m = input3.shape[-2] if left else input3.shape[-1]
    if m != input.shape[-2]:
        side = "-2" if left else "-1"
        raise RuntimeError(f"torch.ormqr: other.shape[{side}] must be equal to "
                           f"input.shape[-2]")
    res = apply(ORMQR, (input, input2, input3), {"left": bool(left),
                                                 "transpose": bool(transpose)})
    return res if out is None else out.copy_(res)
