"""``torch._dynamo.eval_frame``: whether the running code is being compiled.

hookgrad compiles by tracing with JAX: code is "compiling" while ``hookgrad.compile`` traces a
step or a compiled Module's forward, or while any JAX transformation traces it.
"""
from .. import _jax_trace, _missing, _mode


def is_compiling() -> bool:
    """True while the running code is being traced into a compiled program: a
    ``hookgrad.compile`` step or Module, or a JAX transformation (``jax.jit``, ``jax.grad``,
    ``jax.vmap``) of hookgrad code; False when it runs eagerly."""
    return _mode.state.compiling or _jax_trace.active()


def _is_in_optimized_module() -> bool:
    """Whether an ``OptimizedModule``'s forward is running. A compiled Module's Python
    forward runs only while it is traced, so this is :func:`is_compiling`."""
    return is_compiling()


__getattr__ = _missing.module_getattr(__name__)
