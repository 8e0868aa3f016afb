"""Products beyond ``linalg``'s matmul family: the fused ``beta * input + alpha * product``
ops (baddbmm, addbmm, addmv, addr), and the ones PyTorch builds from matmul and
reshapes (inner, tensordot, kron)."""
from __future__ import annotations

import jax.numpy as jnp

from .._tensor import Tensor
from .. import _dtype
from .dispatch import apply
from .linalg import check_addmm_dtypes
from .parser_errors import not_a
from .promotion import bad_inplace_dtype
from .registry import OpCall, defop, export, variants
from .shape import UNSAFE_VIEW, size_at


def _scaled(beta, inp, alpha, prod):
    # beta == 0 ignores input, NaNs included, as PyTorch does
    return alpha * prod if beta == 0 else beta * inp + alpha * prod


_BADDBMM = defop("baddbmm", lambda x, a, b, beta, alpha: _scaled(beta, x, alpha, a @ b),
                 "BaddbmmBackward0", {1: (2,), 2: (1,)},
                 names="self batch1 batch2 -> alpha batch1 batch2 beta")
_ADDBMM = defop("addbmm", lambda x, a, b, beta, alpha: _scaled(beta, x, alpha,
                                                               jnp.sum(a @ b, 0)),
                "AddbmmBackward0", {1: (2,), 2: (1,)},
                names="self batch1 batch2 -> alpha batch1 batch1_sym_argsize_0=batch1_dim "
                      "batch1_sym_argsize_1=batch1_dim batch2 batch2_sym_argsize_2=batch2_dim "
                      "beta")
_ADDMV = defop("addmv", lambda x, m, v, beta, alpha: _scaled(beta, x, alpha, m @ v),
               "AddmvBackward0", {1: (2,), 2: (1,)}, names="self mat vec -> alpha beta mat vec")
_ADDR = defop("addr", lambda x, u, v, beta, alpha: _scaled(beta, x, alpha, jnp.outer(u, v)),
              "AddrBackward0", {1: (2,), 2: (1,)}, names="self vec1 vec2 -> alpha beta vec1 vec2")


def _need(t, nd, message):
    if t.ndim != nd:
        raise RuntimeError(message)


def _baddbmm_inplace(self, batch1, batch2, *, beta=1, alpha=1):
    # ``baddbmm_``'s result takes batch2's dtype: checked after input against batch1
    d, d2 = self._arr.dtype, batch2._arr.dtype
    if d == batch1._arr.dtype and d2 != d and batch1.ndim == 3 == batch2.ndim:
        raise bad_inplace_dtype(d, d2)


@variants(inplace=True, inplace_check=_baddbmm_inplace)
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1) -> OpCall:
    """``baddbmm(input, batch1, batch2, *, beta=1, alpha=1)``: ``beta * input + alpha *
    (batch1 @ batch2)``, per batch (``input`` broadcast)."""
    _need(batch1, 3, "batch1 must be a 3D tensor")
    _need(batch2, 3, "batch2 must be a 3D tensor")
    d, d1, d2 = input._arr.dtype, batch1._arr.dtype, batch2._arr.dtype
    if d != d1:  # PyTorch compares input with batch1 only, then batch1 with batch2
        raise RuntimeError(f"Input dtypes must be the same, got: input {_dtype.c_type_name(d)}, "
                           f"batch1: {_dtype.c_type_name(d1)}, batch2: {_dtype.c_type_name(d2)}")
    if d1 != d2:
        raise RuntimeError(f"expected scalar type {_dtype.torch_kind(d1)} but found "
                           f"{_dtype.torch_kind(d2)}")
    return _BADDBMM, (input, batch1, batch2), {"beta": beta, "alpha": alpha}


@variants(inplace=True)
def addbmm(input, batch1, batch2, *, beta=1, alpha=1) -> OpCall:
    """``addbmm(input, batch1, batch2, *, beta=1, alpha=1)``: ``beta * input + alpha *``
    the sum over the batch of ``batch1 @ batch2``."""
    _need(batch1, 3, "batch1 must be a 3D tensor")
    _need(batch2, 3, "batch2 must be a 3D tensor")
    check_addmm_dtypes(input, batch1, batch2)
    return _ADDBMM, (input, batch1, batch2), {"beta": beta, "alpha": alpha}


@variants(inplace=True, inplace_function=True)
def addmv(input, mat, vec, *, beta=1, alpha=1) -> OpCall:
    """``addmv(input, mat, vec, *, beta=1, alpha=1)``: ``beta * input + alpha * (mat @
    vec)``."""
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    dtypes = (input._arr.dtype, mat._arr.dtype, vec._arr.dtype)
    if not dtypes[0] == dtypes[1] == dtypes[2]:
        k = [_dtype.torch_kind(d) for d in dtypes]
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {k[0]}, "
                           f"{k[1]}, and {k[2]}")
    return _ADDMV, (input, mat, vec), {"beta": beta, "alpha": alpha}


@variants(inplace=True)
def addr(input, vec1, vec2, *, beta=1, alpha=1) -> OpCall:
    """``addr(input, vec1, vec2, *, beta=1, alpha=1)``: ``beta * input + alpha *
    outer(vec1, vec2)``."""
    _need(vec1, 1, f"addr: Expected 1-D argument vec1, but got {vec1.ndim}-D")
    _need(vec2, 1, f"addr: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    return _ADDR, (input, vec1, vec2), {"beta": beta, "alpha": alpha}


@export(method=False)
def tensordot(a, b, dims=2, out=None) -> Tensor:
    """``tensordot(a, b, dims=2)``: the sum of products over the last ``dims`` dimensions
    of ``a`` and the first ``dims`` of ``b``, or over the pairs of dimensions given as two
    lists."""
    if a._arr.dtype != b._arr.dtype:  # its mm promotes nothing
        raise RuntimeError("both inputs should have same dtype")
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    for t, ds in ((a, da), (b, db)):
        for d in ds:
            size_at(t, d)  # PyTorch's error for a dim out of range, a 0-d one's too
    da = [d % a.ndim for d in da]
    db = [d % b.ndim for d in db]
    free_a = [d for d in range(a.ndim) if d not in da]
    free_b = [d for d in range(b.ndim) if d not in db]
    # PyTorch's: permute, reshape to matrices, mm, reshape back
    k = 1
    for d in da:
        k *= a.shape[d]
    ma = a.permute(*free_a, *da).reshape(-1, k)
    mb = b.permute(*db, *free_b).reshape(k, -1)
    return (ma @ mb).reshape(*(a.shape[d] for d in free_a), *(b.shape[d] for d in free_b))


@export
def inner(input, other) -> Tensor:
    """``inner(input, other)``: the sum of products over the last dimensions (a 0-d
    operand multiplies)."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]))


@export
def kron(input, other) -> Tensor:
    """``kron(input, other)``: the Kronecker product (``input``'s blocks scaled copies of
    ``other``)."""
    if not isinstance(other, Tensor):
        raise not_a("kron", "other", other, "Tensor")
    nd = max(input.ndim, other.ndim)
    a = input.reshape(*(1,) * (nd - input.ndim), *input.shape)
    b = other.reshape(*(1,) * (nd - other.ndim), *other.shape)
    inter = [s for pair in zip(a.shape, (1,) * nd) for s in pair]
    a = a.reshape(*inter)
    b = b.reshape(*(s for pair in zip((1,) * nd, b.shape) for s in pair))
    # PyTorch's last step is an _unsafe_view of the product
    shape = tuple(x * y for x, y in zip(a.shape[::2], b.shape[1::2]))
    return apply(UNSAFE_VIEW, (a * b,), {"shape": shape})
