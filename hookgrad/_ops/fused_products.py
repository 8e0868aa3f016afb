"""``beta * input + alpha * product`` in one op, for the products ``addmm`` does not
cover: ``addmv`` (matrix-vector), ``addr`` (outer), ``addbmm`` (a batch of matrix
products, summed), with their in-place forms."""
from __future__ import annotations

import jax.numpy as jnp

from .registry import OpCall, defop, variants

ADDMV = defop("addmv", lambda c, m, v, beta, alpha: beta * c + alpha * (m @ v),
              "AddmvBackward0")
ADDR = defop("addr", lambda c, u, v, beta, alpha: beta * c + alpha * jnp.outer(u, v),
             "AddrBackward0")
ADDBMM = defop("addbmm", lambda c, a, b, beta, alpha: beta * c + alpha * jnp.einsum(
    "bij,bjk->ik", a, b), "AddbmmBackward0")


def _dims(name, want, **tensors):
    for arg, t in tensors.items():
        if t.ndim != want:
            raise RuntimeError(f"{name}: Expected {want}-D argument {arg}, but got {t.ndim}-D")


@variants(inplace=True, inplace_function=True)
def addmv(input, mat, vec, *, beta=1, alpha=1) -> OpCall:
    """``addmv(input, mat, vec, *, beta=1, alpha=1)``: ``beta * input + alpha * mat @ vec``
    (``input`` broadcasts to ``mat``'s rows)."""
    if mat.ndim != 2 or vec.ndim != 1 or mat.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({', '.join(map(str, input.shape))}), "
                           f"mat ({'x'.join(map(str, mat.shape))}), vec "
                           f"({', '.join(map(str, vec.shape))})")
    return ADDMV, (input, mat, vec), {"beta": beta, "alpha": alpha}


@variants(inplace=True)
def addr(input, vec1, vec2, *, beta=1, alpha=1) -> OpCall:
    """``addr(input, vec1, vec2, *, beta=1, alpha=1)``: ``beta * input + alpha *
    outer(vec1, vec2)``."""
    _dims("addr", 1, vec1=vec1, vec2=vec2)
    return ADDR, (input, vec1, vec2), {"beta": beta, "alpha": alpha}


@variants(inplace=True)
def addbmm(input, batch1, batch2, *, beta=1, alpha=1) -> OpCall:
    """``addbmm(input, batch1, batch2, *, beta=1, alpha=1)``: ``beta * input + alpha *``
    the sum over the batch of ``batch1[i] @ batch2[i]``."""
    _dims("addbmm", 3, batch1=batch1, batch2=batch2)
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError("batch1 and batch2 must have same number of batches, got "
                           f"{batch1.shape[0]} and {batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x"
                           f"{batch1.shape[2]} and {batch2.shape[1]}x{batch2.shape[2]})")
    return ADDBMM, (input, batch1, batch2), {"beta": beta, "alpha": alpha}
