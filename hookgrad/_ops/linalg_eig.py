"""``linalg.eig``: eigenvalues and eigenvectors of a general square matrix (LAPACK's geev),
complex always, differentiated by JAX's vjp.

JAX differentiates the eigenvectors under geev's normalization (unit norm, largest
component real), valid for distinct eigenvalues; PyTorch's backward fixes only the norm and
refuses a loss that depends on the phase. Both agree on a loss free of the phase."""
from __future__ import annotations

import jax

from .dispatch import apply
from .linalg_decomp import check_eig, return_type, write_outs
from .registry import defop

eig_result = return_type("linalg_eig", ["eigenvalues", "eigenvectors"])


def _eig(a):
    w, v = jax.lax.linalg.eig(a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)
    return w, v


EIG = defop("linalg_eig", _eig, "LinalgEigBackward0",
            names="self -> eigenvalues=result eigenvectors=result1")


def eig(A, *, out=None):
    """``linalg.eig(A, *, out=None)``: ``(eigenvalues, eigenvectors)`` of a square ``A``
    (complex, in LAPACK's order; each eigenvector of norm 1 with its largest component
    real, as geev gives it), differentiable in both, as PyTorch's."""
    check_eig("linalg.eig", A)
    return write_outs(eig_result(*apply(EIG, (A,))), out)
