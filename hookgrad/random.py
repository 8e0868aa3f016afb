"""The global random state: one JAX PRNG key, split for every random op.

``manual_seed(s)`` resets it. Inside ``hookgrad.compile`` the key is threaded through the
compiled step as state (see ``hookgrad.compile``). The key itself is owned by
``hookgrad._random.GLOBAL``.
"""
import functools
import math

import jax
import jax.scipy.special
import jax.numpy as jnp
import numpy as np

from ._generator import default_generator
from ._random import GLOBAL as _GLOBAL

_state = _GLOBAL.state  # the same dict, for code not yet moved to hookgrad._random.GLOBAL


def manual_seed(seed):
    """Seed the global PRNG key (``hookgrad.default_generator``, which also serves CUDA);
    returns that generator, as PyTorch does."""
    return default_generator.manual_seed(int(seed))


def seed():
    """Seed the global key from the operating system's entropy; returns the seed."""
    return default_generator.seed()


def initial_seed():
    """The seed the global key was last reset from."""
    return _GLOBAL.seed


def next_key():
    """A fresh subkey; advances the global key."""
    return default_generator.next_key()


def get_rng_state():
    """The global generator's state, a ``uint8`` Tensor (``Generator.get_state``)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore the global generator from ``get_rng_state()``."""
    default_generator.set_state(new_state)


@functools.partial(jax.jit, static_argnums=(1, 2))
def _flat_draw(key, kind, n, lo=-2.0, hi=2.0):
    if kind == "uniform":
        return jax.random.uniform(key, (n,), jnp.float32)
    if kind == "truncated_normal":
        return jax.random.truncated_normal(key, lo, hi, (n,), jnp.float32)
    return jax.random.normal(key, (n,), jnp.float32)


def host_generator(key):
    """A NumPy generator seeded by a JAX key's bits: eager draws happen on the host.

    NOTE: drawing with ``jax.random`` eagerly compiles an XLA sampler per kind and size
    (0.1-0.2 s each on a CPU), which dominated a fresh process's first training steps.
    Philox keyed by the JAX key keeps ``manual_seed`` reproducible; the numbers differ
    from the ones drawn inside ``hookgrad.compile`` (and from PyTorch's) either way.
    """
    bits = np.asarray(jax.random.key_data(key), np.uint64).reshape(-1)
    return np.random.Generator(np.random.Philox(key=[int(bits[0]) << 32 | int(bits[1]),
                                                     int(bits[-1])]))


def _host_truncated_normal(rng, n, lo, hi):
    if lo > 0:  # the lower tail, where the CDF keeps its precision
        return -_host_truncated_normal(rng, n, -hi, -lo)
    cdf_lo, cdf_hi = (math.erfc(-v / math.sqrt(2)) / 2 for v in (lo, hi))
    if cdf_hi - cdf_lo < 0.25:  # rejection would seldom accept (or never end): invert the CDF
        u = rng.uniform(cdf_lo, cdf_hi, n)
        return np.clip(np.asarray(jax.scipy.special.ndtri(u), np.float64), lo, hi)
    out = rng.standard_normal(n)
    bad = (out < lo) | (out > hi)
    while bad.any():  # rejection: the accepted draws are N(0, 1) restricted to [lo, hi]
        out[bad] = rng.standard_normal(int(bad.sum()))
        bad = (out < lo) | (out > hi)
    return out


def draw(kind, shape, *bounds, generator=None):
    """Standard ``"uniform"``, ``"normal"`` or ``"truncated_normal"`` samples of ``shape``.

    Eagerly: a NumPy float64 array drawn on the host (:func:`host_generator`). Under
    tracing (``hookgrad.compile``): a traced JAX array.
    """
    n = int(np.prod(shape, dtype=np.int64))
    key = next_key() if generator is None else generator.next_key()
    if isinstance(key, jax.core.Tracer):
        return _flat_draw(key, kind, max(n, 1), *bounds)[:n].reshape(shape)
    rng = host_generator(key)
    if kind == "uniform":
        flat = rng.random(n)
    elif kind == "truncated_normal":
        flat = _host_truncated_normal(rng, n, *(float(b) for b in bounds))
    else:
        flat = rng.standard_normal(n)
    return flat.reshape(shape)


from . import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
