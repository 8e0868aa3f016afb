"""``torch.distributed.checkpoint.hf_storage``: the Hugging Face safetensors storage
classes, the same stand-ins as ``hookgrad.distributed.checkpoint``'s (constructing one
raises ``NotImplementedError``)."""
from . import HuggingFaceStorageReader, HuggingFaceStorageWriter

__all__ = ["HuggingFaceStorageReader", "HuggingFaceStorageWriter"]
