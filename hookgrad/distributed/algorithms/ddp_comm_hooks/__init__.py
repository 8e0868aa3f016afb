"""DDP communication hooks: ``default_hooks`` (all-reduce, fp16 and bf16 compression)."""
from . import default_hooks

__all__ = ["default_hooks"]
