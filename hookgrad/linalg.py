"""``torch.linalg``: norms, solvers, inverses, determinants and factorizations of
(batches of) matrices, each recorded with PyTorch's node (``LinalgSolveExBackward0``,
``LinalgSvdBackward0``, ...) and differentiated by JAX's vjp.

A function that fails on its input (a singular matrix for :func:`inv` and :func:`solve`,
one that is not positive-definite for :func:`cholesky`) raises :class:`LinAlgError`
eagerly; inside ``hookgrad.compile`` the check cannot read the traced result, so it is
left as JAX computes it (``inf``/``nan``), as the ``_ex`` variants always do.
"""
from ._tensor import Tensor
from ._ops.linalg import matmul
from ._ops.linalg_decomp import (LinAlgError, cholesky, cholesky_ex, eigh, eigvalsh, qr, svd,
                                 svdvals)
from ._ops.linalg_eig import eig, eigvals
from ._ops.linalg_householder import householder_product
from ._ops.linalg_ldl import ldl_factor, ldl_factor_ex, ldl_solve
from ._ops.linalg_lu import lu, lu_factor, lu_factor_ex, lu_solve
from ._ops.linalg_norms import cond, matrix_norm, norm, vector_norm
from ._ops.linalg_products import (cross, matrix_exp, matrix_power, multi_dot, vander,
                                     vecdot)
from ._ops.registry import FUNCTIONS as _F
from ._ops.linalg_solve import (det, inv, inv_ex, lstsq, matrix_rank, pinv, slogdet, solve,
                                solve_ex, solve_triangular, tensorinv, tensorsolve)

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "eig", "eigh",
           "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor",
           "ldl_factor_ex", "ldl_solve", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul",
           "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm",
           "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals",
           "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm", "diagonal"]


def diagonal(A, *, offset=0, dim1=-2, dim2=-1) -> Tensor:
    """``linalg.diagonal(A, *, offset=0, dim1=-2, dim2=-1)``: :func:`hookgrad.diagonal`
    with defaults for batches of matrices."""
    return _F["diagonal"](A, offset, dim1, dim2)

_LinAlgError = LinAlgError  # the name the class carries (PyTorch's), for pickling

from . import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
