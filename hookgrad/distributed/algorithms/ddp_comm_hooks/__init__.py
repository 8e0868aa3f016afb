"""DDP communication hooks: ``default_hooks`` (all-reduce, fp16 and bf16 compression)."""
from . import default_hooks

__all__ = ["default_hooks"]


from .... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
