"""``torch.backends.mps``: hookgrad places tensors on JAX's cpu, cuda and tpu devices only."""


def is_built():
    """False: hookgrad has no ``mps`` device (JAX's Metal plugin is not supported)."""
    return False


def is_available():
    """False: hookgrad has no ``mps`` device."""
    return False


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
