"""PyTorch's checked conversion of a Python number (or a 0-d Tensor) to a tensor's dtype,
as ``masked_fill`` makes it (``hookgrad/_ops/checked_conversion.py``): what converts, and
the words where it does not; compared with PyTorch where it is installed, and pinned."""
import pytest

from tests.differential import py, raises_as_torch, same_as_torch

ROWS = {
    "masked_fill of an int below int64's": (
        lambda L: L.zeros(2, dtype=L.int64).masked_fill(L.tensor([True, False]), -2 ** 63 - 1),
        OverflowError, r"^can't convert negative int to unsigned$"),
    "masked_fill of a complex into an int": (
        lambda L: L.zeros(2, dtype=L.int64).masked_fill(L.tensor([True, False]), 1 + 1j),
        RuntimeError, r"^value cannot be converted to type int64_t without overflow$"),
    "masked_fill of a real complex past int8's range": (
        lambda L: L.zeros(2, dtype=L.int8).masked_fill_(L.tensor([True, False]), 1e30 + 0j),
        RuntimeError, r"^value cannot be converted to type int8_t without overflow$"),
    "masked_fill of a complex of imaginary nan into a float": (
        lambda L: L.zeros(2).masked_fill(L.tensor([True, False]), complex(0, float("nan"))),
        RuntimeError, r"^value cannot be converted to type float without overflow$"),
    "masked_fill of a complex Tensor into an int8": (
        lambda L: L.zeros(2, dtype=L.int8).masked_fill(L.tensor([True, False]),
                                                       L.tensor(1 + 1j)),
        RuntimeError, r"^value cannot be converted to type int8_t without overflow$"),
    # each part of a complex value is checked against a complex dtype's float (before,
    # 1e40 + 0j filled complex64 with inf where the float 1e40 was refused)
    "masked_fill of a complex past complex64's real range": (
        lambda L: L.zeros(2, dtype=L.complex64).masked_fill(L.tensor([True, False]), 1e40 + 0j),
        RuntimeError, r"^value cannot be converted to type c10::complex<float> without overflow$"),
    "masked_fill of a complex past complex64's imaginary range": (
        lambda L: L.zeros(2, dtype=L.complex64).masked_fill_(L.tensor([True, False]),
                                                             complex(1, -1e40)),
        RuntimeError, r"^value cannot be converted to type c10::complex<float> without overflow$"),
}
# a 0-d Tensor value is read and checked as a number is (PyTorch's ``item()``), whatever
# its own dtype (before, it was cast: 300 wrapped to 44 in int8, 1e5 became inf in float16)
for _name, _dt, _v, _c in (("int8", "int8", "L.tensor(300)", "int8_t"),
                           ("int8 of an int16", "int8", "L.tensor(300, dtype=L.int16)", "int8_t"),
                           ("int8 of 127.5", "int8", "L.tensor(127.5)", "int8_t"),
                           ("int8 of nan", "int8", "L.tensor(float('nan'))", "int8_t"),
                           ("uint8 of -256", "uint8", "L.tensor(-256)", "uint8_t"),
                           ("int32 of 3e9", "int32", "L.tensor(3e9, dtype=L.float64)", "int"),
                           ("int32 of inf", "int32", "L.tensor(float('inf'))", "int"),
                           ("float16 of 1e5", "float16", "L.tensor(1e5)", "c10::Half"),
                           ("float32 of 1e39", "float32", "L.tensor(1e39, dtype=L.float64)",
                            "float")):
    ROWS[f"masked_fill of a 0-d Tensor past {_name}"] = (
        eval(f"lambda L: L.zeros(2, dtype=L.{_dt}).masked_fill_(L.tensor([True, False]), {_v})"),
        RuntimeError, rf"^value cannot be converted to type {_c} without overflow$")
ROWS["masked_fill of the int 2**63 into int64"] = (
    lambda L: L.zeros(2, dtype=L.int64).masked_fill(L.tensor([True, False]), 2 ** 63),
    RuntimeError, r"^value cannot be converted to type int64_t without overflow$")


@pytest.mark.parametrize("call, exc, match", ROWS.values(), ids=ROWS.keys())
def test_a_value_that_does_not_convert_is_refused_as_pytorchs(call, exc, match):
    raises_as_torch(call, exc, match)


def test_masked_fill_takes_a_complex_whose_imaginary_part_is_0_into_a_real_dtype():
    """PyTorch's checked conversion takes a complex of imaginary part 0 (a number or a 0-d
    Tensor) as its real part into a real dtype, and any complex into bool (its truth)."""
    def run(L):
        mask = L.tensor([True, False])
        out = [str(L.zeros(2, dtype=getattr(L, dt)).masked_fill(mask, v).tolist())
               for dt, v in (("int64", 1 + 0j), ("int32", 3.7 + 0j), ("uint8", 0j),
                             ("float32", -2.5 + 0j), ("bool", 1j), ("bool", 0j),
                             ("int64", L.tensor(3.7 + 0j)), ("float32", L.tensor(2 + 0j)),
                             ("bool", L.tensor(1 + 1j)))]
        x = L.zeros(2, dtype=L.int16)
        x.masked_fill_(mask, -4 + 0j)
        return out + [str(x.tolist())]
    got = same_as_torch(run)
    assert got[:2] == ["[1, 0]", "[3, 0]"] and got[-1] == "[-4, 0]"



def test_masked_fill_takes_values_at_the_ends_of_a_range_as_pytorch():
    """The float 2.0**63 passes PyTorch's check for int64 (its largest compared as a double)
    and fills int64's lowest; a 0-d Tensor of the ends, of -255 into uint8 (it wraps), of
    inf into float16 and of 2 into bool fill as numbers do."""
    def run(L):
        mask = L.tensor([True, False])
        out = []
        for dt, v in (("int64", 2.0 ** 63), ("int64", -2.0 ** 63), ("int8", -128.0),
                      ("uint8", -255), ("int64", L.tensor(2.0 ** 63, dtype=L.float64)),
                      ("int8", L.tensor(-128.0)), ("uint8", L.tensor(-255)),
                      ("float16", L.tensor(float("inf"))), ("bool", L.tensor(2)),
                      ("int8", L.tensor(100))):
            out.append(py(L.zeros(2, dtype=getattr(L, dt)).masked_fill(mask, v)))
        x = L.zeros(2, dtype=L.int64)
        x.masked_fill_(mask, L.tensor(2.0 ** 63, dtype=L.float64))
        return out + [x.tolist()]
    got = same_as_torch(run)
    assert got[0] == [-2 ** 63, 0] and got[4] == [-2 ** 63, 0] and got[-1] == [-2 ** 63, 0]


def test_masked_fill_with_a_tensor_value_still_differentiates_into_it():
    def run(L):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        v = L.tensor(5.0, requires_grad=True)
        y = x.masked_fill(L.tensor([True, False, True]), v)
        (y * L.tensor([1.0, 2.0, 3.0])).sum().backward()
        return [y.tolist(), x.grad.tolist(), v.grad.tolist()]
    assert same_as_torch(run)[2] == 4.0
