"""The window functions, against PyTorch."""
import pytest

from tests.differential import py, raises, same_as_torch


@pytest.mark.parametrize("call", [
    lambda L: L.hann_window(5), lambda L: L.hann_window(6, periodic=False),
    lambda L: L.hamming_window(4, periodic=False), lambda L: L.hamming_window(5, True, 0.5, 0.5),
    lambda L: L.blackman_window(7), lambda L: L.bartlett_window(5),
    lambda L: L.bartlett_window(6, False), lambda L: L.kaiser_window(6),
    lambda L: L.kaiser_window(5, False, 8.0), lambda L: L.hann_window(1),
    lambda L: L.hann_window(0), lambda L: L.hann_window(4, dtype=L.float64),
])
def test_windows(call):
    got = same_as_torch(lambda L: {"values": py(call(L)),
                                   "dtype": str(call(L).dtype).split(".")[1]}, tol=1e-6)
    assert got["dtype"] in ("float32", "float64")


@pytest.mark.parametrize("call", [lambda L: L.hann_window(3, dtype=L.int32),
                                  lambda L: L.kaiser_window(-1)])
def test_bad_windows(call):
    got = same_as_torch(lambda L: raises(call, L))
    assert got["raises"] == "RuntimeError"

