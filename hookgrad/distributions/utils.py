"""Helpers of ``torch.distributions.utils``: parameter broadcasting, probability/logit
conversions, ``lazy_property`` and the packing of a lower triangle into a vector."""
from __future__ import annotations

import functools
import math

import jax.numpy as jnp
import numpy as np

from .._arguments import own_init
from .._tensor import Tensor
from .distribution import broadcast_all

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits",
           "lazy_property", "tril_matrix_to_vec", "vec_to_tril_matrix", "euler_constant"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni


def _eps(t: Tensor) -> float:
    return float(jnp.finfo(t._data.dtype).eps)


def _delegated(owner: str, name: str, returns: type = Tensor) -> property:
    """A read-only property answering ``self.<owner>.<name>``: what a wrapping distribution
    or transform reports of the one it wraps (``Independent.mean``, ``InverseGamma.rate``)."""
    def get(self):
        return getattr(getattr(self, owner), name)
    get.__name__ = get.__qualname__ = name
    get.__annotations__ = {"return": returns}
    return property(get)


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` clamped to ``[eps, 1 - eps]`` (``eps`` of its dtype)."""
    eps = _eps(probs)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Log-odds (``is_binary``) or log-probabilities of clamped ``probs``."""
    p = clamp_probs(probs)
    return p.log() - (-p).log1p() if is_binary else p.log()


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from log-odds (``is_binary``: a sigmoid) or from unnormalised
    log-probabilities over the last dimension (a softmax)."""
    return logits.sigmoid() if is_binary else logits.softmax(-1)


@own_init
class lazy_property(functools.cached_property):
    """A property computed on first access and then stored on the instance (one of a
    distribution's two parametrisations: ``probs`` from ``logits`` or back)."""


def _tril_positions(n: int, diag: int) -> np.ndarray:
    rows, cols = np.tril_indices(n, k=diag)
    return rows * n + cols


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The entries on and below diagonal ``diag`` of the last two dimensions of ``mat``,
    row by row, as one last dimension."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    from .._factory import tensor
    flat = mat.reshape(tuple(mat.shape[:-2]) + (-1,))
    return flat.index_select(-1, tensor(_tril_positions(n, diag).tolist()))


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The square matrix whose entries on and below diagonal ``diag`` are ``vec``'s last
    dimension, row by row, and zero above (the inverse of ``tril_matrix_to_vec``)."""
    size = vec.shape[-1]
    b = 1 + 2 * diag
    n = (-b + math.sqrt(b * b + 8 * size + 4 * abs(diag) * (diag + 1))) / 2
    if round(n) - n > _eps(vec):
        raise ValueError(f"The size of last dimension is {size} which cannot be expressed "
                         "as the lower triangular part of a square D x D matrix.")
    n = round(n)
    from .._factory import tensor, zeros
    # gather from vec plus one trailing zero: positions off the triangle read the zero
    index = np.full(n * n, size)
    index[_tril_positions(n, diag)] = np.arange(size)
    from .._ops.stacking import cat
    padded = cat([vec, zeros(tuple(vec.shape[:-1]) + (1,), dtype=vec.dtype)], -1)
    return padded.index_select(-1, tensor(index.tolist())).reshape(
        tuple(vec.shape[:-1]) + (n, n))


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
