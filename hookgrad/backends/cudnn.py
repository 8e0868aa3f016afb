"""``torch.backends.cudnn``: PyTorch's switches, accepted and kept.

XLA picks and autotunes its GPU kernels itself, so ``benchmark``, ``deterministic``,
``enabled`` and ``allow_tf32`` do not change what runs (see
``hookgrad.use_deterministic_algorithms`` and ``hookgrad.set_float32_matmul_precision``
for the switches XLA has).
"""
import contextlib

benchmark = False
deterministic = False
enabled = True
allow_tf32 = True
benchmark_limit = 10


def is_available():
    """Whether cuDNN is used: JAX has a CUDA (not ROCm) GPU backend, which runs on it."""
    from .. import _device
    gpus = _device.platform_devices("gpu")
    return bool(gpus) and "rocm" not in str(
        getattr(gpus[0].client, "platform_version", "")).lower()


def version():
    """cuDNN's version number as JAX loaded it, or None where JAX does not say (or there
    is no CUDA GPU backend)."""
    if not is_available():
        return None
    try:
        from jax._src.lib import cuda_versions  # NOTE: JAX's only source of it (private)
        return cuda_versions.cudnn_get_version()
    except (ImportError, AttributeError):
        return None


def is_acceptable(tensor):
    """Whether cuDNN would take ``tensor``: a floating tensor on a CUDA GPU."""
    return is_available() and tensor.is_cuda and tensor.is_floating_point()


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True):
    """Set the switches inside a ``with`` block; restored after."""
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    g = globals()
    saved = {n: g[n] for n in names}
    g.update(zip(names, (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)))
    try:
        yield
    finally:
        g.update(saved)


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
