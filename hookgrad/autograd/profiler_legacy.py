"""``torch.autograd.profiler_legacy``: the legacy profiler's path; hookgrad's ``profile``
here is :class:`hookgrad.autograd.profiler.profile` (a JAX trace)."""
from .. import _missing
from .profiler import profile

__all__ = ["profile"]

__getattr__ = _missing.module_getattr(__name__)
