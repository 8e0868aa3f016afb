"""Matrix factorizations of ``torch.linalg``: cholesky, qr, svd, svdvals, eigh, eigvalsh.

Also what the linalg rows share: the input checks with PyTorch's wording, ``LinAlgError``,
the named-tuple results (``torch.return_types.linalg_*``) and the eager check of a
factorization's ``info``. Every backward is JAX's vjp of the forward.
"""
from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as np

from .. import _errors
from .._dtype import torch_kind
from .._tensor import Tensor
from .dispatch import apply
from .parser_errors import boolean
from .registry import defop, export


class LinAlgError(RuntimeError):
    """Raised when a linear algebra function fails on its input: a singular matrix, a
    matrix that is not positive-definite, ... (``torch.linalg.LinAlgError``)."""


# PyTorch's class is torch._C._LinAlgError, exposed as torch.linalg.LinAlgError
LinAlgError.__module__ = "hookgrad.linalg"
LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"

return_types = {}


def return_type(name, fields):
    """A named tuple printed as PyTorch's ``torch.return_types.<name>``."""
    base = collections.namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"hookgrad.return_types.{name}(\n{body})"
    cls = type(name, (base,), {"__slots__": (), "__repr__": __repr__})
    cls.__module__ = "hookgrad.return_types"
    cls.__qualname__ = name
    return_types[name] = cls
    return cls


# --------------------------------------------------------------------------- checks


def kind(t):
    """PyTorch's name of ``t``'s scalar type, as its messages show it (``Float``, ``Long``)."""
    return torch_kind(t._data.dtype)


def check_floating(fname, t, what="input", kernel=None):
    """PyTorch's error for a ``t`` that is not floating: its own check's, or where PyTorch
    has none, that of the ``kernel`` its dispatch finds no integer version of."""
    if kernel is not None:
        check_cpu_kernel(kernel, t)
    if not (t.is_floating_point() or t.is_complex()):
        raise RuntimeError(f"{fname}: Expected a floating point or complex tensor as {what}. "
                           f"Got {kind(t)}")


def check_matrix(fname, A, square=True, floating=True, kernel=None):
    """PyTorch's errors for ``A`` that is not a (batch of) matrices, of a floating type,
    square where ``square`` (``kernel``: see ``check_floating``)."""
    if A.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{fname}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if floating:
        check_floating(fname, A, kernel=kernel)


def write_outs(res, out):
    """``res`` (a named tuple of Tensors) written into the Tensors of ``out`` (PyTorch's
    ``out=`` of a function returning several), which is returned; ``res`` without one."""
    if out is None:
        return res
    for o, r in zip(out, res):
        o.copy_(r)
    return out


def raise_for_info(fname, info, message, error=LinAlgError):
    """PyTorch's ``error`` (``LinAlgError``) where a factorization's ``info`` (a Tensor, 0:
    success) is not 0: ``message(k)`` says what the first failure ``k`` means. Eager only:
    a traced ``info`` is left in the result (docs/differences.md)."""
    arr = info._data
    if isinstance(arr, jax.core.Tracer) or not arr.size:
        return
    flat = np.asarray(arr).reshape(-1)
    bad = np.flatnonzero(flat)
    if not bad.size:
        return
    b = int(bad[0])
    where = f"(Batch element {b}): " if arr.ndim else ""
    raise error(f"{fname}: {where}{message(int(flat[b]))}")


def warn_caller(message):
    """A UserWarning at the line that called the public function calling this one."""
    _errors.warn(message, UserWarning)


def not_pd(k):
    return ("The factorization could not be completed because the input is not "
            f"positive-definite (the leading minor of order {k} is not positive-definite).")


# --------------------------------------------------------------------------- cholesky


def read_triangle(a, lower=True):
    """``a`` read through its lower (upper) triangle, mirrored, as LAPACK reads it; its
    gradient is that of ``(a + a.mH) / 2``: the symmetric gradient PyTorch gives."""
    mh = jnp.swapaxes(a, -1, -2).conj()
    tri = jnp.tril(a) + jnp.triu(mh, 1) if lower else jnp.triu(a) + jnp.tril(mh, -1)
    sym = (a + mh) / 2
    return sym + jax.lax.stop_gradient(tri - sym)


def _first_bad_minor(a):
    """The order of the first leading minor of symmetric ``a`` that is not positive (0
    when all are): LAPACK's potrf ``info``."""
    n = a.shape[-1]
    if not n:
        return jnp.zeros(a.shape[:-2], jnp.int32)
    idx = jnp.arange(n)
    eye = jnp.eye(n, dtype=a.dtype)

    def sign(k):  # det(a[:k, :k]) as the determinant of a padded with the identity
        keep = (idx[:, None] < k) & (idx[None, :] < k)
        return jnp.linalg.slogdet(jnp.where(keep, a, eye))[0]
    signs = jax.vmap(sign, out_axes=-1)(jnp.arange(1, n + 1))
    bad = signs <= 0
    return jnp.where(bad.any(-1), jnp.argmax(bad, -1) + 1, 0).astype(jnp.int32)


def _cholesky_ex(a, upper):
    s = read_triangle(a, not upper)  # LAPACK's potrf reads the triangle it returns
    low = jnp.linalg.cholesky(s, symmetrize_input=False)
    ok = jnp.isfinite(low).all((-2, -1))
    info = jnp.where(ok, 0, _first_bad_minor(jax.lax.stop_gradient(s)))
    return (jnp.swapaxes(low, -1, -2).conj() if upper else low), info


CHOLESKY_EX = defop("linalg_cholesky_ex", _cholesky_ex, "LinalgCholeskyExBackward0",
                    names="self -> L=result upper")
cholesky_ex_result = return_type("linalg_cholesky_ex", ["L", "info"])


def cholesky_ex(A, *, upper=False, check_errors=False):
    """``linalg.cholesky_ex(A, *, upper=False, check_errors=False)``: the Cholesky factor
    and ``info`` (0, or the order of the first leading minor that is not positive-definite),
    without raising unless ``check_errors``."""
    upper = boolean("linalg_cholesky_ex", "upper", upper)
    check_errors = boolean("linalg_cholesky_ex", "check_errors", check_errors)
    check_matrix("linalg.cholesky", A)
    res = cholesky_ex_result(*apply(CHOLESKY_EX, (A,), {"upper": upper}))
    if check_errors:
        raise_for_info("linalg.cholesky_ex", res.info, not_pd)
    return res


def cholesky(A, *, upper=False) -> Tensor:
    """``linalg.cholesky(A, *, upper=False)``: the lower (or upper) triangular ``L`` with
    ``A = L @ L.mH`` for a symmetric (Hermitian) positive-definite ``A``, reading only the
    triangle it returns. Raises ``LinAlgError`` when ``A`` is not positive-definite."""
    res = cholesky_ex(A, upper=boolean("linalg_cholesky", "upper", upper))
    raise_for_info("linalg.cholesky", res.info, not_pd)
    return res.L


CHOLESKY = defop("cholesky", _cholesky_ex, "CholeskyBackward0", names="self -> result upper")


@export(name="cholesky")
def _cholesky_top(input, upper=False) -> Tensor:
    """``cholesky(input, upper=False)`` (deprecated): :func:`hookgrad.linalg.cholesky`,
    recorded as PyTorch's older ``CholeskyBackward0``."""
    warn_caller("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be "
                "removed in a future PyTorch release.\nL = torch.cholesky(A)\nshould be "
                "replaced with\nL = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, "
                "upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\nThis "
                "transform will produce equivalent results for all valid (symmetric positive "
                "definite) inputs.")
    upper = boolean("cholesky", "upper", upper)
    check_matrix("cholesky", input)
    factor, info = apply(CHOLESKY, (input,), {"upper": upper})
    raise_for_info("cholesky", info, not_pd)
    return factor


def _from_factor(factor, upper):
    """``A = L @ L.mH`` (``U.mH @ U`` when ``upper``) from the factor's triangle; the
    gradient is that of the whole ``factor``, as PyTorch's formula gives it."""
    tri = jnp.triu(factor) if upper else jnp.tril(factor)
    f = factor + jax.lax.stop_gradient(tri - factor)
    fh = jnp.swapaxes(f, -1, -2).conj()
    return fh @ f if upper else f @ fh


def _cholesky_solve(b, factor, upper):
    a = _from_factor(factor, upper)
    batch = jnp.broadcast_shapes(b.shape[:-2], a.shape[:-2])
    return jnp.linalg.solve(jnp.broadcast_to(a, batch + a.shape[-2:]),
                            jnp.broadcast_to(b, batch + b.shape[-2:]))


def _cholesky_inverse(factor, upper):
    return jnp.linalg.inv(_from_factor(factor, upper))


def check_cpu_kernel(kernel, t):
    """PyTorch's error for a type its CPU kernel is not built for (integers, bool)."""
    if not (t.is_floating_point() or t.is_complex()):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{kind(t)}'")


CHOLESKY_SOLVE = defop("cholesky_solve", _cholesky_solve, "CholeskySolveBackward0",
                       names="self input2 -> self input2 result upper")
CHOLESKY_INVERSE = defop("cholesky_inverse", _cholesky_inverse, "CholeskyInverseBackward0",
                         names="self -> self result upper")


@export
def cholesky_solve(input, input2, upper=False) -> Tensor:
    """``cholesky_solve(B, L, upper=False)``: ``X`` with ``A @ X = B`` for ``A = L @ L.mH``
    (``L.mH @ L`` when ``upper``), given its Cholesky factor ``L`` (only its triangle is
    read)."""
    if input.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {input.ndim} "
                           "dimensions instead")
    if input2.ndim < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {input2.ndim} "
                           "dimensions instead")
    if input.dtype != input2.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{kind(input)} and A of type {kind(input2)} instead.")
    check_cpu_kernel("cholesky_solve_cpu", input)
    n, m = input2.shape[-2:]
    if n != m:
        raise RuntimeError(f"A must be batches of square matrices, but they are {n} by {m} "
                           "matrices")
    if input.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
                           f"{n} by {n} but each b matrix is {input.shape[-2]} by "
                           f"{input.shape[-1]}")
    return apply(CHOLESKY_SOLVE, (input, input2), {"upper": bool(upper)})


@export
def cholesky_inverse(input, upper=False) -> Tensor:
    """``cholesky_inverse(L, upper=False)``: the inverse of ``A = L @ L.mH`` (``L.mH @ L``
    when ``upper``) from its Cholesky factor ``L``."""
    check_matrix("cholesky_inverse", input, floating=False)
    check_cpu_kernel("cholesky_inverse_out_cpu", input)
    return apply(CHOLESKY_INVERSE, (input,), {"upper": bool(upper)})


# --------------------------------------------------------------------------- qr


_QR_MODES = ("reduced", "complete", "r")
QR = defop("linalg_qr", lambda a, mode: tuple(jnp.linalg.qr(
    a, mode="complete" if mode == "complete" else "reduced")), "LinalgQrBackward0",
    names="A -> mode Q=result R=result1")
qr_result = return_type("linalg_qr", ["Q", "R"])


def qr(A, mode="reduced"):
    """``linalg.qr(A, mode='reduced')``: ``Q`` with orthonormal columns and upper triangular
    ``R``, ``A = Q @ R``; ``mode`` ``'complete'`` gives a square ``Q``, ``'r'`` an empty
    ``Q``."""
    if mode not in _QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    check_matrix("linalg.qr", A, square=False)
    q, r = apply(QR, (A,), {"mode": mode})
    if mode == "r":
        q = Tensor._wrap(jnp.zeros((0,), A._data.dtype))
    return qr_result(q, r)


qr_top_result = return_type("qr", ["Q", "R"])


@export(name="qr")
def _qr_top(input, some=True):
    """``qr(input, some=True)`` (deprecated): :func:`hookgrad.linalg.qr` with mode
    ``'reduced'`` (``some``) or ``'complete'``."""
    warn_caller("torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a "
                "future PyTorch release.\nThe boolean parameter 'some' has been replaced with "
                "a string parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced "
                "with\nQ, R = torch.linalg.qr(A, 'reduced' if some else 'complete')")
    return qr_top_result(*qr(input, "reduced" if some else "complete"))


# --------------------------------------------------------------------------- svd


def _svd(a, full_matrices, k):
    u, s, vh = jnp.linalg.svd(a, full_matrices=False)
    if full_matrices and a.shape[-1] != a.shape[-2]:
        # NOTE: JAX differentiates only the reduced factors; the completing columns carry
        # no gradient (PyTorch's backward narrows to the reduced ones too)
        uf, _, vhf = jnp.linalg.svd(jax.lax.stop_gradient(a), full_matrices=True)
        u = jnp.concatenate([u, uf[..., k:]], -1)
        vh = jnp.concatenate([vh, vhf[..., k:, :]], -2)
    return u, s, vh


SVD = defop("linalg_svd", _svd, "LinalgSvdBackward0",
            names="A -> full_matrices S=result1 S_sym_argsize_minus_1=k U=result Vh=result2")


def _svdvals(a, k):
    # NOTE: the singular vectors come without gradient: JAX's vjp of the full svd is nan
    # for repeated singular values even when only S gets a cotangent
    u, _, vh = _svd(jax.lax.stop_gradient(a), False, k)
    return u, jnp.linalg.svd(a, compute_uv=False), vh


# svdvals records PyTorch's node: the svd's, its output 1
SVDVALS = defop("linalg_svdvals", _svdvals, "LinalgSvdBackward0",
                names="A -> full_matrices=False S=result1 S_sym_argsize_minus_1=k U=result "
                      "Vh=result2")
svd_result = return_type("linalg_svd", ["U", "S", "Vh"])


def svd(A, full_matrices=True, *, driver=None):
    """``linalg.svd(A, full_matrices=True, *, driver=None)``: ``U``, ``S`` (descending) and
    ``Vh`` with ``A = U @ diag(S) @ Vh``. ``driver`` (CUDA's choice) is accepted and unused."""
    check_matrix("linalg.svd", A, square=False)
    k = min(A.shape[-2:])
    return svd_result(*apply(SVD, (A,), {"full_matrices": bool(full_matrices), "k": k}))


def svdvals(A, *, driver=None) -> Tensor:
    """``linalg.svdvals(A, *, driver=None)``: the singular values of ``A``, descending."""
    check_matrix("linalg.svd", A, square=False)
    return apply(SVDVALS, (A,), {"k": min(A.shape[-2:])})[1]


svd_top_result = return_type("svd", ["U", "S", "V"])


@export(name="svd")
def _svd_top(input, some=True, compute_uv=True):
    """``svd(input, some=True, compute_uv=True)``: :func:`hookgrad.linalg.svd` returning
    ``V`` (``Vh.mT``), reduced when ``some``; without ``compute_uv``, ``U`` and ``V`` are
    square zeros."""
    if input.ndim < 2:
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has "
                           f"{input.ndim} dimensions instead")
    if not compute_uv:
        m, n = input.shape[-2:]
        batch, dtype = tuple(input.shape[:-2]), input._data.dtype
        return svd_top_result(Tensor._wrap(jnp.zeros(batch + (m, m), dtype)), svdvals(input),
                              Tensor._wrap(jnp.zeros(batch + (n, n), dtype)))
    u, s, vh = svd(input, full_matrices=not some)
    return svd_top_result(u, s, vh.mT)


# --------------------------------------------------------------------------- eigh


def _eigh(a, UPLO):
    return jnp.linalg.eigh(read_triangle(a, UPLO == "L"), symmetrize_input=False)


EIGH = defop("linalg_eigh", lambda a, UPLO: tuple(_eigh(a, UPLO)), "LinalgEighBackward0",
             names="A -> eigenvalues=result eigenvectors=result1")
EIGVALSH = defop("linalg_eigvalsh", lambda a, UPLO: _eigh(a, UPLO)[0], "LinalgEighBackward0",
                 extras=lambda a, UPLO: (_eigh(a, UPLO)[1],),
                 names="A -> eigenvalues=result eigenvectors=result1")
eigh_result = return_type("linalg_eigh", ["eigenvalues", "eigenvectors"])


def _check_uplo(UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def eigh(A, UPLO="L"):
    """``linalg.eigh(A, UPLO='L')``: eigenvalues (ascending) and orthonormal eigenvectors
    of a symmetric (Hermitian) ``A``, read from its lower (``'L'``) or upper triangle."""
    check_matrix("linalg.eigh", A, kernel="linalg_eigh_cpu")
    _check_uplo(UPLO)
    return eigh_result(*apply(EIGH, (A,), {"UPLO": UPLO}))


def eigvalsh(A, UPLO="L") -> Tensor:
    """``linalg.eigvalsh(A, UPLO='L')``: the eigenvalues of a symmetric ``A``, ascending."""
    check_matrix("linalg.eigh", A, kernel="linalg_eigh_cpu")
    _check_uplo(UPLO)
    return apply(EIGVALSH, (A,), {"UPLO": UPLO})


# --------------------------------------------------------------------------- eig's checks


def check_eig(fname, A):
    """PyTorch's errors for ``A`` that ``geev`` cannot take; hookgrad's where JAX has no
    ``eig`` (a backend but the CPU and GPUs, where it runs LAPACK on the host)."""
    check_matrix(fname, A, floating=False)
    if not (A.is_floating_point() or A.is_complex()):  # no complex type to compute in
        raise RuntimeError(f"Unknown Complex ScalarType for {kind(A)}")
    if A._data.dtype.itemsize < 4 and not A.is_complex():
        raise NotImplementedError(f"\"linalg_eig_out_cpu\" not implemented for '{kind(A)}'")
    if A.device.type not in ("cpu", "cuda", "meta"):
        raise NotImplementedError(f"{fname}: hookgrad computes eigenvalues of non-Hermitian "
                                  f"matrices on the CPU and CUDA only (JAX has no eig on "
                                  f"'{A.device.type}'); move A to the CPU first")
