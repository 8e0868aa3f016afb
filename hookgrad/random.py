"""The global random state: one JAX PRNG key, split for every random op.

``manual_seed(s)`` resets it. Inside ``hookgrad.compile`` the key is threaded through the
compiled step as state (see ``hookgrad.compile``).
"""
import functools
import threading

import jax
import jax.numpy as jnp
import numpy as np


class _KeyState(threading.local):
    pass


_state = {"key": None, "seed": 0}


def manual_seed(seed):
    """Seed the global PRNG key (``hookgrad.default_generator``, which also serves CUDA);
    returns that generator, as PyTorch does."""
    from ._generator import default_generator
    return default_generator.manual_seed(int(seed))


def seed():
    """Seed the global key from the operating system's entropy; returns the seed."""
    from ._generator import default_generator
    return default_generator.seed()


def initial_seed():
    """The seed the global key was last reset from."""
    return _state["seed"]


def next_key():
    """A fresh subkey; advances the global key."""
    key = _state["key"]
    if key is None:
        key = jax.random.key(_state["seed"])
    key, sub = jax.random.split(key)
    _state["key"] = key
    return sub


def get_rng_state():
    """The global generator's state, a ``uint8`` Tensor (``Generator.get_state``)."""
    from ._generator import default_generator
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore the global generator from ``get_rng_state()``."""
    from ._generator import default_generator
    default_generator.set_state(new_state)


@functools.partial(jax.jit, static_argnums=(1, 2))
def _flat_draw(key, kind, n, lo=-2.0, hi=2.0):
    if kind == "uniform":
        return jax.random.uniform(key, (n,), jnp.float32)
    if kind == "truncated_normal":
        return jax.random.truncated_normal(key, lo, hi, (n,), jnp.float32)
    return jax.random.normal(key, (n,), jnp.float32)


_MIN_DRAW = 4096  # small tensors (biases, norms, small layers) all share one sampler


def draw(kind, shape, *bounds, generator=None):
    """Standard ``"uniform"``, ``"normal"`` or ``"truncated_normal"`` samples of ``shape``.

    Eagerly: a NumPy float64 array. The draw is a flat vector whose length is rounded up
    to a power of two (at least 4096), sliced on the host, so a few compiled samplers serve
    every shape (a compilation per shape would dominate building a model). Under tracing
    (``hookgrad.compile``): a traced JAX array.
    """
    n = int(np.prod(shape, dtype=np.int64))
    key = next_key() if generator is None else generator.next_key()
    if isinstance(key, jax.core.Tracer):
        return _flat_draw(key, kind, max(n, 1), *bounds)[:n].reshape(shape)
    bucket = max(1 << max(n - 1, 0).bit_length(), _MIN_DRAW)
    flat = _flat_draw(key, kind, bucket, *(float(b) for b in bounds))
    return np.asarray(flat, np.float64)[:n].reshape(shape)
