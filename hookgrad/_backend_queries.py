"""Whether a backend PyTorch dispatches to applies here: ``cudnn_is_acceptable`` (cuDNN
for a Tensor, as ``hookgrad.backends.cudnn`` answers it) and ``is_vulkan_available``
(never: JAX has no Vulkan backend)."""
from ._tensor import Tensor
from .backends import cudnn

__all__ = ["cudnn_is_acceptable", "is_vulkan_available"]


def cudnn_is_acceptable(input) -> bool:
    """Whether cuDNN would take ``input``: a floating Tensor on a CUDA GPU with cuDNN."""
    if not isinstance(input, Tensor):
        raise TypeError("cudnn_is_acceptable(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")
    return cudnn.is_acceptable(input)


def is_vulkan_available() -> bool:
    """Whether the Vulkan backend is available: never (JAX has none)."""
    return False
