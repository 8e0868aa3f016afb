"""``torch._custom_ops``, the older custom-op helpers: only ``get_ctx`` is used by libraries
(inside fake implementations, which hookgrad never runs: JAX traces the real kernels)."""
from . import _missing

get_ctx = _missing.not_implemented("torch._custom_ops.get_ctx")

__getattr__ = _missing.module_getattr(__name__)
