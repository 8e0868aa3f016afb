"""``pdist``: the p-norm distances between all pairs of rows, behind
``hookgrad.nn.functional.pdist`` (and ``hookgrad.pdist``)."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .. import _missing
from .._tensor import Tensor
from .dispatch import apply
from .nn_conv import _Const
from .registry import defop, export


def _pdist(x, pairs, p):
    i, j = (np.asarray(a) for a in pairs)
    d = jnp.abs(x[i] - x[j])
    if p == 0:
        return jnp.sum(d != 0, axis=-1).astype(x.dtype)
    # a zero distance has gradient 0 (PyTorch's), not the NaN of d/dx |x|^p at 0 ** (1/p)
    s = jnp.sum(d ** p, axis=-1)
    zero = s == 0
    return jnp.where(zero, 0.0, jnp.where(zero, 1.0, s) ** (1.0 / p)).astype(x.dtype)


PDIST = defop("pdist", _pdist, "PdistBackward0")


@export(method=False)
def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm distance between each pair of rows of ``input`` ``(N, M)``: the
    upper triangle (``i < j``) of the distance matrix, row by row, ``N * (N - 1) / 2``
    values."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    if p == float("inf") or 0 < p < 1:
        # PyTorch's gradients there (all tied maxima; 0 at equal coordinates) are not
        # what JAX's derivative of this forward gives
        _missing.not_implemented(f"torch.nn.functional.pdist with p={p}")()
    i, j = np.triu_indices(input.shape[0], 1)
    return apply(PDIST, (input,), {"pairs": (_Const(i.astype(np.int32)),
                                             _Const(j.astype(np.int32))), "p": float(p)})
