"""The compiled mode's machinery: ``function`` (``CompiledFunction``), ``trace`` (one
``jax.jit`` program from an eager step), ``state`` (what is state, the cache keys),
``replay``, ``tune`` and host hooks. ``hookgrad.compile`` is the facade.
"""
