"""Matrix products: matmul and its named forms, einsum, outer, dot."""
import jax.numpy as jnp
import numpy as np

from .dispatch import apply
from .registry import defop, register

_PRODUCT_SAVE = {0: (1,), 1: (0,)}  # each operand's gradient needs the other one


def _matmul_node(a, b, a_requires_grad):
    # the last node of PyTorch's matmul, by operand ranks (it folds batch dimensions into
    # mm/mv/bmm and views back; for a matrix times a batch it transposes and clones when
    # the matrix needs a gradient)
    if b == 1:
        return {1: "DotBackward0", 2: "MvBackward0"}.get(a, "UnsafeViewBackward0")
    if b == 2:
        return {1: "SqueezeBackward4", 2: "MmBackward0"}.get(a, "UnsafeViewBackward0")
    if a == 2 and a_requires_grad:
        return "CloneBackward0"
    return "UnsafeViewBackward0"


_MATMUL = {}


def _check_matmul(a, b):
    sa, sb = a.shape, b.shape
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a.ndim}D and {b.ndim}D")
    if a.ndim == 1 and b.ndim == 1:
        if sa[0] != sb[0]:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{sa[0]}] and src "
                               f"[{sb[0]}] to have the same number of elements, but got "
                               f"{sa[0]} and {sb[0]} elements respectively")
    elif b.ndim == 1:
        if sa[-1] != sb[0]:
            raise RuntimeError(f"size mismatch, got input ({sa[0]}), mat ({sa[0]}x{sa[-1]}), "
                               f"vec ({sb[0]})")
    else:
        k = sa[-1]
        if k != sb[-2]:
            rows = int(np.prod(sa[:-1]))
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and "
                               f"{sb[-2]}x{sb[-1]})")


def matmul(input, other):
    """``matmul(input, other)`` (``@``): dot, matrix-vector, matrix-matrix or batched
    product by the operands' ranks, broadcasting batch dimensions.

    Recorded as one node named like the last node PyTorch records (``MmBackward0`` for
    matrices; ``UnsafeViewBackward0`` for batches: PyTorch's inner views are not kept).
    """
    _check_matmul(input, other)
    name = _matmul_node(input.ndim, other.ndim, input.requires_grad)
    op = _MATMUL.get(name)
    if op is None:
        op = _MATMUL[name] = defop("matmul_" + name, jnp.matmul, name, _PRODUCT_SAVE)
    return apply(op, (input, other))


MM = defop("mm", jnp.matmul, "MmBackward0", _PRODUCT_SAVE)
BMM = defop("bmm", jnp.matmul, "BmmBackward0", _PRODUCT_SAVE)
MV = defop("mv", jnp.matmul, "MvBackward0", _PRODUCT_SAVE)
DOT = defop("dot", jnp.dot, "DotBackward0", _PRODUCT_SAVE)
_EINSUM = {}
ADDMM = defop("addmm", lambda c, a, b, beta, alpha: beta * c + alpha * (a @ b), "AddmmBackward0",
              {1: (2,), 2: (1,)})


def mm(input, mat2):
    """``mm(input, mat2)``: the product of two matrices."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError("self must be a matrix" if input.ndim != 2 else "mat2 must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x"
                           f"{input.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    return apply(MM, (input, mat2))


def bmm(input, mat2):
    """``bmm(input, mat2)``: batched matrix product of ``(b, n, m)`` and ``(b, m, p)``."""
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if input.ndim != 3 else
                           "batch2 must be a 3D tensor")
    b, _, m = input.shape
    if mat2.shape[:2] != (b, m):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b}, {m}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    return apply(BMM, (input, mat2))


def mv(input, vec):
    """``mv(input, vec)``: matrix-vector product."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    _check_matmul(input, vec)
    return apply(MV, (input, vec))


def dot(input, tensor):
    """``dot(input, tensor)``: inner product of two 1-d tensors."""
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D "
                           "tensors")
    _check_matmul(input, tensor)
    return apply(DOT, (input, tensor))


def outer(input, vec2):
    """``outer(input, vec2)`` (alias ``ger``): ``input[:, None] * vec2``, recorded as PyTorch
    does (a view, then ``MulBackward0``)."""
    from .pointwise import BINARY_FN
    from .shape import reshape
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.ndim}-D"
                           if input.ndim != 1 else
                           f"outer: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    return BINARY_FN["mul"](reshape(input, (input.shape[0], 1)), vec2)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``addmm(input, mat1, mat2, *, beta=1, alpha=1)``: ``beta * input + alpha * mat1 @ mat2``."""
    return apply(ADDMM, (input, mat1, mat2), {"beta": beta, "alpha": alpha})


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


def einsum(equation, *operands):
    """``einsum(equation, *operands)``: Einstein summation, e.g.
    ``einsum('bij,bjk->bik', a, b)``.

    Recorded as one node named like PyTorch's last one (``ViewBackward0`` when an index is
    summed, ``MulBackward0`` otherwise); PyTorch's intermediate nodes are not kept.
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = equation.replace(" ", "")
    name = _einsum_node(eq, len(operands))
    op = _EINSUM.get(name)
    if op is None:
        op = _EINSUM[name] = defop("einsum_" + name, lambda *xs, eq: jnp.einsum(eq, *xs), name)
    return apply(op, tuple(operands), {"eq": eq})


for _f in (matmul, mm, bmm, mv, dot, outer, addmm):
    register(_f)
register(outer, "ger")
register(einsum, method=False)
