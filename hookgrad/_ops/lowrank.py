"""Randomized low-rank decompositions (Halko, Martinsson and Tropp, 2009): ``svd_lowrank``
and ``pca_lowrank``. A Gaussian test matrix sketches the range of ``A``; ``niter`` power
iterations sharpen it; the SVD of ``A`` projected onto that range gives the factors. They
are compositions of recorded ops (``matmul``, ``linalg.qr``, ``linalg.svd``), so they are
differentiated as PyTorch's are. The test matrix comes from hookgrad's generator: the
factors of a matrix of rank above ``q`` differ from PyTorch's (docs/differences.md)."""
from __future__ import annotations

from .._factory import randn
from .linalg_decomp import qr, svd
from .registry import export


def _range_basis(A, q, niter, M):
    """An orthonormal ``Q`` (``q`` columns) whose span approximates ``A - M``'s range."""
    def times(X, adjoint=False):
        op = (A.mH, None if M is None else M.mH) if adjoint else (A, M)
        Y = op[0] @ X
        return Y if op[1] is None else Y - op[1] @ X
    sketch = randn(A.shape[-1], q, dtype=A.dtype if A.dtype.is_floating_point or
                   A.dtype.is_complex else None)
    Q = qr(times(sketch)).Q
    for _ in range(2 if niter is None else niter):
        Q = qr(times(Q, adjoint=True)).Q
        Q = qr(times(Q)).Q
    return Q


@export(method=False)
def svd_lowrank(A, q=6, niter=2, M=None):
    """``svd_lowrank(A, q=6, niter=2, M=None)``: ``(U, S, V)`` with ``A - M ~ U diag(S)
    V^H``: a rank-``q`` approximation from a random sketch and ``niter`` power iterations
    (exact when the rank is at most ``q``)."""
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    wide = m < n
    if wide:  # work on the tall one
        A, M = A.mH, None if M is None else M.mH
    Q = _range_basis(A, q, niter, M)
    B = Q.mH @ A
    if M is not None:
        B = B - Q.mH @ M
    U, S, Vh = svd(B, full_matrices=False)
    U, V = Q @ U, Vh.mH
    return (V, S, U) if wide else (U, S, V)


@export(method=False)
def pca_lowrank(A, q=None, center=True, niter=2):
    """``pca_lowrank(A, q=None, center=True, niter=2)``: :func:`svd_lowrank` of ``A`` with
    its column means subtracted (unless not ``center``): ``V``'s columns are the principal
    directions, ``S ** 2 / (m - 1)`` the variances. ``q`` defaults to ``min(6, m, n)``."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, "
                         f"n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return svd_lowrank(A, q, niter=niter)
    return svd_lowrank(A - A.mean(-2, keepdim=True), q, niter=niter)
