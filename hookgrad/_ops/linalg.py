"""Matrix products: matmul and its named forms, einsum, outer, dot."""
from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor, _set_version
from .._autograd import grad_mode
from .dispatch import apply
from .promotion import same_dtypes
from .registry import FUNCTIONS, defop, export, shape_broadcast_error
from .layout import contiguous
from . import einsum_steps
from .shape import (UNSAFE_VIEW, expand, expanded_shape, reshape, size_at,
                    squeeze, t, transpose, unsqueeze)

_gm = grad_mode._state

_PRODUCT_SAVE = {0: (1,), 1: (0,)}  # each operand's gradient needs the other one




def _mm_error(rows, k, k2, cols):
    return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and {k2}x{cols})")


def _mv_error(rows, k, k2):
    return RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{k}), vec ({k2})")


def _check_broadcast(sa, sb):
    err = shape_broadcast_error(sa, sb)
    if err is not None:
        raise err


def _check_matmul(a, b):
    _check_matmul_shapes(tuple(a.shape), tuple(b.shape), a.requires_grad)
    _check_kernel_dtype(_matmul_kernel(a.ndim, b.ndim, a.requires_grad), a)
    if a._arr.dtype != b._arr.dtype:
        raise _dtypes_error(_matmul_kernel(a.ndim, b.ndim, a.requires_grad), a, b)


def _dtypes_error(kernel, a, b):
    """PyTorch's error for a product of two dtypes, worded by the ``kernel`` it runs:
    nothing is promoted."""
    da, db = a._arr.dtype, b._arr.dtype
    if kernel == "dot":
        return RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                            f"{_dtype.torch_kind(da)} and {_dtype.torch_kind(db)}")
    if kernel == "bmm":
        return RuntimeError(f"expected scalar type {_dtype.torch_kind(da)} but found "
                            f"{_dtype.torch_kind(db)}")
    if kernel == "addmv_impl_cpu":  # its first: the result, made in the promoted dtype
        kinds = [_dtype.torch_kind(d) for d in (np.promote_types(da, db), da, db)]
        return RuntimeError(f"addmv input tensors must have the same dtype, but got "
                            f"{kinds[0]}, {kinds[1]}, and {kinds[2]}")
    return RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                        f"{_dtype.c_type_name(da)} != {_dtype.c_type_name(db)}")


def _matmul_kernel(na, nb, a_requires_grad):
    """The name of the kernel PyTorch's matmul runs for these ranks, as its dtype errors
    name it."""
    if na == nb == 1:
        return "dot"
    if nb == 1:
        return "addmv_impl_cpu"
    if nb == 2 or na <= 2 and a_requires_grad:  # batches folded into one mm
        return "addmm_impl_cpu_"
    return "bmm"


def _check_kernel_dtype(kernel, a):
    if a.dtype.name == "bool":  # PyTorch's CPU products have no bool kernels
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _check_matmul_shapes(sa, sb, a_requires_grad):
    """PyTorch's error for ``a @ b`` with shapes that do not fit, worded after the kernel
    its matmul dispatches to (dot, mv, mm on folded batches, bmm): checked on static shapes
    before JAX sees them, so the same error comes eagerly and inside hookgrad.compile."""
    if not sa or not sb:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{len(sa)}D and {len(sb)}D")
    k = sa[-1]
    if len(sa) == 1 and len(sb) == 1:
        if k != sb[0]:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{k}] and src "
                               f"[{sb[0]}] to have the same number of elements, but got "
                               f"{k} and {sb[0]} elements respectively")
        return
    rows = math.prod(sa[:-1])
    if len(sb) <= 2:  # mv / mm, the batch dimensions of ``a`` folded into its rows
        if len(sb) == 1 and k != sb[0]:
            raise _mv_error(rows, k, sb[0])
        if len(sb) == 2 and k != sb[0]:
            raise _mm_error(rows, k, *sb)
        return
    m = sb[-2]
    if len(sa) <= 2 and a_requires_grad:
        # NOTE: PyTorch then folds the transposed batch b.mT into rows, a on the right
        if k != m:
            rows_t = math.prod(sb[:-2]) * sb[-1]
            raise _mv_error(rows_t, m, k) if len(sa) == 1 else _mm_error(rows_t, m, k, sa[0])
        return
    batch_a, batch_b = sa[:-2], sb[:-2]
    _check_broadcast(batch_a, batch_b)
    if k != m:
        n = math.prod(np.broadcast_shapes(batch_a, batch_b))
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{n}, {k}] but got: [{n}, {m}].")


def _number(x):
    return x.item() if isinstance(x, Tensor) else x


def check_addmm_dtypes(input, mat1, mat2):
    """PyTorch's addmm (and addbmm, which runs it) takes one dtype: ``self`` is compared
    with ``mat2`` first, then ``mat1`` with ``mat2``; nothing is promoted."""
    for a, what in ((input, "self"), (mat1, "mat1")):
        same_dtypes(a, mat2, what + " and mat2 must have the same dtype, but got {} and {}")


def _check_addmm(input, mat1, mat2):
    a1, a2 = mat1._arr, mat2._arr
    s1, s2 = a1.shape, a2.shape
    if len(s1) == 2 and len(s2) == 2 and s1[1] == s2[0] and \
            input._arr.shape in ((s2[1],), (s1[0], s2[1])) and \
            input._arr.dtype == a1.dtype == a2.dtype:
        return  # a layer's usual shapes fit: no error to word (GPT-2's Conv1D, every call)
    check_addmm_dtypes(input, mat1, mat2)
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise _mm_error(*mat1.shape, *mat2.shape)
    expanded_shape(input, (mat1.shape[0], mat2.shape[1]))


def linear_folds(input, bias):
    """Whether PyTorch's ``linear`` with a bias runs ``addmm`` on the input's rows (a
    matrix, or any other contiguous input with a bias of at most one dimension), rather
    than ``matmul`` then an in-place add."""
    return len(input._arr.shape) == 2 or len(bias._arr.shape) <= 1 and input.is_contiguous()


def check_linear(input, weight, bias):
    """PyTorch's errors for ``linear(input, weight, bias)`` with shapes that do not fit
    (by :func:`linear_folds`: addmm's on the input's rows, else matmul's, then add's)."""
    si, sw = input._arr.shape, weight._arr.shape
    if len(sw) == 2 and si and si[-1] == sw[1] and (bias is None or bias._arr.shape == sw[:1]) \
            and input._arr.dtype.kind == weight._arr.dtype.kind:
        return  # a layer's usual shapes fit either way: no error to word (every Linear call)
    if input._arr.dtype.kind != weight._arr.dtype.kind:
        # NOTE: an integer input and a floating weight (PyTorch's mm refuses any two
        # dtypes; float64 inputs made by JAX's promotion in a functional call still run)
        raise _dtypes_error("mm", input, weight)
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are "
                           f"{input.ndim}D and {weight.ndim}D")
    if weight.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{weight.ndim}D")
    if bias is not None and linear_folds(input, bias):
        rows = math.prod(input.shape[:-1])
        if weight.ndim != 2:
            raise RuntimeError("mat2 must be a matrix, got 1-D tensor")
        if input.shape[-1] != weight.shape[1]:
            raise _mm_error(rows, input.shape[-1], weight.shape[1], weight.shape[0])
        expanded_shape(bias, (rows, weight.shape[0]))
        return
    sw = tuple(weight.shape[::-1])  # weight.t()
    _check_matmul_shapes(tuple(input.shape), sw, input.requires_grad)
    if bias is not None:  # added in place to matmul's result: it must keep that shape
        out = tuple(input.shape[:-1]) + sw[1:]
        _check_broadcast(out, tuple(bias.shape))
        full = tuple(jnp.broadcast_shapes(out, tuple(bias.shape)))  # sizes may be symbolic
        if full != out:
            raise RuntimeError(f"output with shape {list(out)} doesn't match the broadcast "
                               f"shape {list(full)}")


@export
def matmul(input, other) -> Tensor:
    """``matmul(input, other)`` (``@``): dot, matrix-vector, matrix-matrix or batched
    product by the operands' ranks, broadcasting batch dimensions.

    When it records, the graph is PyTorch's (``mm``/``mv``/``bmm`` between the views it
    folds batches with, e.g. ``UnsafeViewBackward0(MmBackward0(ViewBackward0(a), b))``);
    otherwise one fused JAX product runs.
    """
    _check_matmul(input, other)
    if _gm.enabled and (input._requires_grad or other._requires_grad):
        return matmul_graph(input, other)
    out = apply(MATMUL, (input, other))
    return squeezed_in_place(out) if input.ndim == 1 and other.ndim == 2 else out


def squeezed_in_place(out):
    """``out`` at version 1: PyTorch's vector-matrix product squeezes its ``mm`` result in
    place (``squeeze_``), which a later in-place op's saved-version check sees."""
    _set_version(out, 1)
    return out


# what PyTorch saves, by its names, in its pack order (``saved_names``)
_SIZES = "self_sym_sizes self_sym_strides mat2_sym_sizes mat2_sym_strides"
_NAMES = {"MmBackward0": "self mat2 -> mat2 self " + _SIZES,
          "BmmBackward0": "self mat2 -> mat2 self", "MvBackward0": "self vec -> self vec",
          "DotBackward0": "self tensor -> self tensor"}
# NOTE: the fused product, used when nothing records; it still names a node because
# forward AD differentiates exactly the ops that name one
MATMUL = defop("matmul", jnp.matmul, "MmBackward0")
MM = defop("mm", jnp.matmul, "MmBackward0", _PRODUCT_SAVE, names=_NAMES["MmBackward0"])
BMM = defop("bmm", jnp.matmul, "BmmBackward0", _PRODUCT_SAVE, names=_NAMES["BmmBackward0"])
MV = defop("mv", jnp.matmul, "MvBackward0", _PRODUCT_SAVE, names=_NAMES["MvBackward0"])
DOT = defop("dot", jnp.dot, "DotBackward0", _PRODUCT_SAVE, names=_NAMES["DotBackward0"])
_EINSUM = {}
# the squeeze PyTorch's matmul records after a vector-matrix product
SQUEEZE_ = defop("squeeze_", lambda x, dim: jnp.squeeze(x, dim), "SqueezeBackward4", ())
ADDMM = defop("addmm", lambda c, a, b, beta, alpha: beta * c + alpha * (a @ b), "AddmmBackward0",
              {1: (2,), 2: (1,)}, names="self mat1 mat2 -> mat1 mat2 alpha beta "
              + _SIZES.replace("self", "mat1"))


@export
def mm(input, mat2) -> Tensor:
    """``mm(input, mat2)``: the product of two matrices."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError("self must be a matrix" if input.ndim != 2 else "mat2 must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise _mm_error(*input.shape, *mat2.shape)
    _check_kernel_dtype("addmm_impl_cpu_", input)
    if input._arr.dtype != mat2._arr.dtype:
        raise _dtypes_error("mm", input, mat2)
    return apply(MM, (input, mat2))


@export
def bmm(input, mat2) -> Tensor:
    """``bmm(input, mat2)``: batched matrix product of ``(b, n, m)`` and ``(b, m, p)``."""
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if input.ndim != 3 else
                           "batch2 must be a 3D tensor")
    b, _, m = input.shape
    if mat2.shape[:2] != (b, m):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b}, {m}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    _check_kernel_dtype("bmm", input)
    if input._arr.dtype != mat2._arr.dtype:
        raise _dtypes_error("bmm", input, mat2)
    return apply(BMM, (input, mat2))


@export
def mv(input, vec) -> Tensor:
    """``mv(input, vec)``: matrix-vector product."""
    if input.ndim == 0:
        size_at(input, 0)  # PyTorch sizes the result by the matrix's rows before any check
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    _check_matmul(input, vec)
    return apply(MV, (input, vec))


@export
def dot(input, tensor) -> Tensor:
    """``dot(input, tensor)``: inner product of two 1-d tensors."""
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D "
                           "tensors")
    _check_matmul(input, tensor)
    return apply(DOT, (input, tensor))


@export(aliases=("ger",))
def outer(input, vec2) -> Tensor:
    """``outer(input, vec2)`` (alias ``ger``): ``input[:, None] * vec2``, recorded as PyTorch
    does (a view, then ``MulBackward0``)."""
    from .shape import reshape
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.ndim}-D"
                           if input.ndim != 1 else
                           f"outer: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    return FUNCTIONS["mul"](reshape(input, (input.shape[0], 1)), vec2)


@export
def addmm(input, mat1, mat2, *, beta=1, alpha=1) -> Tensor:
    """``addmm(input, mat1, mat2, *, beta=1, alpha=1)``: ``beta * input + alpha * mat1 @ mat2``."""
    _check_addmm(input, mat1, mat2)
    if beta.__class__ is Tensor or alpha.__class__ is Tensor:  # PyTorch reads them as numbers
        beta, alpha = _number(beta), _number(alpha)
    return apply(ADDMM, (input, mat1, mat2), {"beta": beta, "alpha": alpha})


@export(name="addmm_", function=False)
def _addmm_(self, mat1, mat2, *, beta=1, alpha=1) -> Tensor:
    """In-place :func:`addmm`, written into ``self``."""
    if mat1.ndim == mat2.ndim == 2 and mat1.shape[1] == mat2.shape[0]:
        size = [mat1.shape[0], mat2.shape[1]]  # self cannot broadcast: it holds the result
        if list(self.shape) != size:
            raise RuntimeError(f"Bad in-place call: input tensor size {list(self.shape)} and "
                               f"output tensor size {size} should match")
    _check_addmm(self, mat1, mat2)
    if beta.__class__ is Tensor or alpha.__class__ is Tensor:
        beta, alpha = _number(beta), _number(alpha)
    return apply(ADDMM, (self, mat1, mat2), {"beta": beta, "alpha": alpha}, out=self)


# --------------------------------------------------------------------------- matmul's graph


def matmul_graph(a, b):
    """``a @ b`` recorded as PyTorch records it: dot/mv/mm for 1-d and 2-d operands; a
    batch times a matrix or vector folded into one mm/mv where that needs no copy or the
    smaller operand requires grad (transposed, ``(b^T @ a^T)^T``, when the batch is on the
    right); otherwise both expanded to the common batch and flattened into one bmm."""
    # (the arrays' shapes: a Tensor's ``ndim``/``shape`` cost a frame or two a read, and a
    # model's every Linear without a bias comes here)
    da, db = len(a._arr.shape), len(b._arr.shape)
    if da <= 2 and db <= 2:
        if da == 1:
            if db == 1:
                return apply(DOT, (a, b))
            # NOTE: ``unsqueeze``, a view sharing ``a``'s version counter: ``a`` changed in
            # place then fails the mm's saved-version check, as PyTorch's
            return squeezed_in_place(apply(SQUEEZE_, (apply(MM, (unsqueeze(a, 0), b)),),
                                           {"dim": 0}))
        return apply(MV if db == 1 else MM, (a, b))
    if da == db == 3:  # a batch of one that requires grad is squeezed, to fold the other
        if a.shape[0] == 1 != b.shape[0] and a.requires_grad:
            a, da = squeeze(a, 0), 2
        elif b.shape[0] == 1 != a.shape[0] and b.requires_grad:
            b, db = squeeze(b, 0), 2
    if not _should_fold(a, b):
        return _batched(a, b)
    if da >= db:
        return _folded(a, b)
    bt = transpose(b, -2, -1)
    if da == 1:
        return _folded(bt, a)
    return contiguous(transpose(_folded(bt, t(a)), -2, -1))


def _should_fold(a, b):
    """Whether PyTorch folds the batch of the larger operand into one mm/mv: always when
    the smaller operand requires grad (a smaller gradient), else when no copy is needed."""
    da = len(a._arr.shape)
    big, small = (a, b) if da >= len(b._arr.shape) else (transpose(b, -2, -1), a)
    shape = big._arr.shape
    if len(shape) < 3 or len(small._arr.shape) > 2:
        return False
    if small._requires_grad:
        return True
    if da == 2:  # the product would need transposing back and copying
        return False
    if 0 in shape:
        return True
    strides = big.stride()
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


def _folded(a, b):
    """``a`` (3-d or more) times a matrix or vector ``b``: ``a`` as rows, one mm/mv."""
    sa, sb = tuple(a._arr.shape), tuple(b._arr.shape)
    rows = (math.prod(sa[:-1]), sa[-1])
    return apply(UNSAFE_VIEW, (apply(MV if len(sb) == 1 else MM, (reshape(a, rows), b)),),
                 {"shape": sa[:-1] + sb[1:]})


def _batched(a, b):
    """Both expanded to the common batch and flattened, one bmm (a vector ``b`` as a
    column, squeezed after)."""
    n, m1 = (a.shape[-2] if a.ndim > 1 else 1), a.shape[-1]
    m2, p = (b.shape[-2], b.shape[-1]) if b.ndim > 1 else (b.shape[0], 1)
    batch = tuple(np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])))
    n_b = math.prod(batch)
    a3 = reshape(expand(a, batch + (n, m1)), (n_b, n, m1))
    if b.ndim == 1:
        b3 = unsqueeze(reshape(expand(b, batch + (m2,)), (n_b, m2)), 2)
    else:
        b3 = reshape(expand(b, batch + (m2, p)), (n_b, m2, p))
    out = apply(BMM, (a3, b3))
    if b.ndim == 1:
        out = squeeze(out, -1)
    shape = batch + ((n,) if a.ndim > 1 else ()) + ((p,) if b.ndim > 1 else ())
    return apply(UNSAFE_VIEW, (out,), {"shape": shape})


def _einsum_node(eq, n_operands):
    # PyTorch contracts operands pairwise with permutes, views, bmm and mul: its last node
    # is a view when some index is summed out, else a mul (a permute / sum for one operand)
    lhs, _, rhs = eq.partition("->")
    inputs = lhs.split(",")
    letters = set("".join(inputs).replace(".", ""))
    if not _:
        rhs = "".join(sorted(c for c in letters if "".join(inputs).count(c) == 1))
    summed = bool(letters - set(rhs))
    if n_operands == 1:
        return "SumBackward1" if summed else "PermuteBackward0"
    return "ViewBackward0" if summed else "MulBackward0"


def _sums_a_label(eq):
    lhs, _, rhs = eq.replace(".", "").partition("->")
    if "->" not in eq:  # implicit output: the labels seen once
        rhs = "".join(c for c in lhs if c.isalpha() and lhs.count(c) == 1)
    return bool(set(lhs) - set(rhs) - {","})


def _check_equation(eq, operands):
    """PyTorch's errors for an equation that does not fit its operands (its parser's
    checks, in its order), made only once JAX has refused the call."""
    inputs, _, output = eq.partition("->")
    subs = inputs.split(",")
    if len(subs) != len(operands):
        raise RuntimeError(f"einsum(): {'fewer' if len(operands) < len(subs) else 'more'} "
                           "operands were provided than specified in the equation") from None
    for k, (sub, x) in enumerate(zip(subs, operands)):
        if "..." not in sub and len(sub) != x.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(sub)}) "
                               f"does not match the number of dimensions ({x.ndim}) for operand "
                               f"{k} and no ellipsis was given") from None
    for c in output:
        if c.isalpha() and c not in inputs:
            raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                               "equation for any input operand") from None


@export(method=False)
def einsum(equation, *operands) -> Tensor:
    """``einsum(equation, *operands)``: Einstein summation, e.g.
    ``einsum('bij,bjk->bik', a, b)``.

    Recorded as one node named like PyTorch's last one (``ViewBackward0`` when an index is
    summed, ``MulBackward0`` otherwise); PyTorch's intermediate nodes are not kept.
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = equation.replace(" ", "")
    if len(operands) == 1 and operands[0].dtype.name == "bool" and _sums_a_label(eq):
        operands = (operands[0].long(),)  # PyTorch sums a bool operand as sum does: in int64
    name = _einsum_node(eq, len(operands))
    op = _EINSUM.get(name)
    if op is None:
        op = _EINSUM[name] = defop("einsum_" + name, lambda *xs, eq: jnp.einsum(eq, *xs), name)
    want = einsum_steps.result_dtype(eq, operands) if len(operands) > 1 else None
    if want == np.int64:  # bools summed: PyTorch counts (sum), where JAX's einsum ors
        operands = tuple(x.long() if x.dtype.name == "bool" else x for x in operands)
    try:
        out = apply(op, tuple(operands), {"eq": eq})
    except RuntimeError:  # JAX's refusal, worded by torch_error: PyTorch's parser's check
        _check_equation(eq, operands)
        raise
    if want is not None and out.dtype.np != want:  # integers only: no gradient to keep
        out = out.to(_dtype.as_dtype(want))
    return out


