"""finfo/iinfo, the unsigned and 8-bit float dtypes, and the legacy tensor types
(``torch.FloatTensor``), against PyTorch."""
import pytest

from tests.differential import py, raises, same_as_torch

_FLOATS = ["float32", "float16", "bfloat16", "complex64", "float8_e4m3fn", "float8_e5m2",
           "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"]
_INTS = ["uint8", "int8", "int16", "int32", "uint16", "uint32", "int64", "uint64"]


def _fields(info, names):
    return {n: getattr(info, n) for n in names} | {"repr": repr(info)}


@pytest.mark.parametrize("name", _FLOATS)
def test_finfo(name):
    got = same_as_torch(lambda L: _fields(L.finfo(getattr(L, name)), [
        "bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"]))
    assert got["dtype"] == name.replace("complex64", "float32")


def test_finfo_of_the_default_dtype():
    got = same_as_torch(lambda L: _fields(L.finfo(), ["eps", "dtype"]))
    assert got["dtype"] == "float32" and got["eps"] == 2.0 ** -23


@pytest.mark.parametrize("name", _INTS)
def test_iinfo(name):
    got = same_as_torch(lambda L: _fields(L.iinfo(getattr(L, name)), ["bits", "max", "min",
                                                                      "dtype"]))
    assert got["dtype"] == name and isinstance(got["max"], int)


@pytest.mark.parametrize("call, message", [
    (lambda L: L.finfo(L.int32), r"torch.finfo\(\) requires a floating point input type"),
    (lambda L: L.iinfo(L.float32), r"torch.iinfo\(\) requires an integer input type"),
    (lambda L: L.iinfo(L.bool), r"torch.bool is not supported by torch.iinfo"),
    (lambda L: L.finfo("float32"), r"must be torch.dtype, not str"),
])
def test_info_rejects(call, message):
    got = same_as_torch(lambda L: raises(call, L))
    assert got["raises"] == "TypeError"
    with pytest.raises(TypeError, match=message):
        import hookgrad
        call(hookgrad)


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64", "float8_e4m3fn",
                                  "float8_e5m2", "float8_e8m0fnu"])
def test_new_dtypes(name):
    def run(L):
        d = getattr(L, name)
        x = L.tensor([1.0, 2.0, 4.0]).to(d)
        return {"props": [d.is_floating_point, d.is_signed, d.itemsize],
                "type": x.type(), "back": py(x.float()), "dtype": str(x.dtype).split(".")[1]}
    got = same_as_torch(run)
    assert got["back"] == [1.0, 2.0, 4.0] and got["dtype"] == name


@pytest.mark.parametrize("name, dtype", [("FloatTensor", "float32"), ("LongTensor", "int64"),
                                         ("BoolTensor", "bool"), ("ByteTensor", "uint8"),
                                         ("HalfTensor", "float16"), ("IntTensor", "int32")])
def test_legacy_tensor_types(name, dtype):
    def run(L):
        cls = getattr(L, name)
        made = cls([1, 0, 1])
        return {"values": py(made), "dtype": str(made.dtype).split(".")[1],
                "sized": list(cls(2, 3).shape), "size": list(cls(L.Size([4])).shape),
                "empty": list(cls().shape), "is": isinstance(made, cls),
                "float is": isinstance(L.ones(2), cls), "not a tensor": isinstance([1], cls),
                "subclass": issubclass(cls, L.Tensor), "name": cls.__name__,
                "converted": str(L.ones(2).type(cls).dtype).split(".")[1],
                "type": L.ones(2).type(cls).type()}
    got = same_as_torch(run)
    assert got["dtype"] == dtype and got["is"] and got["float is"] == (dtype == "float32")


def test_legacy_tensor_type_rejects_another_dtype():
    got = same_as_torch(lambda L: raises(L.FloatTensor, L.ones(2, dtype=L.int64)))
    assert got["raises"] == "TypeError"
