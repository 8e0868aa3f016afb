"""``torch.nn.attention``: choosing the kernel behind ``F.scaled_dot_product_attention``.

hookgrad has one attention kernel, JAX's; :func:`sdpa_kernel` records the backends a block
asks for (``_cur_sdpa_kernel_backends``) and PyTorch code using it runs, but the choice does
not change the computation (docs/differences.md).
"""
import contextlib
import enum

from ... import _missing

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """The backends of scaled dot product attention, with PyTorch's values."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __repr__(self):
        return f"<SDPBackend.{self.name}: {self.value}>"

    def __str__(self):
        return f"SDPBackend.{self.name}"


_ALL = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH,
        SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE]
_enabled = list(_ALL)


def _cur_sdpa_kernel_backends(with_priority: bool = False):
    return list(_enabled)


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """Context manager selecting the backends (one ``SDPBackend`` or a list) that scaled
    dot product attention may use in the block; the previous selection comes back on exit.
    """
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of "
                             f"SDPBackend instances, got {type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    previous = list(_enabled)
    _enabled[:] = dict.fromkeys(backends)
    try:
        yield {}
    finally:
        _enabled[:] = previous


register_flash_attention_impl = _missing.not_implemented(
    "torch.nn.attention.register_flash_attention_impl")
activate_flash_attention_impl = _missing.not_implemented(
    "torch.nn.attention.activate_flash_attention_impl")


def list_flash_attention_impls() -> list:
    """The registered flash-attention implementations: none in hookgrad."""
    return []


def current_flash_attention_impl():
    """The active flash-attention implementation: None (hookgrad has JAX's kernel only)."""
    return None


def restore_flash_attention_impl() -> None:
    """Restore the default flash-attention implementation (hookgrad has only the one)."""


__getattr__ = _missing.module_getattr(__name__)
