"""NumPy values to JAX arrays on the default device, in one C++ call each.

``jax.device_put(values)`` spends 40-190 microseconds of Python per call on a loaded CPU
(flattening the tree, inferring shardings, profiler hooks) for what jaxlib's
``batched_device_put`` does in about 4. Where hookgrad computes a value on the host (the
tiered first tier, hookgrad/_ops/tiered.py) every result crosses this way, so that cost
was paid per op. The arrays are uncommitted, as ``jax.jit``'s outputs and
``jax.device_put(x)``'s are. When JAX's private entry point is missing, or a default device
is configured (``jax.default_device``), ``jax.device_put`` does it.
"""
import functools

import jax

__all__ = ["put"]


def put(values, avals):
    """``values`` (NumPy arrays with exactly the shapes and dtypes of ``avals``, JAX
    abstract values without weak types) as uncommitted JAX arrays on the default device."""
    fast = _entry()
    if fast is None or jax.config.jax_default_device is not None:
        return jax.device_put(values)
    device_put, device, sharding = fast
    try:
        return [device_put(a, sharding, [v], [device], False) for v, a in zip(values, avals)]
    except (TypeError, ValueError):  # a signature this jaxlib's entry does not take
        return jax.device_put(values)


@functools.lru_cache(maxsize=None)
def _entry():
    try:  # NOTE: private: jax.device_put's own last step, without its Python around it
        from jax._src.lib import xla_client
        device_put = xla_client.batched_device_put
    except (ImportError, AttributeError):
        return None
    device = jax.devices()[0]
    return device_put, device, jax.sharding.SingleDeviceSharding(device)
