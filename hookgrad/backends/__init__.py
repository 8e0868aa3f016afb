"""``torch.backends`` on JAX, and the global numerics switches PyTorch keeps at ``torch.*``
(``set_float32_matmul_precision``, ``use_deterministic_algorithms``).

Example::

    >>> hookgrad.backends.cudnn.benchmark = True   # accepted; XLA autotunes by itself
    >>> hookgrad.set_float32_matmul_precision("high")
    >>> hookgrad.get_float32_matmul_precision()
    'high'
"""
from ._numerics import (  # noqa: F401 - hookgrad.backends.* and hookgrad.* re-export them
    are_deterministic_algorithms_enabled, get_float32_matmul_precision,
    is_deterministic_algorithms_warn_only_enabled, set_float32_matmul_precision,
    use_deterministic_algorithms)
from . import cpu, cuda, cudnn, mps  # noqa: F401 - submodules


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
