"""The global random state: one JAX PRNG key, split for every random op.

``manual_seed(s)`` resets it. Inside ``hookgrad.compile`` the key is threaded through the
compiled step as state (see ``hookgrad.compile``).
"""
import threading

import jax
import numpy as np


class _KeyState(threading.local):
    pass


_state = {"key": None, "seed": 0}


def manual_seed(seed):
    """Seed the global PRNG key. Returns a ``Generator``-like object, as PyTorch does."""
    seed = int(seed)
    _state["seed"] = seed
    _state["key"] = jax.random.key(seed)
    return _Generator()


def seed():
    s = int(np.random.SeedSequence().entropy % (2 ** 63))
    manual_seed(s)
    return s


def initial_seed():
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
    key = _state["key"] if _state["key"] is not None else jax.random.key(_state["seed"])
    return jax.random.key_data(key)


def set_rng_state(new_state):
    data = new_state._data if hasattr(new_state, "_data") else new_state
    _state["key"] = jax.random.wrap_key_data(data)


class _Generator:
    def initial_seed(self):
        return _state["seed"]

    def seed(self):
        return seed()
