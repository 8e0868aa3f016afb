"""``torch.distributed.checkpoint.hf_storage``: the Hugging Face safetensors storage
classes, the same stand-ins as ``hookgrad.distributed.checkpoint``'s (constructing one
raises ``NotImplementedError``)."""
from . import HuggingFaceStorageReader, HuggingFaceStorageWriter

__all__ = ["HuggingFaceStorageReader", "HuggingFaceStorageWriter"]

from ... import _missing  # noqa: E402
__getattr__ = _missing.module_getattr(__name__)
