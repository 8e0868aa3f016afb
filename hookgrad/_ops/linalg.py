"""Matrix products: matmul and its named forms, einsum, outer, dot."""
import jax.numpy as jnp

from .dispatch import apply
from .registry import defop, register

_PRODUCT_SAVE = {0: (1,), 1: (0,)}  # each operand's gradient needs the other one


def _matmul_node(a, b):
    # the node PyTorch's matmul ends in, by operand ranks
    return {(2, 2): "MmBackward0", (1, 1): "DotBackward0", (2, 1): "MvBackward0",
            (1, 2): "SqueezeBackward4"}.get((a, b), "UnsafeViewBackward0" if b <= 2 else
                                            "BmmBackward0" if a == b == 3 else "ViewBackward0")


_MATMUL = {}


def matmul(input, other):
    name = _matmul_node(input.ndim, other.ndim)
    op = _MATMUL.get(name)
    if op is None:
        op = _MATMUL[name] = defop("matmul_" + name, jnp.matmul, name, _PRODUCT_SAVE)
    return apply(op, (input, other))


MM = defop("mm", jnp.matmul, "MmBackward0", _PRODUCT_SAVE)
BMM = defop("bmm", jnp.matmul, "BmmBackward0", _PRODUCT_SAVE)
MV = defop("mv", jnp.matmul, "MvBackward0", _PRODUCT_SAVE)
DOT = defop("dot", jnp.dot, "DotBackward0", _PRODUCT_SAVE)
OUTER = defop("outer", jnp.outer, "MulBackward0", _PRODUCT_SAVE)
EINSUM = defop("einsum", lambda *xs, eq: jnp.einsum(eq, *xs), "EinsumBackward0")
ADDMM = defop("addmm", lambda c, a, b, beta, alpha: beta * c + alpha * (a @ b), "AddmmBackward0",
              {1: (2,), 2: (1,)})


def mm(input, mat2):
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"self must be a matrix" if input.ndim != 2 else "mat2 must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x"
                           f"{input.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    return apply(MM, (input, mat2))


def bmm(input, mat2):
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if input.ndim != 3 else
                           "batch2 must be a 3D tensor")
    return apply(BMM, (input, mat2))


def mv(input, vec):
    return apply(MV, (input, vec))


def dot(input, tensor):
    return apply(DOT, (input, tensor))


def outer(input, vec2):
    return apply(OUTER, (input, vec2))


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    return apply(ADDMM, (input, mat1, mat2), {"beta": beta, "alpha": alpha})


def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return apply(EINSUM, tuple(operands), {"eq": equation.replace(" ", "")})


for _f in (matmul, mm, bmm, mv, dot, outer, addmm):
    register(_f)
register(outer, "ger")
register(einsum, method=False)
