"""The legacy typed storage classes (torch.FloatStorage, ...) and Tensor.storage_type,
against PyTorch."""
import pytest

import hookgrad
from tests._storage_warning import quiet as _quiet
from tests.differential import raises, same_as_torch

KINDS = ["BFloat16", "Bool", "Byte", "Char", "ComplexDouble", "ComplexFloat", "Double", "Float",
         "Half", "Int", "Long", "Short"]


def test_isinstance_asks_for_a_typed_storage_of_the_dtype():
    def run(L):
        x = L.ones(2)
        return [[isinstance(x.storage(), getattr(L, k + "Storage")) for k in KINDS],
                isinstance(L.ones(2, dtype=L.int64).storage(), L.LongStorage),
                isinstance(x.storage(), L.Storage), isinstance(x.untyped_storage(), L.StorageBase),
                isinstance(x.storage(), L.StorageBase), isinstance(x, L.FloatStorage),
                [str(getattr(L, k + "Storage").dtype).split(".")[1] for k in KINDS],
                L.FloatStorage.__name__]
    got = same_as_torch(_quiet(run))
    assert got[0][KINDS.index("Float")] is True and sum(got[0]) == 1


def test_constructing_makes_a_typed_storage():
    def run(L):
        a, b, c = L.DoubleStorage([1, 2.5]), L.FloatStorage(3), L.LongStorage()
        return [a.tolist(), str(a.dtype).split(".")[1], b.size(), len(b), c.size(),
                type(a).__name__, L.is_storage(b), isinstance(a, L.DoubleStorage),
                raises(L.FloatStorage, "a")]
    got = same_as_torch(_quiet(run))
    assert got[0] == [1.0, 2.5] and got[5] == "TypedStorage"


def test_storage_type():
    got = same_as_torch(_quiet(lambda L: [L.ones(2).storage_type().__name__,
                                          L.ones(2, dtype=L.int64).storage_type().__name__,
                                          L.ones(2).storage_type() is L.FloatStorage]))
    assert got == ["FloatStorage", "LongStorage", True]


def test_quantized_storages_have_no_tensors():
    assert hookgrad.QInt8Storage.dtype is hookgrad.qint8
    with pytest.raises(NotImplementedError, match="hookgrad does not implement tensors of "
                                                  "dtype torch.qint8"):
        hookgrad.QInt8Storage(2)
