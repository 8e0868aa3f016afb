"""PyTorch's checked conversion of a Python number (or a 0-d Tensor) to a tensor's dtype,
as ``masked_fill`` makes it (``hookgrad/_ops/checked_conversion.py``): what converts, and
the words where it does not; compared with PyTorch where it is installed, and pinned."""
import pytest

from tests.differential import raises_as_torch, same_as_torch

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

