"""PyTorch's distributed checkpoint directory, written and read without torch.

A checkpoint is a directory: each process writes its pieces of the state dict to
``__<rank>_0.distcp`` (one ``torch.save`` archive per piece, back to back: a shard of an
FSDP parameter, or a whole tensor, written by rank 0 only), and rank 0 writes
``.metadata``: a pickle of PyTorch's ``Metadata`` naming, for every key, the full size,
dtype and each piece's offsets, file, position and length. The pickle names PyTorch's
classes without importing them (``copyreg._reconstructor`` and the fields), so PyTorch's
``FileSystemReader`` reads it; reading maps those names onto plain records, so either
library's checkpoint loads here, each process reading the rows it holds.
"""
from __future__ import annotations

import copyreg
import io
import os
import pathlib
import pickle
from typing import Any

import numpy as np

from ... import _dtype
from ..._autograd.grad_mode import no_grad
from ..._serialization import _names
from ..._serialization._writer import pickler_class
from ..._tensor import Size, Tensor
from ...serialization import load as _load, save as _save
from .._fsdp_processes import shard_of

__all__ = ["write", "read", "read_metadata"]

_META = "torch.distributed.checkpoint.metadata"
_FS = "torch.distributed.checkpoint.filesystem"
_G = _names.TorchGlobal


class _Torch:
    """An object of PyTorch's class ``module.name`` with ``state``: pickled as
    ``copyreg._reconstructor(cls, object, None)`` and ``state`` set on it."""

    def __init__(self, module, name, state):
        self.cls, self.state = _G(module, name), state

    def __reduce__(self):
        return (_G("copyreg", "_reconstructor"), (self.cls, _G("builtins", "object"), None),
                self.state)


class _Call:
    """``module.name(*args)`` in the pickle (an enum member, a layout)."""

    def __init__(self, module, name, *args):
        self.fn, self.args = _G(module, name), args

    def __reduce__(self):
        return self.fn, self.args


def _properties(dtype):
    return _Torch(_META, "TensorProperties", (
        dtype, _Call("torch.serialization", "_get_layout", "torch.strided"), False,
        _Call(_META, "_MEM_FORMAT_ENCODING", 0), False))


def _pieces(state_dict, rank):
    """``(key, tensor, offsets, full size)`` of what process ``rank`` writes."""
    for key, value in state_dict.items():
        if not isinstance(value, Tensor):
            raise NotImplementedError(
                "hookgrad does not implement torch.distributed.checkpoint.save of "
                f"{type(value).__name__} values yet ({key!r}): save a flat dict of Tensors")
        rows = shard_of(value)
        if rows is not None and rows.stop > rows.start:
            yield key, value, (rows.start,) + (0,) * (value.ndim - 1), rows.full_shape
        elif rows is None and rank == 0:
            yield key, value, (0,) * value.ndim, tuple(value.shape)


def write(state_dict: dict[str, Any], path: str, rank: int, gather) -> None:
    """Write this process's pieces; ``gather(entries)`` gives every process's, in rank
    order; rank 0 then writes ``.metadata``."""
    pieces = list(_pieces(state_dict, rank))   # checked before anything is written
    os.makedirs(path, exist_ok=True)
    name = f"__{rank}_0.distcp"
    entries = []
    with open(os.path.join(path, name), "wb") as f:
        for key, value, offsets, full in pieces:
            buf = io.BytesIO()
            _save(value.detach(), buf)
            entries.append((key, offsets, tuple(value.shape), full, value.dtype.name, name,
                            f.tell(), buf.tell()))
            f.write(buf.getvalue())
    everyone = gather(entries)
    if rank == 0:
        with open(os.path.join(path, ".metadata"), "wb") as f:
            pickler_class(pickle)(f, 4).dump(_metadata(state_dict, everyone, path))


def _metadata(state_dict, everyone, path):
    tensors, storage = {}, {}
    for entries in everyone:
        for key, offsets, sizes, full, dtype, name, at, length in entries:
            if key not in tensors:
                tensors[key] = _Torch(_META, "TensorStorageMetadata", {
                    # NOTE: the dtype's global itself: hookgrad.save's writer cannot
                    # write two equal dtype objects into one pickle
                    "properties": _properties(_names.DTYPE_GLOBALS[dtype]), "size": Size(full),
                    "chunks": []})
            tensors[key].state["chunks"].append(_Torch(_META, "ChunkStorageMetadata", {
                "offsets": Size(offsets), "sizes": Size(sizes)}))
            index = _Torch(_META, "MetadataIndex", {"fqn": key, "offset": Size(offsets),
                                                    "index": 0})
            storage[index] = _Torch(_FS, "_StorageInfo", {
                "relative_path": name, "offset": at, "length": length})
    meta = _Torch(_META, "StorageMeta", {"checkpoint_id": str(path), "save_id": None,
                                          "load_id": None, "modules": []})
    return _Torch(_META, "Metadata", {
        "state_dict_metadata": {k: tensors[k] for k in state_dict if k in tensors},
        "planner_data": {k: (k,) for k in state_dict}, "storage_data": storage,
        "storage_meta": meta, "version": "1.0.0"})


class _Record:
    """One of PyTorch's checkpoint classes, read as its fields."""

    def __init__(self, *args):
        self.args = args

    def __setstate__(self, state):
        if isinstance(state, dict):
            self.__dict__.update(state)
        else:
            self.state = state


class _MetadataReader(pickle.Unpickler):
    _RECORDS: dict[str, type] = {}
    _PLAIN = {"copyreg._reconstructor": copyreg._reconstructor, "builtins.object": object,
              "torch.Size": tuple, "torch.serialization._get_layout": str,
              "pathlib.PosixPath": pathlib.PurePosixPath,
              "pathlib.WindowsPath": pathlib.PureWindowsPath}

    def find_class(self, module, name):
        path = f"{module}.{name}"
        if module in (_META, _FS):
            return self._RECORDS.setdefault(path, type(name, (_Record,), {}))
        if path in self._PLAIN:
            return self._PLAIN[path]
        dtypes = _names.dtype_globals()
        if path in dtypes:
            return dtypes[path]
        raise pickle.UnpicklingError(f"a distributed checkpoint's .metadata names {path}, "
                                     "which hookgrad does not read")


def _chunks(path, meta, key):
    """``(offsets, array)`` of every piece of ``key`` in the checkpoint."""
    for index, info in meta.storage_data.items():
        if index.fqn == key:
            with open(os.path.join(path, info.relative_path), "rb") as f:
                f.seek(info.offset)
                data = f.read(info.length)
            yield tuple(index.offset), np.asarray(_load(io.BytesIO(data), weights_only=True))


def read_metadata(path: str) -> Any:
    """The checkpoint's ``Metadata``, its PyTorch classes read as records."""
    with open(os.path.join(path, ".metadata"), "rb") as f:
        return _MetadataReader(f).load()


def read(state_dict: dict[str, Any], path: str) -> None:
    """Fill each Tensor of ``state_dict`` in place with its rows (its shard's, or all) of
    the tensor the checkpoint at ``path`` holds under its key."""
    meta = read_metadata(path)
    for key, value in state_dict.items():
        if key not in meta.state_dict_metadata:
            raise RuntimeError(f"Missing key in checkpoint state_dict: {key}.")
        rows = shard_of(value)
        lo = np.zeros(value.ndim, int) if rows is None else \
            np.array((rows.start,) + (0,) * (value.ndim - 1))
        out = np.zeros(tuple(value.shape), _dtype.to_jax(value.dtype))
        for offsets, chunk in _chunks(path, meta, key):
            a = np.maximum(lo, offsets)
            b = np.minimum(lo + out.shape, np.add(offsets, chunk.shape))
            if np.all(a < b) or out.ndim == 0:
                out[tuple(slice(x - y, z - y) for x, y, z in zip(a, lo, b))] = \
                    chunk[tuple(slice(x - y, z - y) for x, y, z in zip(a, offsets, b))]
        with no_grad():
            value.copy_(Tensor._wrap(out))
