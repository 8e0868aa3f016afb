"""``hookgrad.Generator``: a JAX PRNG key with PyTorch's Generator API.

``default_generator`` holds the global key, ``hookgrad._random.GLOBAL`` (the one
``hookgrad.compile`` threads through a compiled step); other Generators hold their own.
"""
import threading

import jax
import numpy as np

from . import _device, _random
from ._tensor import Tensor

_SEED_BYTES = 8


class Generator:
    """A source of random numbers: ``hookgrad.Generator(device='cpu')``.

    Pass it as ``generator=`` to ``rand``, ``randn``, ``randint``, ``randperm``, the
    ``nn.init`` functions and ``DataLoader``. Its numbers come from JAX's PRNG, so they
    differ from PyTorch's for the same seed (see docs/differences.md).

    Example::

        >>> g = hookgrad.Generator().manual_seed(0)
        >>> a = hookgrad.randperm(4, generator=g)
        >>> g.manual_seed(0) is g
        True
        >>> bool((hookgrad.randperm(4, generator=g) == a).all())
        True
    """

    def __init__(self, device="cpu"):
        dev = device if isinstance(device, _device.device) else _device.device(device)
        if dev.type not in ("cpu", "cuda", "tpu"):
            raise RuntimeError(f"{dev.type.upper()} device type not an accelerator.")
        if dev.type != "cpu" and not _device.platform_devices(
                {"cuda": "gpu"}.get(dev.type, dev.type)):
            raise RuntimeError(f"Cannot get {dev.type.upper()} generator: JAX has no "
                               f"{dev.type} device here (devices: {jax.devices()})")
        self._device = dev
        self._rng = _random.KeyState(67280421310721)  # PyTorch's default seed
        self._lock = threading.Lock()

    @property
    def device(self):
        return self._device

    def manual_seed(self, seed):
        """Reset the key from ``seed`` (an int; negative ones wrap as PyTorch's); returns
        ``self``."""
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = int(seed)
        if not -2 ** 63 <= seed < 2 ** 64:
            raise ValueError("Overflow when unpacking long long")
        seed %= 2 ** 64
        with self._lock:
            self._rng.reset(seed)
        return self

    def seed(self):
        """Reseed from the operating system's entropy; returns the new seed."""
        s = int(np.random.SeedSequence().entropy % 2 ** 63)
        self.manual_seed(s)
        return s

    def initial_seed(self):
        """The seed the key was last reset from."""
        return self._rng.seed

    def next_key(self):
        """A fresh JAX PRNG subkey; advances the generator."""
        with self._lock:
            key, sub = _random.split(self._rng.get())
            # NOTE: split inside a trace gives tracers even for a concrete key
            if isinstance(key, jax.core.Tracer) and self is not default_generator:
                raise RuntimeError(
                    "a hookgrad.Generator other than the default one was used inside "
                    "hookgrad.compile or a JAX transformation: its numbers would be fixed in "
                    "the compiled program. Use the default generator there (omit "
                    "generator=), seeded with hookgrad.manual_seed.")
            self._rng.set(key)
        return sub

    def get_state(self):
        """The state as a ``uint8`` Tensor (the key's data, then the seed) for
        ``set_state``."""
        key = self._rng.peek()
        key = _random.jax_key(self._rng.seed) if key is None else key
        data = np.asarray(jax.random.key_data(key)).astype("<u4").tobytes()
        seed = np.array([self._rng.seed], "<u8").tobytes()
        return Tensor._wrap(jax.numpy.asarray(np.frombuffer(data + seed, np.uint8)))

    def set_state(self, new_state):
        """Restore a state from ``get_state``; returns ``self``."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state._data.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = np.asarray(new_state._data).tobytes()
        size = np.asarray(jax.random.key_data(jax.random.key(0))).size * 4 + _SEED_BYTES
        if len(raw) != size:
            raise RuntimeError(f"Invalid RNG state: expected {size} bytes from "
                               f"Generator.get_state(), got {len(raw)}")
        key = jax.random.wrap_key_data(np.frombuffer(raw[:-_SEED_BYTES], "<u4"))
        with self._lock:
            self._rng.reset(int(np.frombuffer(raw[-_SEED_BYTES:], "<u8")[0]), key)
        return self

    def __reduce__(self):  # pickles as a plain Generator with the same device and state
        return _restore, (str(self._device), self.get_state())


def _restore(device, state):
    return Generator(device).set_state(state)


class _DefaultGenerator(Generator):
    def __init__(self):
        super().__init__("cpu")
        self._rng = _random.GLOBAL  # the global key: hookgrad.compile threads it


default_generator = _DefaultGenerator()
