"""``torch.distributed.checkpoint``: the names, so code importing them loads; saving and
loading distributed checkpoints raise ``NotImplementedError`` when called (use
``hookgrad.save``/``hookgrad.load``)."""
from ... import _missing

_NAMES = ["save", "load", "async_save", "save_state_dict", "load_state_dict",
          "load_sharded_optimizer_state_dict"]
_CLASSES = ["FileSystemReader", "FileSystemWriter", "DefaultLoadPlanner",
            "DefaultSavePlanner", "HuggingFaceStorageReader", "HuggingFaceStorageWriter",
            "StorageReader", "StorageWriter", "LoadPlanner", "SavePlanner"]
globals().update({n: _missing.not_implemented(f"torch.distributed.checkpoint.{n}")
                  for n in _NAMES})
globals().update({n: _missing.not_implemented_class(f"torch.distributed.checkpoint.{n}")
                  for n in _CLASSES})


class CheckpointException(BaseException):
    """An error raised by a distributed checkpoint operation on some ranks."""


__getattr__ = _missing.module_getattr(__name__)
