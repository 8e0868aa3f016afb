"""``torch.backends`` on JAX, and the global numerics switches PyTorch keeps at ``torch.*``
(``set_float32_matmul_precision``, ``use_deterministic_algorithms``).

Example::

    >>> hookgrad.backends.cudnn.benchmark = True   # accepted; XLA autotunes by itself
    >>> hookgrad.set_float32_matmul_precision("high")
    >>> hookgrad.get_float32_matmul_precision()
    'high'
"""
from ._numerics import (are_deterministic_algorithms_enabled, get_float32_matmul_precision,  # noqa: F401
                        is_deterministic_algorithms_warn_only_enabled,
                        set_float32_matmul_precision, use_deterministic_algorithms)
from . import cpu, cuda, cudnn, mps  # noqa: F401 - submodules
