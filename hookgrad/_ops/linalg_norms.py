"""Norms: ``torch.linalg``'s vector_norm, matrix_norm and norm, and ``torch.norm``.

``vector_norm`` is the ``LinalgVectorNormBackward0`` row that ``hookgrad.norm`` records; a
matrix norm is made of it, ``svdvals``, ``amax``/``amin`` and ``sum``, as PyTorch makes it.
"""
from __future__ import annotations

import math
import numbers

from .._tensor import Tensor
from .dispatch import apply
from .linalg_decomp import check_floating, check_matrix, svdvals
from .linalg_solve import inv_ex
from .parser_errors import not_a
from .reduction import NORM, _dims
from .reduction_args import NOT_INT, norm_dim_refused
from .registry import FUNCTIONS, export, with_out

_F = FUNCTIONS


def _cast(x, dtype):
    return x if dtype is None else x.to(dtype)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None) -> Tensor:
    """``linalg.vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None)``: the
    ``ord``-norm of ``x`` over ``dim`` (all elements by default) as a vector: ``inf`` the
    largest absolute value, ``0`` the count of non-zeros."""
    if isinstance(ord, bool) or not isinstance(ord, numbers.Number):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, "
                        f"not {type(ord).__name__}")
    if dim is not None and dim.__class__ is not int:
        _check_dim_type(dim)
        if isinstance(dim, (tuple, list)) and not dim:
            dim = None  # an empty dim list reduces over every dim, as PyTorch's
    check_floating("linalg.vector_norm", x)
    x = _cast(x, dtype)
    return apply(NORM, (x,), {"p": ord, "dim": _dims(dim, x.ndim), "keepdim": bool(keepdim)})


def _check_dim_type(dim):
    """PyTorch's parser takes ``dim`` as an int or a tuple (or list) of ints, never a bool,
    float or string; it reads a sequence's first element's type only. The message is the
    keyword form's (no position), as ``dim`` is usually named."""
    first = dim[0] if isinstance(dim, (list, tuple)) and dim else dim
    if first.__class__ is bool or isinstance(first, (float, str)):
        raise not_a("linalg_vector_norm", "dim", dim, "tuple of ints", None)


def _matrix_dims(A, dim):
    dim = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(str(d) for d in dim)}")
    d = _dims(dim, A.ndim)
    if d[0] == d[1]:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d[0]}, {d[1]})")
    return d


def _spectral(A, dim, keepdim, reduce):
    """``reduce`` (amax, amin, sum) of the singular values of the matrices in ``dim``,
    which are moved last (a permutation, recorded even when it is the identity)."""
    perm = [d for d in range(A.ndim) if d not in dim] + list(dim)
    s = svdvals(A.permute(perm))
    out = _F[reduce](s, -1, keepdim)
    if keepdim:
        back = sorted(range(A.ndim), key=perm.__getitem__)
        out = out.unsqueeze(-1).permute(back)
    return out


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None) -> Tensor:
    """``linalg.matrix_norm(A, ord='fro', dim=(-2, -1), keepdim=False, *, dtype=None)``:
    the ``ord`` norm of the matrices in ``dim``: ``'fro'``, ``'nuc'`` (sum of singular
    values), ``2``/``-2`` (largest/smallest singular value), ``1``/``-1`` (max/min column
    sum of absolute values), ``inf``/``-inf`` (max/min row sum)."""
    if ord.__class__ is str and ord not in ("fro", "nuc"):  # PyTorch checks a str first
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    check_floating("linalg.matrix_norm", A)
    d = _matrix_dims(A, dim)
    A = _cast(A, dtype)
    if ord == "fro":
        return apply(NORM, (A,), {"p": 2, "dim": d, "keepdim": bool(keepdim)})
    if ord == "nuc":
        return _spectral(A, d, keepdim, "sum")
    if isinstance(ord, numbers.Number) and abs(ord) == 2:
        return _spectral(A, d, keepdim, "amax" if ord > 0 else "amin")
    if isinstance(ord, numbers.Number) and abs(ord) in (1, float("inf")):
        # the absolute sums along one dim (columns for 1, rows for inf), then their max/min
        summed, other = (d[0], d[1]) if abs(ord) == 1 else (d[1], d[0])
        if not keepdim and summed < other:
            other -= 1
        sums = apply(NORM, (A,), {"p": 1, "dim": summed, "keepdim": bool(keepdim)})
        return _F["amax" if ord > 0 else "amin"](sums, other, keepdim)
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None) -> Tensor:
    """``linalg.norm(A, ord=None, dim=None, keepdim=False, *, dtype=None)``: a vector norm
    (``dim`` an int, or ``A`` 1-D) or a matrix norm (``dim`` a 2-tuple, or ``A`` 2-D); with
    neither ``ord`` nor ``dim``, the 2-norm of all elements."""
    if dim is not None:
        dim = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
        if len(dim) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or "
                               f"2. Got {list(dim)}")
    elif ord is not None and A.ndim not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                           f"be 1D or 2D. Got {A.ndim}D.")
    if ord is not None and (dim is not None and len(dim) == 2 or dim is None and A.ndim == 2):
        return matrix_norm(A, ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    if isinstance(ord, str):  # a matrix order for a vector
        return matrix_norm(A, ord, dim or (-2, -1), keepdim, dtype=dtype)
    return vector_norm(A, 2.0 if ord is None else ord, dim, keepdim, dtype=dtype)


@export(name="norm")
def torch_norm(input, p="fro", dim=None, keepdim=False, dtype=None) -> Tensor:
    """``norm(input, p='fro', dim=None, keepdim=False, dtype=None)``: the vector p-norm over
    ``dim`` (all elements by default); its gradient is 0 where the norm is 0. ``'nuc'`` is
    the matrix norm over ``dim`` (every dimension by default: two of them)."""
    if p is None:
        p = "fro"
    if isinstance(p, str) and p != "fro":
        # PyTorch hands a str order to its matrix norm, which refuses all but 'nuc'
        dims = tuple(range(input.ndim)) if dim is None else dim
        return matrix_norm(input, p, dims, keepdim, dtype=dtype)
    if dim.__class__ in NOT_INT or dim.__class__ in (tuple, list) and dim and \
            dim[0].__class__ in NOT_INT:
        raise norm_dim_refused(p, dim)
    x = input if dtype is None else input.to(dtype)
    check_floating("linalg.vector_norm", x)  # PyTorch's norm is its vector_norm
    return apply(NORM, (x,), {"p": p, "dim": _dims(dim, x.ndim), "keepdim": keepdim})


# --------------------------------------------------------------------------- cond


def _cond_order_name(p):
    """How PyTorch names a numeric order in its square-matrix error (C++'s to_string)."""
    if isinstance(p, numbers.Integral):
        return str(int(p))
    return f"{p:f}" if math.isfinite(p) else ("inf" if p > 0 else "-inf")


def _cond_order_refused(p):
    if p.__class__ is str:
        return p not in ("fro", "nuc")
    return abs(p) not in (1, 2, math.inf)


@with_out
def cond(A, p=None) -> Tensor:
    """``linalg.cond(A, p=None, *, out=None)``: the condition number of ``A`` in the
    ``p`` norm (2 by default): the ratio of extreme singular values for ``p`` of 2/-2,
    ``matrix_norm(A, p) * matrix_norm(inv(A), p)`` otherwise (inf for a singular ``A``),
    composed of the ops PyTorch records; 0 for empty matrices. Checked in PyTorch's order
    (a str order's squareness before the order, a number's after)."""
    if p is None:
        p = 2
    elif not isinstance(p, (str, numbers.Number)):
        raise not_a("linalg_cond", "p", p, "Number", None)
    if p.__class__ is str:
        check_matrix(f"linalg.cond(ord={p})", A, floating=False)
    elif A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if _cond_order_refused(p):
        shown = p if p.__class__ is str else f"{float(p):g}"
        raise RuntimeError(f"linalg.cond got an invalid norm type: {shown}")
    if not A.numel():
        return A.new_zeros(tuple(A.shape[:-2]), dtype=A.dtype.to_real())
    if p.__class__ is not str and abs(p) != 2:
        check_matrix(f"linalg.cond(ord={_cond_order_name(p)})", A, floating=False)
    return _cond(A, p)


def _cond(A, p):
    if p == "nuc" or p.__class__ is not str and abs(p) == 2:
        s = svdvals(A)
        if p == "nuc":
            return s.sum(-1) * s.reciprocal().sum(-1)
        big, small = s.narrow(-1, 0, 1), s.narrow(-1, s.shape[-1] - 1, 1)
        return (small / big if p < 0 else big / small).squeeze(-1)
    inverse, info = inv_ex(A)
    inverse = inverse.masked_fill(info.unsqueeze(-1).unsqueeze(-1) > 0, math.inf)
    prod = matrix_norm(A, p) * matrix_norm(inverse, p)
    return prod.nan_to_num(math.inf, math.inf, -math.inf)  # 0 * inf: inf, as NumPy's
