"""PyTorch's checkpoint container: an uncompressed zip whose records all sit under one
folder (``<archive>/data.pkl``, ``<archive>/data/<key>``, ...), each record's data
aligned to 64 bytes as PyTorch's writer aligns it (so PyTorch can memory-map it)."""
import os
import struct
import zipfile

ALIGNMENT = 64
_LOCAL_HEADER = 30
_ZIP64_LOCAL_EXTRA = 20
_CORRUPT_HINT = (" If you are seeing this error, there is a high likelihood that your "
                 "checkpoint file is corrupted. This can happen if the checkpoint was not saved "
                 "properly, was transferred incorrectly, or the file was modified after saving.")


def archive_name(f):
    """The archive's folder name, as PyTorch picks it: the file's stem, else ``archive``."""
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        if stem:
            return stem
    return "archive"


class Writer:
    """Writes records into a zip, data aligned to ``ALIGNMENT`` bytes."""

    def __init__(self, fileobj, name):
        self._zip = zipfile.ZipFile(fileobj, "w", zipfile.ZIP_STORED)
        self._name = name

    def write(self, record, data):
        data = memoryview(data).cast("B")
        info = zipfile.ZipInfo(f"{self._name}/{record}")
        info.compress_type = zipfile.ZIP_STORED
        info.file_size = len(data)
        zip64 = info.file_size * 1.05 > zipfile.ZIP64_LIMIT  # zipfile's own threshold
        start = (self._zip.fp.tell() + _LOCAL_HEADER + len(info.filename.encode("utf-8"))
                 + (_ZIP64_LOCAL_EXTRA if zip64 else 0))
        pad = -start % ALIGNMENT
        if 0 < pad < 4:  # an extra field needs 4 bytes of header
            pad += ALIGNMENT
        if pad:
            # NOTE: PyTorch's writer pads with an extra field of id "FB" the same way
            info.extra = b"FB" + struct.pack("<H", pad - 4) + b"Z" * (pad - 4)
        with self._zip.open(info, "w", force_zip64=zip64) as out:
            out.write(data)

    def close(self):
        self._zip.close()


class Reader:
    """Reads the records of a checkpoint zip, raising PyTorch's reader errors."""

    def __init__(self, fileobj):
        try:
            self._zip = zipfile.ZipFile(fileobj, "r")
            names = self._zip.namelist()
        except (zipfile.BadZipFile, EOFError, OSError, ValueError) as e:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: "
                               f"{_reason(e)}." + _CORRUPT_HINT) from None
        if not names:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: the archive has "
                               "no records." + _CORRUPT_HINT)
        self._prefix = names[0].split("/", 1)[0]
        self._names = set(names)

    def has(self, record):
        return f"{self._prefix}/{record}" in self._names

    def read(self, record):
        name = f"{self._prefix}/{record}"
        if name not in self._names:
            raise RuntimeError(f"PytorchStreamReader failed locating file {record}: file not "
                               "found. The zip archive is not a PyTorch checkpoint (torch.save "
                               "writes <archive>/data.pkl)." + _CORRUPT_HINT)
        try:
            return self._zip.read(name)
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError) as e:
            raise RuntimeError(f"PytorchStreamReader failed reading file {record}: "
                               f"{_reason(e)}." + _CORRUPT_HINT) from None

    def close(self):
        self._zip.close()


def _reason(exc):
    text = str(exc).rstrip(".") or type(exc).__name__
    return text[0].lower() + text[1:]
