"""The PRNG keys' one owner: a :class:`KeyState` holds a JAX key and the seed it was reset
from, and every write of a key goes through its methods.

``GLOBAL`` is the global key (``hookgrad.manual_seed``, ``hookgrad.default_generator``):
the compiled and functional modes thread it through their programs with :meth:`KeyState.get`
and :meth:`KeyState.set`. A leaf module: it imports nothing of hookgrad.
"""
import contextlib

import jax

__all__ = ["KeyState", "GLOBAL", "jax_key"]


def jax_key(seed):
    # PyTorch's seeds are uint64; JAX's must fit an int64: the same 64 bits, signed
    return jax.random.key(seed - 2 ** 64 if seed >= 2 ** 63 else seed)


class KeyState:
    """A key (made from the seed on first use) and its seed."""

    __slots__ = ("state",)

    def __init__(self, seed, key=None):
        # a dict, so that code holding ``state`` sees every later write
        self.state = {"key": key, "seed": seed}

    def peek(self):
        """The key, or None when none was drawn since the last reset."""
        return self.state["key"]

    def get(self):
        """The key, made from the seed (and kept) when none was drawn yet."""
        key = self.state["key"]
        if key is None:
            key = self.state["key"] = jax_key(self.state["seed"])
        return key

    def set(self, key):
        self.state["key"] = key

    @property
    def seed(self):
        return self.state["seed"]

    def reset(self, seed, key=None):
        """Start again from ``seed`` (``key``: a key already made from it)."""
        self.state["seed"] = seed
        self.state["key"] = jax_key(seed) if key is None else key

    @contextlib.contextmanager
    def swapped(self, key):
        """Use ``key`` inside the block; the key before it is back afterwards."""
        prev = self.state["key"]
        self.state["key"] = key
        try:
            yield
        finally:
            self.state["key"] = prev


GLOBAL = KeyState(0)
