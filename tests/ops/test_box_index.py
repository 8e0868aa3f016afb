"""Index reads and writes of ints and unit-step slices in loops (issue 32): the read is
deferred until its value is needed, ``x[idx] op= v`` runs as one program and
``x[idx] = v`` as one box write (``hookgrad/_ops/box_index.py``). Each is checked against
PyTorch: values, ``_version`` of the base and its views, and errors."""
import numpy as np
import pytest

import hookgrad
from hookgrad._ops import tiered
from tests.differential import py, raises, same_as_torch


def test_a_read_is_a_live_view_of_later_writes():
    def run(L):
        x = L.arange(60.0).reshape(3, 4, 5)
        v = x[1, 1:3]          # not read yet when the base is written
        x[1, 2, 0] = -1.0
        x[1, 1:3] += 10.0
        return py(v), v._version, x._version, py(x[-1, -2:, 1:-1])
    same_as_torch(run)


def test_augmented_writes_match_pytorch_values_and_versions():
    def run(L):
        x = L.zeros(6, 3, 8, 8)
        row = x[2]                      # a live view the writes must keep current
        for i in range(6):
            r, c = (1, 3, 5)[i % 3], (0, 2, 4)[(i * 2) % 3]
            x[i, 0, r:r + 3, c:c + 3] += 2.0
            x[i, i % 3, c:c + 2, r:r + 2] -= 0.5
            x[i, 2, r:r + 2, :] *= 3.0
            x[-i - 1, 1, r] /= 2.0
        return py(x.sum(dim=(2, 3))), x._version, py(row.sum()), row._version
    same_as_torch(run)


def test_an_op_deferred_on_the_view_before_its_write_keeps_the_old_value():
    def run(L):
        x = L.arange(24.0).reshape(4, 6)
        v = x[1, 2:5]
        w = v * 2               # reads the view as it is now
        v += 1.0
        x[2, :3] += w
        return py(w), py(v), py(x)
    same_as_torch(run)


@pytest.mark.parametrize("value", [3, 2.5, True, "row", "column", "leading ones", "int tensor"])
def test_box_writes_match_pytorch(value):
    def run(L):
        x = L.zeros(4, 5, 6)
        v = {"row": L.arange(6.0), "column": L.arange(3.0).reshape(3, 1),
             "leading ones": L.ones(1, 1, 3, 6) * 7, "int tensor": L.arange(6)}.get(value, value)
        x[1, 2:5] = v
        x[-1, -3:] = v
        y = L.zeros(4, 5, 6, dtype=L.int32)
        y[2, 1:4] = v
        return py(x), x._version, py(y), y._version
    same_as_torch(run)


def test_errors_match_pytorch():
    def run(L):
        x = L.zeros(3, 4, 5)
        out = [raises(lambda: x[3, 0]), raises(lambda: x[0, -5]),
               raises(lambda: x.__setitem__((1, 4, slice(0, 2)), 1.0)),
               raises(lambda: x.__setitem__((1, slice(0, 2)), L.ones(3, 5))),
               raises(lambda: x.__setitem__((1, slice(0, 2)), L.ones(2, 1, 5)))]
        v = x[1, :2]
        out.append(raises(lambda: v.add_(L.ones(3, 2, 5))))
        y = L.zeros(2, 3, dtype=L.int64)
        w = y[0, 1:]
        out.append(raises(lambda: w.add_(0.5)))
        return out, x._version, py(x), y._version
    got = same_as_torch(run)
    assert [e.get("raises") for e in got[0]] == ["IndexError"] * 3 + ["RuntimeError"] * 4


def _written_in_place(base, write):
    old = base._data
    held = old.unsafe_buffer_pointer()
    del old
    write()
    return base._data.unsafe_buffer_pointer() == held


def test_an_augmented_write_into_an_array_nobody_else_holds_reuses_its_buffer():
    imgs = hookgrad.zeros(16, 3, 32, 32)
    for i in range(4):
        imgs[i, 0, 2:10, 4:12] += 2.0
    tiered.wait()
    imgs[4, 0, 2:10, 4:12] += 2.0  # compiled from here on

    def write():
        imgs[5, 0, 3:11, 4:12] += 2.0
    assert _written_in_place(imgs, write)
    kept = imgs._data  # held elsewhere: the write copies, the kept array is intact
    imgs[6, 0, 2:10, 4:12] += 2.0
    assert not kept.is_deleted() and float(kept[6, 0, 2, 4]) == 0.0
    assert float(imgs[6, 0, 2, 4]) == 2.0
    expected = np.zeros((16, 3, 32, 32), np.float32)
    for i in range(5):
        expected[i, 0, 2:10, 4:12] = 2.0
    expected[5, 0, 3:11, 4:12] = 2.0
    expected[6, 0, 2:10, 4:12] = 2.0
    np.testing.assert_array_equal(imgs.numpy(), expected)


def test_writes_that_record_take_the_recorded_path():
    def run(L):
        w = L.ones(3, 4, requires_grad=True)
        x = w * 1.0
        v = x[1, 1:3]
        v += 2.0
        x[2, :2] = w[0, :2] * 3
        x.sum().backward()
        return py(x), x.grad_fn.name(), py(w.grad), x._version
    same_as_torch(run)


@pytest.mark.parametrize("idx", [
    (1,), (None, 1), (Ellipsis, 2), (1, Ellipsis, slice(1, 3)), (None, Ellipsis, None, 0),
    (slice(None), None, -1, Ellipsis), (0, None, slice(1, None), Ellipsis, None),
    (Ellipsis,), (None,), (2, 1, slice(-3, None), 0)],
    ids=repr)
@pytest.mark.parametrize("deferred", [False, True], ids=["array", "deferred"])
def test_reads_and_writes_of_basic_indices_match_pytorch(idx, deferred):
    """Shape, strides, offset and values of the view, a write through it, a write of the
    index, and the versions; on a large array (no host read) and on a deferred one."""
    def run(L):
        x = L.arange(30 * 40 * 5 * 6.0).reshape(30, 40, 5, 6)
        if deferred:
            x = x * 1.0
        v = x[idx]
        out = [list(v.shape), list(v.stride()), v.storage_offset(), py(v.sum()), py(x[5:2])]
        v.mul_(-1)
        x[idx] = x[idx] + 7.0
        return out + [py(x.sum()), py(v.sum()), x._version, v._version]
    same_as_torch(run)


def test_a_remembered_index_reads_as_the_first_time_and_keys_by_type():
    """The same index read again (a model's ``x[..., :h]`` each call) gives PyTorch's view
    each time, on other shapes too; a bool or NumPy int equal to a remembered int, and a
    slice of them, are not taken for it."""
    def run(L):
        out = []
        for shape in ((4, 6, 8), (4, 6, 8), (2, 3, 5), (4, 6, 8)):
            x = L.arange(float(np.prod(shape))).reshape(shape) * 1.0
            for idx in ((Ellipsis, slice(None, 2)), (slice(None), slice(-1, None)),
                        (Ellipsis, None), (1, slice(None, 3)), (slice(None), -1), 1, True,
                        (np.int64(1), slice(None, 3)), (slice(None), slice(np.int64(1), None)),
                        (Ellipsis, slice(None, 2))):
                v = x[idx]
                out.append([list(v.shape), list(v.stride()), v.storage_offset(), py(v.sum())])
            out.append(raises(lambda: x[4, :3]))
        return out
    same_as_torch(run)
