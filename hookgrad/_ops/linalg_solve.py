"""Solving and inverting of ``torch.linalg``: solve, inv, det, slogdet, lstsq, pinv,
matrix_rank (and the top-level ``det``, ``inverse``, ``slogdet``, ``logdet``,
``pinverse``). Every backward is JAX's vjp of the forward."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np

from .._tensor import Tensor
from .dispatch import apply
from .linalg_decomp import check_floating, check_matrix, kind, raise_for_info, return_type
from .registry import FUNCTIONS, defop, export, shape_broadcast_error, with_out


def zero_pivot(lu):
    """LAPACK getrf's ``info`` of the factorization ``lu``: the 1-based index of its first
    zero pivot, 0 when there is none."""
    if not min(lu.shape[-2:]):
        return jnp.zeros(lu.shape[:-2], jnp.int32)
    zero = jnp.diagonal(lu, axis1=-2, axis2=-1) == 0
    return jnp.where(zero.any(-1), jnp.argmax(zero, -1) + 1, 0).astype(jnp.int32)


def _lu_info(a):
    """getrf's ``info`` of ``a`` (its factorization computed without gradient)."""
    if not a.shape[-1]:
        return jnp.zeros(a.shape[:-2], jnp.int32)
    return zero_pivot(jsl.lu_factor(jax.lax.stop_gradient(a))[0])


def _lu_extras(a, *rest, **statics):
    """``LU`` and ``pivots`` (1-based, int32) of ``a``, as PyTorch's solve saves them."""
    lu, piv = jsl.lu_factor(a)
    return lu, piv.astype(jnp.int32) + 1


def _lu_extras_mt(a):
    """det's and slogdet's: PyTorch factors ``A.mT`` (LAPACK's layout of a row-major A)."""
    return _lu_extras(jnp.swapaxes(a, -1, -2))


_LU_SAVED = "LU=result1 pivots=result2"


def _singular(k):
    return (f"The diagonal element {k} is zero, the inversion could not be completed because "
            "the input matrix is singular.")


# --------------------------------------------------------------------------- inv


INV_EX = defop("linalg_inv_ex", lambda a: (jnp.linalg.inv(a), _lu_info(a)),
               "LinalgInvExBackward0", names="A -> inverse=result")
inv_ex_result = return_type("linalg_inv_ex", ["inverse", "info"])


def inv_ex(A, *, check_errors=False):
    """``linalg.inv_ex(A, *, check_errors=False)``: the inverse of ``A`` and ``info`` (0, or
    the index of the zero pivot of a singular ``A``), without raising unless
    ``check_errors``."""
    check_matrix("linalg.inv", A)
    res = inv_ex_result(*apply(INV_EX, (A,)))
    if check_errors:
        raise_for_info("linalg.inv_ex", res.info, _singular)
    return res


def _inv(fname, A):
    res = inv_ex(A)
    raise_for_info(fname, res.info, _singular)
    return res.inverse


def inv(A) -> Tensor:
    """``linalg.inv(A)``: the inverse of a square ``A`` (or of each in a batch). Raises
    ``LinAlgError`` for a singular ``A``."""
    return _inv("linalg.inv", A)


@export
def inverse(input) -> Tensor:
    """``inverse(input)``: alias of :func:`hookgrad.linalg.inv`."""
    return _inv("linalg.inv", input)


# --------------------------------------------------------------------------- solve


def _is_vector_rhs(A, B):
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def _solve(a, b, left, vector):
    if not left:  # X A = B  <=>  A^T X^T = B^T
        a, b = jnp.swapaxes(a, -1, -2), jnp.swapaxes(b, -1, -2)
    if vector:
        b = b[..., None]
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    x = jnp.linalg.solve(jnp.broadcast_to(a, batch + a.shape[-2:]),
                         jnp.broadcast_to(b, batch + b.shape[-2:]))
    if vector:
        x = x[..., 0]
    elif not left:
        x = jnp.swapaxes(x, -1, -2)
    return x, _lu_info(a)


SOLVE_EX = defop("linalg_solve_ex", _solve, "LinalgSolveExBackward0", extras=_lu_extras,
                 names=f"A B -> A {_LU_SAVED} result left")
solve_ex_result = return_type("linalg_solve_ex", ["result", "info"])


def _check_solve(A, B, left, vector):
    check_matrix("linalg.solve", A)
    check_floating("linalg.solve", B)
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {kind(A)} and B of type {kind(B)} instead")
    check_rows("linalg.solve", A, B, left, vector)


def check_rows(fname, A, B, left, vector):
    """PyTorch's errors for a right-hand side ``B`` whose rows (columns when not ``left``)
    are not ``A``'s, or whose batch does not broadcast with ``A``'s."""
    n = A.shape[-1]
    rows = B.shape[-1] if vector else B.shape[-2 if left else -1]
    if rows != n:
        cols = 1 if vector else B.shape[-1 if left else -2]
        eq = "AX = B" if left else "XA = B"
        shown = f"{rows}x{cols}" if left else f"{cols}x{rows}"
        raise RuntimeError(f"{fname}: Incompatible shapes of A and B for the equation {eq} "
                           f"({A.shape[-2]}x{n} and {shown})")
    batch_b = tuple(B.shape[:-1] if vector else B.shape[:-2])
    err = shape_broadcast_error(batch_b, tuple(A.shape[:-2]))
    if err is not None:
        raise err


def solve_ex(A, B, *, left=True, check_errors=False):
    """``linalg.solve_ex(A, B, *, left=True, check_errors=False)``: :func:`solve`'s result
    and ``info`` (0, or the index of the zero pivot of a singular ``A``)."""
    vector = _is_vector_rhs(A, B)
    _check_solve(A, B, left, vector)
    res = solve_ex_result(*apply(SOLVE_EX, (A, B), {"left": bool(left), "vector": vector}))
    if check_errors:
        raise_for_info("torch.linalg.solve_ex", res.info, _solver_failed)
    return res


def _solver_failed(k):
    return "The solver failed because the input matrix is singular."


def solve(A, B, *, left=True) -> Tensor:
    """``linalg.solve(A, B, *, left=True)``: ``X`` with ``A @ X = B`` (``X @ A = B`` when
    not ``left``); ``B`` is a (batch of) vector(s) when its shape is ``A``'s without the last
    dimension. Raises ``LinAlgError`` for a singular ``A``."""
    res = solve_ex(A, B, left=left)
    raise_for_info("torch.linalg.solve", res.info, _solver_failed)
    return res.result


# --------------------------------------------------------------------------- triangular


def _solve_triangular(a, b, upper, left, unitriangular):
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    return jax.lax.linalg.triangular_solve(a, b, left_side=left, lower=not upper,
                                           unit_diagonal=unitriangular)


SOLVE_TRIANGULAR = defop("linalg_solve_triangular", _solve_triangular,
                         "LinalgSolveTriangularBackward0",
                         names="self B -> self result upper left unitriangular")


def solve_triangular(A, B, *, upper, left=True, unitriangular=False) -> Tensor:
    """``linalg.solve_triangular(A, B, *, upper, left=True, unitriangular=False)``: ``X``
    with ``A @ X = B`` (``X @ A = B`` when not ``left``) for an upper (lower) triangular
    ``A``, whose other triangle is not read (nor its diagonal, taken as ones, when
    ``unitriangular``)."""
    if B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    check_matrix("linalg.solve_triangular", A, kernel="triangular_solve_cpu")
    check_rows("linalg.solve_triangular", A, B, left, False)
    if A.dtype != B.dtype:  # PyTorch promotes
        from .._dtype import from_jax
        common = from_jax(jnp.promote_types(A._data.dtype, B._data.dtype))
        A, B = A.to(common), B.to(common)
    return apply(SOLVE_TRIANGULAR, (A, B), {"upper": bool(upper), "left": bool(left),
                                            "unitriangular": bool(unitriangular)})


# --------------------------------------------------------------------------- det, slogdet


DET = defop("linalg_det", jnp.linalg.det, "LinalgDetBackward0", extras=_lu_extras_mt,
            names=f"A -> A {_LU_SAVED} result")
SLOGDET = defop("linalg_slogdet", lambda a: tuple(jnp.linalg.slogdet(a)),
                "LinalgSlogdetBackward0", extras=_lu_extras_mt,
                names=f"A -> A {_LU_SAVED} sign=result")
slogdet_result = return_type("linalg_slogdet", ["sign", "logabsdet"])
slogdet_top_result = return_type("slogdet", ["sign", "logabsdet"])


def det(A) -> Tensor:
    """``linalg.det(A)``: the determinant of a square ``A`` (or of each in a batch)."""
    check_matrix("linalg.det", A)
    return apply(DET, (A,))


def slogdet(A):
    """``linalg.slogdet(A)``: ``(sign, logabsdet)`` with ``det(A) = sign * exp(logabsdet)``,
    stable where the determinant under- or overflows."""
    check_matrix("linalg.slogdet", A)
    return slogdet_result(*apply(SLOGDET, (A,)))


export(det, name="det")


@export(name="slogdet")
def _slogdet(input):
    """``slogdet(input)``: :func:`hookgrad.linalg.slogdet` as ``torch.return_types.slogdet``."""
    return slogdet_top_result(*slogdet(input))


@export
def logdet(input) -> Tensor:
    """``logdet(input)``: the log-determinant of a square ``input``; ``nan`` where the
    determinant is negative."""
    check_matrix("linalg.slogdet", input)
    sign, logabsdet = apply(SLOGDET, (input,))
    if input.dtype.is_complex:  # the sign is a unit complex number: its log is i * angle
        return FUNCTIONS["add"](FUNCTIONS["log"](sign), logabsdet)
    return FUNCTIONS["where"](sign < 0, float("nan"), logabsdet)


# --------------------------------------------------------------------------- pinv, rank


def _eps_rtol(A):
    return float(np.finfo(np.dtype(A._data.dtype)).eps) * max(A.shape[-2:])


def _tolerances(A, atol, rtol):
    """PyTorch's defaults: ``rtol`` is ``eps * max(m, n)`` unless ``atol`` is given (> 0),
    then 0; the cut-off is ``max(atol, rtol * largest singular value)``."""
    atol = 0.0 if atol is None else float(atol)
    if rtol is None:
        rtol = _eps_rtol(A) if atol <= 0 else 0.0
    return atol, float(rtol)


def _svals(a, hermitian):
    if hermitian:
        return jnp.sort(jnp.abs(jnp.linalg.eigvalsh(a)), axis=-1)[..., ::-1]
    return jnp.linalg.svd(a, compute_uv=False)


def _pinv(a, atol, rtol, hermitian):
    if atol:  # JAX cuts at rtol * s_max: atol as a relative tolerance
        smax = _svals(jax.lax.stop_gradient(a), hermitian)[..., 0]
        rtol = jnp.maximum(rtol, atol / jnp.where(smax > 0, smax, 1))
    return jnp.linalg.pinv(a, rtol=rtol, hermitian=hermitian)


PINV = defop("linalg_pinv", _pinv, "LinalgPinvBackward0", names="self -> self result")


def _check_pinv(A):
    if A.ndim < 2 or not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError(f"linalg.pinv({kind(A)}{{{list(A.shape)}}}): expected a tensor with "
                           "2 or more dimensions of float, double, cfloat or cdouble types")


def pinv(A, *, atol=None, rtol=None, hermitian=False) -> Tensor:
    """``linalg.pinv(A, *, atol=None, rtol=None, hermitian=False)``: the Moore-Penrose
    pseudo-inverse; singular values below ``max(atol, rtol * s_max)`` count as zero."""
    _check_pinv(A)
    atol, rtol = _tolerances(A, atol, rtol)
    return apply(PINV, (A,), {"atol": atol, "rtol": rtol, "hermitian": bool(hermitian)})


@export
def pinverse(input, rcond=1e-15) -> Tensor:
    """``pinverse(input, rcond=1e-15)``: :func:`hookgrad.linalg.pinv` with ``rtol=rcond``."""
    _check_pinv(input)
    return apply(PINV, (input,), {"atol": 0.0, "rtol": float(rcond), "hermitian": False})


def _rank(a, atol, rtol, hermitian):
    s = _svals(a, hermitian)
    cut = jnp.maximum(atol, rtol * s[..., :1])
    return jnp.sum(s > cut, -1)


RANK = defop("linalg_matrix_rank", _rank, None)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False) -> Tensor:
    """``linalg.matrix_rank(A, *, atol=None, rtol=None, hermitian=False)``: the number of
    singular values above ``max(atol, rtol * s_max)`` (an int64 Tensor)."""
    if not (A.is_floating_point() or A.is_complex()):
        raise RuntimeError("This function doesn't handle types other than float and double")
    check_matrix("linalg.matrix_rank", A, square=False)
    atol, rtol = _tolerances(A, atol, rtol)
    return apply(RANK, (A,), {"atol": atol, "rtol": rtol, "hermitian": bool(hermitian)})


# --------------------------------------------------------------------------- lstsq


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq(a, b, rcond, driver, vector):
    if vector:
        b = b[..., None]
    s = jnp.linalg.svd(jax.lax.stop_gradient(a), compute_uv=False)
    x = jnp.linalg.pinv(a, rtol=rcond) @ b
    rank = jnp.sum(s > rcond * s[..., :1], -1)
    m, n = a.shape[-2:]
    if m > n and driver != "gelsy":  # the squared residual norm of each column
        res = jnp.sum(jnp.abs(a @ x - b) ** 2, -2)
    else:
        res = jnp.zeros((0,), x.dtype)
    return (x[..., 0] if vector else x), res, rank, s


LSTSQ = defop("linalg_lstsq", _lstsq, "LinalgLstsqBackward0",
              names="self b -> self b solution=result")
lstsq_result = return_type("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])


def lstsq(A, B, rcond=None, *, driver=None):
    """``linalg.lstsq(A, B, rcond=None, *, driver=None)``: the least-squares solution of
    ``A X = B``, with the residuals (drivers other than ``'gelsy'``, when ``A`` is tall and
    of full rank), the rank (all drivers but ``'gels'``) and the singular values
    (``'gelsd'``, ``'gelss'``). ``driver`` defaults to ``'gelsy'``, as on PyTorch's CPU."""
    driver = "gelsy" if driver is None else driver
    if driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of "
                           "(gels, gelsy, gelsd, gelss)")
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    vector = B.ndim == A.ndim - 1
    if (B.shape[-1] if vector else B.shape[-2]) != A.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    check_floating("torch.linalg.lstsq", A)
    rcond = _eps_rtol(A) if rcond is None or rcond < 0 else float(rcond)
    x, res, rank, s = apply(LSTSQ, (A, B), {"rcond": rcond, "driver": driver, "vector": vector})
    empty_res = res.numel() and not isinstance(rank._data, jax.core.Tracer) and bool(
        (rank < A.shape[-1]).any())  # PyTorch gives no residuals for a rank-deficient A
    if empty_res:
        res = Tensor._wrap(jnp.zeros((0,), res._data.dtype))
    if driver == "gels":
        rank = Tensor._wrap(jnp.zeros((0,), rank._data.dtype))
    if driver not in ("gelsd", "gelss"):
        s = Tensor._wrap(jnp.zeros((0,), s._data.dtype))
    return lstsq_result(x, res, rank, s.detach())


# --------------------------------------------------------------------------- tensorinv, tensorsolve


def _prod(sizes):
    n = 1
    for s in sizes:
        n *= s
    return n


def _square_or_raise(rows, cols, split):
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[{split}:]) "
                           f"== prod(self.shape[:{split}]), but got {rows} != {cols}")


@with_out
def tensorinv(A, ind=2) -> Tensor:
    """``linalg.tensorinv(A, ind=2, *, out=None)``: the inverse of ``A`` for
    :func:`hookgrad.tensordot` over ``ind`` dimensions, of shape
    ``A.shape[ind:] + A.shape[:ind]``: ``A`` reshaped to a square matrix, inverted
    (LinalgInvExBackward0) and reshaped back, as PyTorch records it."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    if ind > A.ndim:
        raise RuntimeError(f"ArrayRef: invalid slice, N = {ind}; size = {A.ndim}")
    head, tail = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    _square_or_raise(_prod(tail), _prod(head), "ind")
    return _inv("inv", A.reshape(_prod(head), _prod(tail))).reshape(tail + head)


@with_out
def tensorsolve(A, B, dims=None) -> Tensor:
    """``linalg.tensorsolve(A, B, dims=None, *, out=None)``: ``X`` with
    ``tensordot(A, X, X.ndim) == B``; the dimensions ``dims`` of ``A`` are moved last first.
    ``A`` reshaped to a square matrix and ``B`` flattened go through :func:`solve`, as
    PyTorch's."""
    if dims is not None:
        dims = [dims] if isinstance(dims, int) else list(dims)
        A = A.movedim(dims, list(range(A.ndim - len(dims), A.ndim)))
    shape = tuple(A.shape[B.ndim:])
    n = _prod(shape)
    _square_or_raise(n, _prod(B.shape), "other.ndim")
    return solve(A.reshape(n, n), B.flatten()).reshape(shape)
