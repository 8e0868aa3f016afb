"""``torch.distributed.checkpoint``: ``save`` and ``load`` of a state dict split over
processes, in PyTorch's checkpoint directory format (``_filesystem``): each process writes
and reads its own pieces (an FSDP parameter's shard, or whole tensors), so a checkpoint
saved by either library, with any number of processes, loads in the other. Planners,
storage readers and writers and ``async_save`` raise ``NotImplementedError`` when used.
"""
import os
from typing import Any

import jax

from ... import _missing
from . import _filesystem

_NAMES = ["async_save", "save_state_dict", "load_state_dict",
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


def _where(fn, checkpoint_id, storage, planner, what):
    if storage is not None or planner is not None:
        raise NotImplementedError(f"hookgrad does not implement torch.distributed.checkpoint."
                                  f"{fn} with a {what} or planner yet: pass checkpoint_id= "
                                  "(a directory)")
    if not checkpoint_id:
        raise RuntimeError("`checkpoint_id` must be specified if "
                           "storage_reader/storage_writer is None.")
    return os.fspath(checkpoint_id)


def _group(process_group, no_dist):
    """This process's rank and an all-gather of Python objects over ``process_group``
    (one process: no exchange)."""
    from .. import _collectives, _object_collectives
    if no_dist or not _collectives._STATE["initialized"] or jax.process_count() == 1:
        return 0, lambda obj: [obj], lambda: None
    g = _collectives.resolve(process_group)

    def gather(obj):
        out = [None] * g.size()
        _object_collectives.all_gather_object(out, obj, g)
        return out
    return g.rank(), gather, lambda: gather(None)


def save(state_dict: dict[str, Any], *, checkpoint_id: Any = None, storage_writer: Any = None,
         planner: Any = None, process_group: Any = None, no_dist: bool = False,
         use_collectives: bool = True) -> Any:
    """Save ``state_dict`` into the directory ``checkpoint_id``: every process of the group
    calls it with its state dict (an FSDP model's shards: ``get_model_state_dict``), writes
    its pieces, and rank 0 writes the metadata. Returns the checkpoint's ``Metadata``.

    ::

        save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None,
             process_group=None, no_dist=False, use_collectives=True) -> Metadata
    """
    path = _where("save", checkpoint_id, storage_writer, planner, "storage_writer")
    rank, gather, barrier = _group(process_group, no_dist)
    _filesystem.write(state_dict, path, rank, gather)
    barrier()
    return _filesystem.read_metadata(path)


def load(state_dict: dict[str, Any], *, checkpoint_id: Any = None, storage_reader: Any = None,
         planner: Any = None, process_group: Any = None, no_dist: bool = False) -> None:
    """Load the checkpoint in the directory ``checkpoint_id`` into ``state_dict`` in place:
    each Tensor gets its rows (an FSDP shard's, or the whole tensor) of the saved tensor of
    its key, however the saving processes split it.

    ::

        load(state_dict, *, checkpoint_id=None, storage_reader=None, planner=None,
             process_group=None, no_dist=False) -> None
    """
    path = _where("load", checkpoint_id, storage_reader, planner, "storage_reader")
    try:
        _filesystem.read(state_dict, path)
    except (RuntimeError, OSError) as e:   # PyTorch's names the ranks that failed
        rank = _group(process_group, no_dist)[0]
        raise CheckpointException(f"CheckpointException ranks:dict_keys([{rank}])\n"
                                  f"{type(e).__name__}: {e}") from e


__getattr__ = _missing.module_getattr(__name__)
