"""The linear-algebra functions PyTorch removed in 1.9 and keeps only to say so:
``torch.solve``, ``torch.lstsq``, ``torch.eig``, ``torch.symeig``, ``torch.matrix_rank``
and the Tensor methods ``solve``, ``lstsq``, ``eig``, ``symeig``. Each raises PyTorch's
``RuntimeError``, which names the ``torch.linalg`` function to use instead."""
from __future__ import annotations

from .registry import export

_REMOVED = "This function was deprecated since version 1.9 and is now removed."

_SOLVE = (f"{_REMOVED} `torch.solve` is deprecated in favor of `torch.linalg.solve`. "
          "`torch.linalg.solve` has its arguments reversed and does not return the LU "
          "factorization.\n\nTo get the LU factorization see `torch.lu`, which can be used with "
          "`torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should be "
          "replaced with:\nX = torch.linalg.solve(A, B)")
_LSTSQ = (f"{_REMOVED} `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
          "`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition "
          "in the returned tuple (although it returns other information about the problem).\n\n"
          "To get the QR decomposition consider using `torch.linalg.qr`.\n\nThe returned "
          "solution in `torch.lstsq` stored the residuals of the solution in the last m - n "
          "columns of the returned value whenever m > n. In torch.linalg.lstsq, the residuals "
          "are in the field 'residuals' of the returned named tuple.\n\nThe unpacking of the "
          "solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced "
          "with:\nX = torch.linalg.lstsq(A, B).solution")
_EIG = (f"{_REMOVED} `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` "
        "rather than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be "
        "replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, "
        "eigenvectors=True) should be replaced with:\nL_complex, V_complex = "
        "torch.linalg.eig(A)")
_SYMEIG = (f"{_REMOVED} The default behavior has changed from using the upper triangular "
           "portion of the matrix by default to using the lower triangular portion.\n\nL, _ = "
           "torch.symeig(A, upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, "
           "UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) "
           "should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")
_MATRIX_RANK = (f"{_REMOVED}\nPlease use the `torch.linalg.matrix_rank` function instead. The "
                "parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to "
                "'hermitian'.")


@export(method=False)
def solve(input, A, *, out=None):
    """Removed: raises, pointing to :func:`hookgrad.linalg.solve` (arguments reversed)."""
    raise RuntimeError(_SOLVE)


@export(method=False)
def lstsq(input, A, *, out=None):
    """Removed: raises, pointing to :func:`hookgrad.linalg.lstsq` (arguments reversed)."""
    raise RuntimeError(_LSTSQ)


@export(method=False)
def eig(self, eigenvectors=False, *, e=None, v=None):
    """Removed: raises, pointing to :func:`hookgrad.linalg.eig`."""
    raise RuntimeError(_EIG)


@export(method=False)
def symeig(input, eigenvectors=False, upper=True, *, out=None):
    """Removed: raises, pointing to :func:`hookgrad.linalg.eigh`."""
    raise RuntimeError(_SYMEIG)


@export(method=False)
def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    """Removed: raises, pointing to :func:`hookgrad.linalg.matrix_rank`."""
    raise RuntimeError(_MATRIX_RANK)


@export(name="solve", function=False)
def _solve_method(self, other):
    """Removed: raises as :func:`hookgrad.solve` does."""
    raise RuntimeError(_SOLVE)


@export(name="lstsq", function=False)
def _lstsq_method(self, other):
    """Removed: raises as :func:`hookgrad.lstsq` does."""
    raise RuntimeError(_LSTSQ)


@export(name="eig", function=False)
def _eig_method(self, eigenvectors=False):
    """Removed: raises as :func:`hookgrad.eig` does."""
    raise RuntimeError(_EIG)


@export(name="symeig", function=False)
def _symeig_method(self, eigenvectors=False):
    """Removed: raises as :func:`hookgrad.symeig` does."""
    raise RuntimeError(_SYMEIG)
