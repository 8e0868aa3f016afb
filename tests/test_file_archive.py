"""torch.PyTorchFileReader / PyTorchFileWriter: the checkpoint zip's records, written by
one library and read by the other."""
import io

import pytest

import hookgrad
from tests.differential import raises, same_as_torch

try:
    import torch
except ImportError:
    torch = None


def _write(L, buf):
    w = L.PyTorchFileWriter(buf)
    w.write_record("a.txt", b"hello", 5)
    w.write_record("b", b"\x00\x01\x02\x03", 4)
    w.write_record("c", L.arange(3, dtype=L.uint8).untyped_storage(), 2)
    before = [w.archive_name(), sorted(w.get_all_written_records()), w.serialization_id()]
    w.write_end_of_file()
    return before + [len(w.serialization_id())]


def _read(L, buf):
    r = L.PyTorchFileReader(buf)
    return [sorted(r.get_all_records()), r.has_record("a.txt"), r.has_record("zz"),
            r.get_record("a.txt"), r.get_record("c"), r.get_record_offset("b") % 64,
            len(r.serialization_id()), raises(r.get_record, "zz")["raises"]]


def test_write_then_read():
    def run(L):
        buf = io.BytesIO()
        written = _write(L, buf)
        buf.seek(0)
        return written + _read(L, buf) + [raises(L.PyTorchFileReader, io.BytesIO(b"notzip"))]
    got = same_as_torch(run)
    assert got[:3] == ["archive", ["a.txt", "b", "c"], ""]
    assert got[4] == [".data/serialization_id", "a.txt", "b", "byteorder", "c", "version"]


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
def test_archives_cross_between_the_libraries(tmp_path):
    for writer, reader in ((hookgrad, torch), (torch, hookgrad)):
        path = str(tmp_path / f"{writer.__name__}.pt")
        _write(writer, path)
        assert _read(reader, path) == _read(writer, path)
        r = reader.PyTorchFileReader(path)
        with open(path, "rb") as f:
            f.seek(r.get_record_offset("a.txt"))
            assert f.read(5) == b"hello"
    path = str(tmp_path / "saved.pt")
    torch.save({"x": torch.arange(3.0)}, path)
    assert hookgrad.PyTorchFileReader(path).has_record("data.pkl")
