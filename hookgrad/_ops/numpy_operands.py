"""The Tensor operators PyTorch leaves to NumPy when the other operand is a NumPy array
(``x + array``): PyTorch's parser refuses the array, Python then asks the array, and NumPy
computes with its own promotion (``float32 + int64 array`` is float64), reading the Tensor
by ``numpy()`` (so one that requires grad is refused); the result comes back as a Tensor."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor

BY_NUMPY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
            "floor_divide": np.floor_divide, "bitwise_and": np.bitwise_and,
            "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
            "remainder": np.remainder, "pow": np.power, "matmul": np.matmul}


def by_numpy(name, input, array):
    """``input <name> array`` (``name`` a key of ``BY_NUMPY``) as NumPy computes it."""
    return Tensor._wrap(jnp.asarray(BY_NUMPY[name](input.numpy(), array)))
