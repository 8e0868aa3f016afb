"""The PRNG keys' one owner: a :class:`KeyState` holds a JAX key and the seed it was reset
from, and every write of a key goes through its methods.

``GLOBAL`` is the global key (``hookgrad.manual_seed``, ``hookgrad.default_generator``):
the compiled and functional modes thread it through their programs with :meth:`KeyState.get`
and :meth:`KeyState.set`. A leaf module: of hookgrad it imports only ``_jax_trace`` and
``_host_transfer`` (leaves too).
"""
import contextlib
import threading

import jax
import numpy as np

__all__ = ["KeyState", "GLOBAL", "jax_key", "split"]

from jax._src.random.prng import PRNGKeyArray as _PRNGKeyArray  # NOTE: private (a key from
# its data without an eager JAX op); jax.random.wrap_key_data where a key lacks ``_impl``

from . import _host_transfer
from ._jax_trace import no_trace as _clean

HOST_SPLITS = 256  # key splits computed on the host before JAX's compiled split takes over
_KEY_DATA = [jax.core.ShapedArray((2,), np.uint32)] * 2  # a threefry key's data, two keys
_host = {"splits": 0, "impl": None}


def jax_key(seed):
    """JAX's ``jax.random.key`` for a PyTorch seed (a uint64: the same 64 bits, signed, as
    JAX's seeds are int64); with JAX's default threefry keys, made on the host: the same
    bits, without compiling JAX's seeding program in every fresh process."""
    if _threefry():
        bits = seed % 2 ** 64
        return jax.random.wrap_key_data(np.array([bits >> 32, bits & 0xFFFFFFFF], np.uint32))
    return jax.random.key(seed - 2 ** 64 if seed >= 2 ** 63 else seed)


def split(key):
    """``jax.random.split(key)`` as two keys. A process's first ``HOST_SPLITS`` splits of
    a concrete threefry key run on the host (the same bits): JAX's split is a compiled
    program (~0.1 s to compile, in every fresh process), the host's costs ~15 us more per
    split, so the compiled one only pays once a program draws often. A concrete key is
    split by that compiled program from then on (JAX's eager split costs milliseconds)."""
    if not _clean():  # under a JAX trace: part of the traced program
        key, sub = jax.random.split(key)
        return key, sub
    # NOTE: the key's impl, not its dtype: ``dtype`` builds a key type per read
    if _host["splits"] < HOST_SPLITS and _threefry() and \
            getattr(key, "_impl", None) is _host["impl"]:
        _host["splits"] += 1
        return _host_split(key)
    return _chained_split(key)


CHAIN = 16  # splits computed ahead in one program once a key's chain is split in sequence
_ahead = {"key": None, "pairs": []}  # the last key handed out; its chain's next pairs


def _chained_split(key):
    """``split`` by a compiled program. The global key (or a Generator's) is split in
    sequence, each split of the key the last one gave, so once a key that this function
    gave comes back, one program splits ``CHAIN`` steps of its chain ahead (~5.7 us a
    split against ~11 for a program per split) and the next calls hand them out: the
    same bits, as each step is JAX's split of the one before. A key from elsewhere (a
    reseed, ``set_rng_state``, another chain) gets one split, so a lone split costs no
    more than it did."""
    with _ahead_lock:  # Generators split in threads of their own share the chain ahead
        pairs = _ahead["pairs"]
        if key is not _ahead["key"]:
            pairs.clear()
            new, sub = _compiled_split(key)
        else:
            if not pairs:
                out = _compiled_chain(key)
                # NOTE: reversed, so that ``pop`` hands the pairs out in the chain's order
                pairs.extend(zip(out[-2::-2], out[::-2]))
            new, sub = pairs.pop()
        _ahead["key"] = new
    return new, sub


_ahead_lock = threading.Lock()


@jax.jit
def _compiled_split(key):
    key, sub = jax.random.split(key)
    return key, sub


@jax.jit
def _compiled_chain(key):
    """``CHAIN`` splits in sequence: the next key and the subkey of each, flat."""
    out = []
    for _ in range(CHAIN):
        key, sub = jax.random.split(key)
        out += [key, sub]
    return tuple(out)


def _host_split(key):
    """``split`` of a concrete threefry key with Python integers: key ``j`` of the split
    is the hash of the counter pair ``(0, j)``."""
    base = getattr(key, "_base_array", None)  # NOTE: private; key_data is an eager JAX op
    k1, k2 = np.asarray(jax.random.key_data(key) if base is None else base).tolist()
    data = [np.array(_threefry2x32(k1, k2, 0, j), np.uint32) for j in (0, 1)]
    impl = getattr(key, "_impl", None)
    if impl is None:
        return jax.random.wrap_key_data(data[0]), jax.random.wrap_key_data(data[1])
    # NOTE: both keys' data in one transfer; a key made from NumPy data puts it itself, at
    # ~10 us a key (dropout splits a key per call)
    first, second = _host_transfer.put(data, _KEY_DATA)
    return _key(impl, first), _key(impl, second)


def _key(impl, data):
    """The key of ``impl`` whose data is ``data``, a uint32 ``jax.Array`` of the impl's key
    shape, as ``PRNGKeyArray(impl, data)`` makes it, without the constructor's checks of
    ``data`` (~25 Python calls a key, two keys a dropout): this module made the data."""
    key = _new_key(_PRNGKeyArray)
    key._impl, key._consumed, key._base_array = impl, False, data
    return key


_new_key = _PRNGKeyArray.__new__


def _threefry():
    """Whether JAX's keys are its default threefry ones, split as JAX 0.5+ does."""
    if not (jax.config.jax_default_prng_impl == "threefry2x32"
            and jax.config.jax_threefry_partitionable):
        return False
    if _host["impl"] is None:
        _host["impl"] = jax.random.wrap_key_data(np.zeros(2, np.uint32))._impl
    return True


_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_M32 = 0xFFFFFFFF


def _threefry2x32(k1, k2, x1, x2):
    """The Threefry-2x32 hash (20 rounds) of the counters ``x1, x2`` under the key
    ``k1, k2``, as JAX computes it (Python integers taken as uint32; additions wrap)."""
    ks = (k1, k2, k1 ^ k2 ^ 0x1BD11BDA)
    x1 = (x1 + k1) & _M32
    x2 = (x2 + k2) & _M32
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x1 = (x1 + x2) & _M32
            x2 = x1 ^ (((x2 << r) & _M32) | (x2 >> (32 - r)))
        x1 = (x1 + ks[(i + 1) % 3]) & _M32
        x2 = (x2 + ks[(i + 2) % 3] + i + 1) & _M32
    return x1, x2


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
