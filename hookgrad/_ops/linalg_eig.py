"""``linalg.eig`` and ``linalg.eigvals``: eigenvalues and eigenvectors of a general square
matrix (LAPACK's geev), complex always.

As PyTorch's, the node saves the eigenvalues and eigenvectors only (not ``A``) and its
backward is a formula of them: on the eigenvalues alone ``V^-H diag(gL) V^H``, and with the
eigenvectors' gradient projected off the phase each eigenvector is free to take. JAX's
forward keeps geev's normalization (unit norm, largest component real) and is
differentiated by JAX where hookgrad traces a program for ``jax.grad``; both agree on a
loss free of the phase, which PyTorch's backward refuses otherwise (hookgrad does not
check: it would need the values on the host)."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .._tensor import Tensor
from .dispatch import OUT, apply
from .linalg_decomp import check_eig, return_type, write_outs
from .registry import defop

eig_result = return_type("linalg_eig", ["eigenvalues", "eigenvectors"])


def _eig(a, real):
    w, v = jax.lax.linalg.eig(a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)
    return w, v


def _eig_backward(out, gw, gv, real):
    """``A``'s gradient from the eigenvalues ``w``, the eigenvectors ``V`` and their
    gradients, in JAX's convention (the node conjugates PyTorch's gradients around it)."""
    w, v = out
    gw, gv = jnp.conj(gw), jnp.conj(gv)  # PyTorch's gradients: its formula reads them
    vh = jnp.conj(jnp.swapaxes(v, -1, -2))
    vhgv = vh @ gv
    # drop the part of the eigenvectors' gradient along their phase (each column has norm
    # 1: the diagonal keeps its imaginary part, which a loss free of the phase leaves 0)
    vhgv = vhgv - vh @ (v * jnp.real(jnp.diagonal(vhgv, axis1=-2, axis2=-1))[..., None, :])
    n = w.shape[-1]
    eye = jnp.eye(n, dtype=bool)
    gaps = jnp.conj(w)[..., None, :] - jnp.conj(w)[..., :, None]
    inner = jnp.where(eye, gw[..., None, :], vhgv / jnp.where(eye, 1, gaps))
    g = jnp.linalg.solve(vh, inner @ vh)
    g = jnp.real(g) if real else g
    return jnp.conj(g)


# PyTorch's names: the node saves the results (``result``, ``result1``), not ``self``
EIG = defop("linalg_eig", _eig, "LinalgEigBackward0", OUT, _eig_backward,
            names="self -> eigenvalues=result eigenvectors=result1")
# eigenvalues alone, where no node is recorded: geev without the vectors, as PyTorch's
EIGVALS = defop("linalg_eigvals", lambda a: jnp.linalg.eigvals(a), None, ())


def eig(A, *, out=None):
    """``linalg.eig(A, *, out=None)``: ``(eigenvalues, eigenvectors)`` of a square ``A``
    (complex, in LAPACK's order; each eigenvector of norm 1 with its largest component
    real, as geev gives it), differentiable in both, as PyTorch's."""
    check_eig("linalg.eig", A)
    return write_outs(eig_result(*apply(EIG, (A,), {"real": not A.is_complex()})), out)


def eigvals(A) -> Tensor:
    """``linalg.eigvals(A)``: the (complex) eigenvalues of a square ``A``, in LAPACK's
    order; differentiable, as PyTorch's: with a gradient to record, ``linalg.eig``'s
    node (the eigenvectors computed and saved too)."""
    check_eig("linalg.eigvals", A)
    if A.requires_grad:
        return apply(EIG, (A,), {"real": not A.is_complex()})[0]
    return apply(EIGVALS, (A,))
