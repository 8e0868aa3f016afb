"""``torch.version``: the PyTorch version whose API hookgrad follows, and the toolkits it was
built against (none: JAX's plugins carry CUDA or ROCm, not hookgrad)."""
from typing import Optional  # noqa: F401 - PyTorch's module exports it

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

# the PyTorch release hookgrad's names, signatures and behaviour follow
__version__ = "2.13.0"
debug = False
cuda: Optional[str] = None
git_version = "unknown"
hip: Optional[str] = None
rocm: Optional[str] = None
xpu: Optional[str] = None

from . import _missing  # noqa: E402
__getattr__ = _missing.module_getattr(__name__)
