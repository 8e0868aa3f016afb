"""Index reads of small CPU tensors run on the host (hookgrad/_host_transfer.py): the
part is cut from the array's NumPy value, with no XLA program, and ``.item()`` reads it
with no transfer. The values, dtypes and aliasing are XLA's and PyTorch's."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad
from hookgrad import _host_transfer, _views
from tests.differential import py, same_as_torch


def _reads(L, dtype):
    x = L.arange(60).reshape(3, 4, 5).to(getattr(L, dtype))
    if x.is_complex():
        x = x * (1 - 2j)

    def out(t):  # complex numbers as (real, imaginary) pairs
        return py(L.view_as_real(t) if t.is_complex() else t)
    return [out(x[1]), out(x[2, 1:3]), out(x[:, 2, ::2]), repr(x[1, 2, 3].item()),
            out(x.transpose(0, 2)[1:3, 0]), out(x[-1, -1]), out(x[0, None, 1:2, ...])]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool",
                                   "float16", "complex64"])
def test_reads_of_a_small_tensor_are_pytorchs(dtype):
    same_as_torch(lambda L: _reads(L, dtype))


@pytest.mark.parametrize("index", [(1,), (2, slice(1, 3)), (slice(None), 2, slice(None, None, 2)),
                                   (1, 2, 3), (0, None, slice(1, 2))])
def test_a_host_read_is_the_array_xla_reads(index):
    x = hookgrad.randn(3, 4, 5)
    got = x[index]._data
    want = jnp.asarray(np.asarray(x._data))[index]
    assert got.dtype == want.dtype and got.shape == want.shape
    assert not got._committed and not got.weak_type
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_reading_a_small_tensor_in_a_loop_runs_no_program():
    labels = hookgrad.tensor([[(i * 7) % 10] * 3 for i in range(173)])  # a shape of its own
    before = hookgrad.compile_count()
    got = [labels[i, 1].item() for i in range(173)]
    rows = [labels[i].tolist() for i in range(0, 173, 17)]
    assert got == [(i * 7) % 10 for i in range(173)]
    assert rows == [[(i * 7) % 10] * 3 for i in range(0, 173, 17)]
    assert hookgrad.compile_count() == before


def test_a_large_tensor_is_read_by_xla():
    x = hookgrad.arange(float(_host_transfer.HOST_MAX + 1))
    assert _host_transfer.host_copy(x._data) is None
    assert x[7].item() == 7.0 and x[-1].item() == float(_host_transfer.HOST_MAX)


def test_a_view_of_a_small_tensor_follows_writes_to_its_base():
    def run(L):
        base = L.zeros(4, 5)
        row, col = base[1], base[:, 2]
        out = []
        for i in range(3):
            base[1, i] = float(i + 1)
            row[4] += 10.0
            out += [py(row), py(col), row[i].item(), base[1, 4].item()]
        return out
    same_as_torch(run)


def test_a_committed_or_weakly_typed_array_is_read_by_xla():
    cpu = jax.devices("cpu")[0]
    assert _host_transfer.host_copy(jax.device_put(np.ones(3, np.float32), cpu)) is None
    assert _host_transfer.host_copy(jnp.asarray(1.5)) is None  # weakly typed
    arr = jnp.ones(3, jnp.float32)
    assert _host_transfer.host_copy(arr) is not None


def test_a_remembered_value_is_the_arrays_own():
    arr = jnp.arange(6, dtype=jnp.int32)
    value = _host_transfer.host_copy(arr)
    np.testing.assert_array_equal(value, np.arange(6))
    assert _host_transfer.known(arr) is value
    assert _host_transfer.known(arr + 0) is None  # another array: not known
    part = _views._gather(arr, (2,), (1,), 3)
    np.testing.assert_array_equal(_host_transfer.known(part), [3, 4])


def test_a_remembered_value_goes_with_its_array():
    # the value remembered is the array's, not a view holding the array: once nothing
    # else holds it, the array dies and its entry with it
    import gc
    import weakref
    arr = jnp.arange(6, dtype=jnp.int32) + 1
    value = _host_transfer.host_copy(arr)
    np.testing.assert_array_equal(value, np.arange(1, 7))
    assert not value.flags.writeable
    key, alive = id(arr), weakref.ref(arr)
    assert key in _host_transfer._known
    del arr
    gc.collect()
    assert alive() is None and key not in _host_transfer._known
    np.testing.assert_array_equal(value, np.arange(1, 7))  # the value stays the reader's


def test_a_host_read_keeps_its_value_when_the_base_is_written_in_place():
    base = hookgrad.arange(12.0).reshape(3, 4) + 0
    part = base[1]._data  # the read's own array: the view Tensor is gone
    pending = base[1] * 1  # deferred: computed after the writes below
    for i in range(3):  # writes that may donate the base's buffer (nothing else holds it)
        base[1] = float(i)
        base[:, 2] = float(-i)
    np.testing.assert_array_equal(np.asarray(part), [4, 5, 6, 7])
    assert pending.tolist() == [4, 5, 6, 7]
    assert base.tolist() == [[0, 1, -2, 3], [2, 2, -2, 2], [8, 9, -2, 11]]


@pytest.mark.parametrize("dtype", ["float32", "int16", "bool", "bfloat16", "complex64"])
def test_bool_of_an_xla_held_tensor_reads_its_value_with_no_program(dtype):
    # bool(t) is a one-element read, as .item(): no XLA program (a reshape) runs first
    for fill in (0, 1):
        # (a small ``full`` is held on the host: its XLA copy, made afresh, is read here)
        t = hookgrad.Tensor._wrap(hookgrad.full((1,) * 9, fill, dtype=getattr(hookgrad, dtype))
                                  ._data.copy())
        assert t._arr.__class__ is not hookgrad._host_value.Host
        before = hookgrad.compile_count()
        assert bool(t) is bool(fill)
        assert hookgrad.compile_count() == before


def test_bool_is_pytorchs():
    same_as_torch(lambda L: [bool(v) for v in (
        L.tensor(float("nan")), L.zeros(1, 1, dtype=L.bool), L.ones(1, dtype=L.int8),
        L.tensor([0j]), L.tensor(-0.0), (L.arange(3.0) > 1).any(), (L.arange(3) > 0).all())])


def test_integer_arange_reads_back_on_the_host_with_no_transfer(monkeypatch):
    # generate's ``arange(n, device=d).view(1, -1) + pos[..., -1:]``: the positions were
    # made on the host (held there, or remembered by their XLA copy: ``device="cpu"``), so
    # reading them there copies nothing back from the device
    copies = []
    host_copy = _host_transfer.host_copy

    def counted(arr):
        if _host_transfer.known(arr) is None:
            copies.append(arr.shape)
        return host_copy(arr)
    monkeypatch.setattr(_host_transfer, "host_copy", counted)
    x = hookgrad.ones(2, 3, dtype=hookgrad.int64)
    got = []
    for t in (hookgrad.arange(5), hookgrad.arange(2, 9, 2, device=x.device),
              hookgrad.arange(3, dtype=hookgrad.int32, device="cpu")):
        got.append([py(t.view(1, -1)), py(t[1:]), t[-1].item()])
    assert copies == []
    assert got == same_as_torch(lambda L: [
        [py(t.view(1, -1)), py(t[1:]), t[-1].item()]
        for t in (L.arange(5), L.arange(2, 9, 2), L.arange(3, dtype=L.int32))])


def test_a_view_made_each_step_of_a_host_held_tensor_is_copied_to_xla_once(monkeypatch):
    """``labels.view(-1)`` made anew each step (transformers' loss) reads the same values
    of a host-held tensor: XLA gets one copy of them, while a write to the tensor (or a
    view of other values) gets its own. The losses are PyTorch's."""
    from hookgrad import _host_value
    puts = []
    real = _host_value._put
    monkeypatch.setattr(_host_value, "_put", lambda v, small: (
        v.dtype.kind == "i" and puts.append(v.shape)) or real(v, small))  # the labels

    def run(L):
        x = L.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])
        labels = L.tensor([0, 2])
        out = [py(L.nn.functional.cross_entropy(x, labels.view(-1))) for _ in range(4)]
        labels[0] = 1  # an in-place write: the next step's values differ
        out += [py(L.nn.functional.cross_entropy(x, labels.view(-1))) for _ in range(2)]
        out.append(py(L.nn.functional.cross_entropy(x[:1], labels[1:])))  # another part
        return out
    same_as_torch(run)
    assert puts == [(2,), (2,), (1,)]


def test_views_of_host_op_results_made_anew_each_step_are_copied_to_xla_once(monkeypatch):
    """BERT's ``gather(buffer.expand(1, -1), 1, pos).expand(2, n)`` and GPT-2's
    ``pad(labels, (0, 1), value=-100)[..., 1:].contiguous().view(-1)``: a host op's result
    is new memory each step, with the same values; the views of such read-only memory
    share their XLA copies by value, so one transfer serves every step. Each result keeps
    memory of its own: a write into one shows in no other, and their roots' addresses
    differ, as PyTorch's storages do."""
    from hookgrad import _host_value
    puts = []
    real = _host_value._put
    monkeypatch.setattr(_host_value, "_put", lambda v, small: (
        v.dtype.kind == "i" and puts.append(v.shape)) or real(v, small))  # the integers
    # (the pool is the process's, bounded: earlier tests' copies filling it would empty it
    # midway through this one)
    monkeypatch.setattr(_host_value, "_copies", {})

    def run(L):
        F = L.nn.functional
        emb = L.nn.Embedding(3, 2)
        with L.no_grad():
            emb.weight.copy_(L.tensor([[0.5, -1.0], [2.0, 1.5], [0.25, -0.5]]))
        buffer, pos = L.tensor([[0, 1, 0, 2]]), L.tensor([[0, 1, 2, 3]])
        labels = L.tensor([[1, 0, 2], [2, 2, 1]])
        x = L.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]] * 3)
        out, kept = [], []
        for _ in range(4):
            types = L.gather(buffer.expand(1, -1), 1, pos).expand(2, 4)
            shift = F.pad(labels, (0, 1), value=-100)[..., 1:].contiguous().view(-1)
            out += [py(emb(types)), py(F.cross_entropy(x, shift))]
            kept.append((types, shift))
        kept[0][1][0] = 2  # (a write into one step's labels: the others keep theirs)
        out += [py(t) for pair in kept for t in pair]
        roots = {pair[1]._base.data_ptr() if pair[1]._base is not None else
                 pair[1].data_ptr() for pair in kept}
        assert len(roots) == len(kept)
        return out
    same_as_torch(run)
    assert puts == [(2, 4), (6,)] + [(2, 3)] * 4  # then each root's own copy (data_ptr)


def test_numbers_placed_while_jax_traces_keeps_no_tracer():
    # a number first seen inside a trace is passed as it is: a scalar made there would be a
    # tracer, and kept, the next call outside the trace would get it
    seen = []

    @jax.jit
    def f(x):
        seen.append(_host_transfer.numbers_placed((x, 7.3125)))
        return x

    f(jnp.ones(2))
    assert seen[0][1] == 7.3125 and seen[0][1].__class__ is float
    outside = _host_transfer.numbers_placed((jnp.ones(2), 7.3125))
    assert not isinstance(outside[1], jax.core.Tracer)
    assert float(outside[1]) == 7.3125


def test_an_op_on_a_cpu_array_read_before_goes_to_numpy_first(monkeypatch):
    """``out[i] = base * (i % 7) + i * 0.01`` row by row: ``base``, a small CPU array whose
    values the host stage read at the first row, takes its later rows' ``*`` to NumPy at
    once, not through the deferred forward's walk first (which only found NumPy due).
    Where another argument is pending or requires grad, the op goes on as before: a
    deferred value, a recorded node. The values and gradients are PyTorch's."""
    from hookgrad._ops import lazy
    walked = []
    real = lazy._walk
    monkeypatch.setattr(lazy, "_walk", lambda op, *rest: walked.append(op.name) or real(op, *rest))

    def rows(L):
        base, out = L.arange(8.0), L.zeros(6, 8)
        for i in range(6):
            out[i] = base * (i % 7) + i * 0.01
        return py(out)
    same_as_torch(rows)
    assert walked.count("mul") <= 1  # the first row's, where ``base`` was not read yet

    def declined(L):
        w = L.arange(8.0)
        w * 2  # read on the host: its values are known from now on
        x = L.linspace(-1.0, 1.0, 8).requires_grad_()
        y = w * x  # recorded: x requires grad
        y.sum().backward()
        z = L.ones(80, 80) @ L.ones(80, 8)  # a deferred value (lazy forward)
        return [py(y), py(x.grad), py(w * z[3]), py(w * z[:, 0][:8])]
    same_as_torch(declined)
