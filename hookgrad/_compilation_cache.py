"""JAX's persistent compilation cache, on by default for hookgrad's many small programs.

Eagerly, every op and every fused backward chain is an XLA program compiled on first
sight: a fresh process (a notebook kernel restart, a script run again) pays those
compilations again, though their results are the same. JAX can keep compiled programs on
disk; hookgrad turns that on at import, in a user cache directory, unless the user
configured JAX's cache already or turned hookgrad's off:

- ``HOOKGRAD_COMPILATION_CACHE=0`` (or ``off``/``false``): leave JAX's settings alone;
- ``HOOKGRAD_COMPILATION_CACHE=/some/dir``: use that directory;
- otherwise ``$XDG_CACHE_HOME/hookgrad/xla`` (``~/.cache/hookgrad/xla``), capped at 1 GiB
  (JAX evicts the least recently used programs).

A directory set through ``jax.config.update("jax_compilation_cache_dir", ...)`` before
importing hookgrad, or ``JAX_COMPILATION_CACHE_DIR``, is kept as it is.
"""
import os

import jax

ENV = "HOOKGRAD_COMPILATION_CACHE"
_OFF = frozenset({"0", "off", "false", "no"})
MAX_BYTES = 1 << 30


def default_dir():
    """Where hookgrad keeps compiled programs unless told otherwise."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "hookgrad", "xla")


def configure(environ=os.environ):
    """Turn JAX's persistent cache on for this process as the module docstring says;
    returns the directory used, or None when it was left alone."""
    setting = environ.get(ENV, "").strip()
    if setting.lower() in _OFF:
        return None
    if jax.config.jax_compilation_cache_dir or environ.get("JAX_COMPILATION_CACHE_DIR"):
        return None  # the user's own JAX setting wins
    path = setting or default_dir()
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:  # a read-only home: run without the cache rather than fail the import
        return None
    jax.config.update("jax_compilation_cache_dir", path)
    # NOTE: hookgrad's programs are small (an op, a fused chain): JAX's default threshold
    # of one second of compile time would keep none of them
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    if jax.config.jax_compilation_cache_max_size == -1:
        jax.config.update("jax_compilation_cache_max_size", MAX_BYTES)
    return path
