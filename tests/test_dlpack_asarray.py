"""DLPack exchange and torch.asarray, against PyTorch."""
import warnings

import numpy as np
import pytest

import hookgrad
from tests.differential import py, raises, same_as_torch


def test_from_dlpack_reads_other_libraries_arrays():
    def run(L):
        capsule = L.to_dlpack(L.arange(3.0))
        once = L.from_dlpack(capsule)
        return [py(L.from_dlpack(np.arange(3.0))), py(L.from_dlpack(np.arange(4).reshape(2, 2))),
                str(L.from_dlpack(np.ones(2, np.float32)).dtype).split(".")[1], py(once),
                raises(L.from_dlpack, capsule), raises(L.from_dlpack, 3)]
    got = same_as_torch(run)
    assert got[3] == [0.0, 1.0, 2.0] and got[4]["raises"] == "RuntimeError"


def test_tensors_cross_both_ways():
    torch = pytest.importorskip("torch")
    assert hookgrad.from_dlpack(torch.arange(3)).tolist() == [0, 1, 2]
    assert torch.from_dlpack(hookgrad.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
    assert np.from_dlpack(hookgrad.ones(2)).tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="Can't export tensors that require gradient"):
        hookgrad.ones(2, requires_grad=True).__dlpack__()


def test_asarray():
    def run(L):
        t = L.ones(2, requires_grad=True)
        y = t * 2
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            same = L.asarray(y)
        copied = L.asarray(y, copy=True)
        wide = L.asarray(y, dtype=L.float64)
        plain = L.asarray(y, requires_grad=False)
        return [same is y, len(w), copied is y, copied.grad_fn.name(), wide.grad_fn.name(),
                plain is y, plain.requires_grad, py(plain),
                str(L.asarray([1, 2]).dtype).split(".")[1],
                str(L.asarray([1.0, 2]).dtype).split(".")[1], list(L.asarray(3).shape),
                py(L.asarray(np.arange(3))), py(L.asarray(b"\x01\x02", dtype=L.uint8)),
                L.asarray([1.0, 2.0], requires_grad=True).requires_grad,
                py(L.asarray(L.to_dlpack(L.arange(2.0)))),
                raises(lambda: L.asarray([1, 2], requires_grad=True)),
                raises(lambda: L.asarray(object()))]
    got = same_as_torch(run)
    assert got[0] is True and got[1] == 1 and got[3] == "CloneBackward0"
