"""``torch.distributed.checkpoint.hf_storage``: the Hugging Face safetensors storage
classes, the same stand-ins as ``hookgrad.distributed.checkpoint``'s (constructing one
raises ``NotImplementedError``)."""
from . import HuggingFaceStorageReader, HuggingFaceStorageWriter

__all__ = ["HuggingFaceStorageReader", "HuggingFaceStorageWriter"]


from ... import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
