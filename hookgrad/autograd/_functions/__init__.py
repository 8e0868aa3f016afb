"""Legacy autograd Functions PyTorch keeps under ``torch.autograd._functions``."""
from .tensor import Resize

__all__ = ["Resize"]
