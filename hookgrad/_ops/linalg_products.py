"""Products of ``torch.linalg``: cross, vecdot (and ``vdot``), matrix_power, matrix_exp,
multi_dot.

``cross`` and ``vdot`` are rows; ``vecdot``, ``matrix_power`` and ``multi_dot`` are made of
other ops (mul and sum, matmul, mm and views), recorded as PyTorch records them.
"""
from __future__ import annotations

import jax.numpy as jnp
import jax.scipy.linalg as jsl

from .._tensor import Tensor
from .dispatch import apply
from .linalg import matmul, mm
from .linalg_decomp import check_matrix, kind, warn_caller
from .linalg_solve import inv
from .parser_errors import not_a
from .registry import FUNCTIONS, defop, export, shape_broadcast_error
from .shape import wrap_dim

CROSS = defop("linalg_cross", lambda a, b, dim: jnp.cross(a, b, axis=dim),
              "LinalgCrossBackward0", names="self other -> other self dim")
VDOT = defop("vdot", lambda a, b: jnp.vdot(a, b), "VdotBackward0",
             names="self other -> self other")


# --------------------------------------------------------------------------- cross


def _cross(fname, input, other, dim):
    if input.ndim != other.ndim:
        raise RuntimeError(f"{fname}: inputs must have the same number of dimensions.")
    err = shape_broadcast_error(tuple(input.shape), tuple(other.shape))
    if err is not None:
        raise err
    ndim = max(input.ndim, other.ndim)
    wrap_dim(dim, ndim)
    shape = jnp.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    if shape[dim] != 3 or input.shape[dim] != other.shape[dim]:
        raise RuntimeError(f"{fname}: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[dim]} and {other.shape[dim]}")
    return apply(CROSS, (input, other), {"dim": int(dim)})


def cross(input, other, *, dim=-1) -> Tensor:
    """``linalg.cross(input, other, *, dim=-1)``: the cross product of 3-vectors along
    ``dim``, broadcasting the other dimensions."""
    return _cross("linalg.cross", input, other, dim)


@export(name="cross")
def _cross_top(input, other, dim=None) -> Tensor:
    """``cross(input, other, dim=None)``: :func:`hookgrad.linalg.cross`; without ``dim``,
    along the first dimension of size 3 (deprecated, with a warning)."""
    if dim is None:
        warn_caller("Using torch.cross without specifying the dim arg is deprecated.\nPlease "
                    "either pass the dim explicitly or simply use torch.linalg.cross.\nThe "
                    "default value of dim will change to agree with that of linalg.cross in a "
                    "future release.")
        shape = jnp.broadcast_shapes(tuple(input.shape), tuple(other.shape))
        dim = next((d for d, n in enumerate(shape) if n == 3), -1)
    return _cross("linalg.cross", input, other, dim)


# --------------------------------------------------------------------------- vecdot, vdot


@export
def vdot(input, other) -> Tensor:
    """``vdot(input, other)``: the dot product of two 1-d tensors, ``input`` conjugated."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           "tensors")
    if input.dtype != other.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{kind(input)} and {kind(other)}")
    if input.shape[0] != other.shape[0]:
        n, m = input.shape[0], other.shape[0]
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to "
                           f"have the same number of elements, but got {n} and {m} elements "
                           "respectively")
    return apply(VDOT, (input, other))


def vecdot(x, y, *, dim=-1) -> Tensor:
    """``linalg.vecdot(x, y, *, dim=-1)``: ``sum(x.conj() * y, dim)``, broadcasting."""
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {kind(x)} and y of type {kind(y)} instead")
    if x.ndim == 1 and y.ndim == 1:
        wrap_dim(dim, 1)
        return vdot(x, y)
    if x.is_complex():
        raise NotImplementedError("hookgrad does not implement torch.linalg.vecdot for "
                                  "complex tensors yet")
    return FUNCTIONS["sum"](FUNCTIONS["mul"](x, y), dim)


# --------------------------------------------------------------------------- matrix_power


def _matrix_power(fname, A, n):
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{fname}(): argument 'n' (position 2) must be int, not "
                        f"{type(n).__name__}")
    check_matrix("linalg.matrix_power", A, floating=False)
    if n < 0:  # powers of the inverse (the inverse itself for -1, not a copy)
        A, n = inv(A), -n
        if n == 1:
            return A
    if n == 0:
        eye = jnp.broadcast_to(jnp.eye(A.shape[-1], dtype=A._data.dtype), tuple(A.shape))
        return A.clone().copy_(Tensor._wrap(eye))
    if n == 1:
        return A.clone()
    if n == 2:
        return matmul(A, A)
    if n == 3:
        return matmul(matmul(A, A), A)
    z = result = None  # square-and-multiply over the bits of n, lowest first
    while n:
        z = A if z is None else matmul(z, z)
        if n & 1:
            result = z if result is None else matmul(result, z)
        n >>= 1
    return result


def matrix_power(A, n) -> Tensor:
    """``linalg.matrix_power(A, n)``: ``A`` multiplied with itself ``n`` times (by repeated
    squaring); the identity for ``n = 0``, powers of the inverse for ``n < 0``."""
    return _matrix_power("linalg_matrix_power", A, n)


@export(name="matrix_power")
def _matrix_power_top(input, n) -> Tensor:
    """``matrix_power(input, n)``: :func:`hookgrad.linalg.matrix_power`."""
    return _matrix_power("matrix_power", input, n)


MATRIX_EXP = defop("linalg_matrix_exp", jsl.expm, "LinalgMatrixExpBackward0",
                   names="self -> self")


@export
def matrix_exp(A) -> Tensor:
    """``linalg.matrix_exp(A)``: the matrix exponential ``sum(A^k / k!)`` of a square ``A``
    (or of each in a batch)."""
    check_matrix("linalg.matrix_exp", A)
    return apply(MATRIX_EXP, (A,))


# --------------------------------------------------------------------------- multi_dot


def _check_multi_dot(tensors):
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    for i, t in enumerate(tensors):
        if i == 0 and t.ndim not in (1, 2):
            raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got "
                               f"{t.ndim}D")
        if i == n - 1 and t.ndim not in (1, 2):
            raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got "
                               f"{t.ndim}D")
        if 0 < i < n - 1 and t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but "
                               f"tensor 0 is {kind(tensors[0])} and tensor {i} is {kind(t)}")


def _chain_order(dims):
    """The matrix-chain split table (cheapest parenthesization, first split on ties) for
    matrices of shapes ``dims[i] x dims[i + 1]``."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(mats, split, i, j):
    if i == j:
        return mats[i]
    k = split[i][j]
    return mm(_chain(mats, split, i, k), _chain(mats, split, k + 1, j))


def multi_dot(tensors) -> Tensor:
    """``linalg.multi_dot(tensors)``: the product of two or more matrices in the order of
    fewest multiplications; the first and last may be vectors (as rows and columns)."""
    tensors = list(tensors)
    _check_multi_dot(tensors)
    first, last = tensors[0], tensors[-1]
    mats = [first.unsqueeze(0) if first.ndim == 1 else first, *tensors[1:-1],
            last.unsqueeze(-1) if last.ndim == 1 else last]
    for i in range(1, len(mats)):
        a, b = mats[i - 1], mats[i]
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes "
                               f"{list(a.shape)} and {list(b.shape)} cannot be multiplied")
    dims = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    out = _chain(mats, _chain_order(dims), 0, len(mats) - 1)
    shape = tuple(first.shape[:1] if first.ndim == 2 else ()) + tuple(
        last.shape[1:] if last.ndim == 2 else ())
    return out.view(shape)


# --------------------------------------------------------------------------- vander


def vander(x, *, N=None) -> Tensor:
    """``linalg.vander(x, *, N=None)``: the powers ``x**0 .. x**(N-1)`` of each entry of
    ``x`` along a new last dimension (``N`` defaults to ``x.shape[-1]``). Recorded as
    PyTorch's: a row of ones concatenated to a cumprod of ``x`` expanded (CatBackward0 over
    CumprodBackward0), so an integer ``x`` gives int64 as cumprod does."""
    if N is not None and (N.__class__ is bool or not isinstance(N, int)):
        raise not_a("linalg_vander", "N", N, position=None)
    if x.dtype.is_floating_point and x.dtype.itemsize < 4 or x.dtype.name == "bool":
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {kind(x)}")
    shape = list(x.shape)
    n = N if N is not None else (shape[-1] if shape else 0)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = FUNCTIONS["cumprod"](x.unsqueeze(-1).expand(*shape, n - 1), -1)
    ones = x.new_ones((*shape, 1))
    return FUNCTIONS["cat"]([ones, powers], -1)
