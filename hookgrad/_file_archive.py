"""``torch.PyTorchFileReader`` and ``torch.PyTorchFileWriter``: the record-level reader and
writer of PyTorch's checkpoint zip (``torch.save``'s container), over hookgrad's own
(``hookgrad/_serialization/_archive.py``)."""
from __future__ import annotations

import os
import random
import struct

from ._serialization import _archive
from ._storage import TypedStorage, UntypedStorage

_LOCAL_HEADER = struct.Struct("<4s5H3L2H")  # a zip local file header (30 bytes)


def _serialization_id() -> str:
    return str(random.getrandbits(128) % 10 ** 40).zfill(40)


class PyTorchFileWriter:
    """``PyTorchFileWriter(file_name_or_buffer, compute_crc32=True, storage_alignment=64)``:
    writes named records into a checkpoint zip; ``write_end_of_file()`` adds the
    ``version``, ``byteorder`` and serialization-id records and closes it."""

    def __init__(self, file, compute_crc32: bool = True, storage_alignment: int = 64):
        if storage_alignment != _archive.ALIGNMENT:
            raise NotImplementedError(f"hookgrad does not implement torch.PyTorchFileWriter "
                                      f"with storage_alignment={storage_alignment} yet (only "
                                      f"{_archive.ALIGNMENT})")
        self._file = open(file, "wb") if isinstance(file, (str, os.PathLike)) else None
        self._name = _archive.archive_name(file)
        self._writer = _archive.Writer(self._file or file, self._name)
        self._written, self._id, self._min_version = set(), "", 1

    def write_record(self, name: str, data, size: int) -> None:
        """Write ``size`` bytes of ``data`` (bytes, or a storage) as the record ``name``."""
        if isinstance(data, int):
            raise NotImplementedError("hookgrad does not implement writing a record from a "
                                      "memory address yet: pass bytes")
        if isinstance(data, str):
            data = data.encode("latin-1")
        if isinstance(data, TypedStorage):
            data = data.untyped()
        if isinstance(data, UntypedStorage):
            data = bytes(data.tolist())
        self._writer.write(name, memoryview(data).cast("B")[:size])
        self._written.add(name)

    def set_min_version(self, version: int) -> None:
        self._min_version = max(self._min_version, int(version))

    def archive_name(self) -> str:
        return self._name

    def get_all_written_records(self) -> set:
        return set(self._written)

    def serialization_id(self) -> str:
        return self._id

    def write_end_of_file(self) -> None:
        """Write the closing records and close the archive."""
        self._id = _serialization_id()
        for name, data in (("version", f"{max(self._min_version, 3)}\n".encode()),
                           ("byteorder", b"little"),
                           (".data/serialization_id", self._id.encode())):
            if name not in self._written:
                self.write_record(name, data, len(data))
        self._writer.close()
        if self._file is not None:
            self._file.close()


class PyTorchFileReader:
    """``PyTorchFileReader(file_name_or_buffer)``: reads the records of a checkpoint zip."""

    def __init__(self, file):
        self._file = open(file, "rb") if isinstance(file, (str, os.PathLike)) else file
        self._reader = _archive.Reader(self._file)
        self._prefix = self._reader._prefix

    def get_record(self, name: str) -> bytes:
        return self._reader.read(name)

    def has_record(self, name: str) -> bool:
        return self._reader.has(name)

    def get_all_records(self) -> list:
        n = len(self._prefix) + 1
        return [r[n:] for r in self._reader._zip.namelist()]

    def _info(self, name):
        if not self.has_record(name):
            self.get_record(name)  # PyTorch's "failed locating file" error
        return self._reader._zip.getinfo(f"{self._prefix}/{name}")

    def get_record_offset(self, name: str) -> int:
        """The byte offset of the record's data in the file."""
        info = self._info(name)
        self._file.seek(info.header_offset)
        header = _LOCAL_HEADER.unpack(self._file.read(_LOCAL_HEADER.size))
        return info.header_offset + _LOCAL_HEADER.size + header[-2] + header[-1]

    def get_record_size(self, name: str) -> int:
        return self._info(name).file_size

    def serialization_id(self) -> str:
        rec = ".data/serialization_id"
        return self.get_record(rec).decode() if self.has_record(rec) else ""

    def get_storage_from_record(self, name: str, numel: int, dtype):
        raise NotImplementedError("hookgrad does not implement "
                                  "torch.PyTorchFileReader.get_storage_from_record yet: read "
                                  "the bytes with get_record")
