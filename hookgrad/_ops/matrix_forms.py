"""Matrix-shaped results of whole tensors: ``kron`` (the Kronecker product) and
``adjoint`` (the conjugate transpose of the last two dimensions, a view)."""
from __future__ import annotations

import jax.numpy as jnp

from .._tensor import Tensor
from .registry import bapply, defop, export
from .shape import transpose

# PyTorch's kron reshapes a broadcast product at the end: its top node is that view's
KRON = defop("kron", jnp.kron, "UnsafeViewBackward0")


@export
def kron(input, other) -> Tensor:
    """``kron(input, other)``: the Kronecker product; the operands' dimensions are aligned
    from the last, the shorter one padded with size-1 dimensions in front."""
    return bapply(KRON, (input, other))


@export
def adjoint(input) -> Tensor:
    """``adjoint(input)``: a view of ``input`` with its last two dimensions transposed
    (and conjugated, for complex tensors)."""
    if input.ndim < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input.ndim}-D tensor.")
    if input.dtype.is_complex:
        raise NotImplementedError("hookgrad does not implement torch.adjoint of complex "
                                  "tensors yet (it has no conjugate views)")
    return transpose(input, -2, -1)
