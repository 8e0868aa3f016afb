"""Loops whose constants change reuse their programs (issue 32): slice and index
positions, row numbers and Python numbers are arguments of one program, not constants of
one program each. ``hookgrad.compile_count()`` counts the programs JAX traces; after a
loop's first iterations (and the background compiles they start) it stays flat.

Each loop's result is checked against PyTorch's."""
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad
from hookgrad._ops import host_tier, tiered
from tests.differential import py, same_as_torch


def _flat_after_warmup(body, n, warm=12):
    """Run ``body(i)`` for ``i < warm``, let the compiles they started end, then return
    how many programs ``n`` more iterations (new positions and values) traced. (A chain of
    pending ops becomes one program at its fourth sighting, ``lazy.COMPILE_AT``: the warm
    up lets every chain of the loop get there.)"""
    for i in range(warm):
        body(i)
    tiered.wait()
    before = hookgrad.compile_count()
    for i in range(warm, warm + n):
        body(i)
    tiered.wait()
    return hookgrad.compile_count() - before


def test_the_count_grows_with_a_new_program():
    before = hookgrad.compile_count()
    # a signature nothing else uses, past the host stage's bound (smaller, NumPy runs it)
    hookgrad.ones(3, 5, 7, 200).amax(dim=(0, 3))
    assert hookgrad.compile_count() > before


def _synthetic_images(L, n=24):
    """The issue's idiom: read positions with ``.item()``, add blobs by slice writes."""
    where = L.tensor([(i * 5) % 3 for i in range(n)])
    imgs = L.zeros(n, 2, 24, 24)
    for i in range(n):
        w = where[i].item()
        r0, c0 = (2, 9, 14)[w], (3, 11, 15)[(i * 7) % 3]
        imgs[i, 0, r0:r0 + 8, c0:c0 + 8] += 2.0
        imgs[i, 1, c0:c0 + 4, r0:r0 + 4] = imgs[i, 1, c0:c0 + 4, r0:r0 + 4] - 1.0
    return imgs


def test_slice_writes_at_changing_positions_reuse_their_programs():
    imgs = hookgrad.zeros(42, 2, 24, 24)
    where = hookgrad.tensor([(i * 5) % 3 for i in range(42)])

    def body(i):
        w = where[i % 42].item()
        r0, c0 = (2, 9, 14)[w], (3, 11, 15)[(i * 7) % 3]
        imgs[i % 42, 0, r0:r0 + 8, c0:c0 + 8] += 2.0
        imgs[i % 42, 1, c0:c0 + 4, r0:r0 + 4] = imgs[i % 42, 1, c0:c0 + 4, r0:r0 + 4] - 1.0

    assert _flat_after_warmup(body, 30) == 0
    same_as_torch(lambda L: py(_synthetic_images(L).sum(dim=(2, 3))))


def _row_fill(L, n=30):
    base = L.arange(16.0)
    out = L.zeros(n, 16)
    for i in range(n):
        out[i] = base * (i % 7) + i * 0.01
    return out


def test_row_fills_with_changing_rows_and_numbers_reuse_their_programs():
    base = hookgrad.arange(16.0)
    out = hookgrad.zeros(60, 16)

    def body(i):
        out[i % 60] = base * (i % 7) + i * 0.01

    assert _flat_after_warmup(body, 50) == 0
    same_as_torch(lambda L: py(_row_fill(L)))


_LENGTHS = (3, 7, 5, 9)


def _ragged(L, n=16):
    seqs = [L.arange(float(_LENGTHS[i % 4] * 2)).reshape(-1, 2) + i for i in range(n)]
    batch = L.zeros(n, 9, 2)
    for i, seq in enumerate(seqs):
        batch[i, :seq.shape[0]] = seq
    return batch


def test_ragged_writes_reuse_one_program_per_length():
    seqs = [hookgrad.ones(_LENGTHS[i % 4], 2) * i for i in range(60)]
    batch = hookgrad.zeros(60, 9, 2)

    def body(i):
        batch[i % 60, :seqs[i % 60].shape[0]] = seqs[i % 60]

    assert _flat_after_warmup(body, 50, warm=16) == 0
    same_as_torch(lambda L: py(_ragged(L)))


def test_scalar_operands_with_changing_values_reuse_their_programs():
    x = hookgrad.linspace(-1.0, 1.0, 50)
    got = []

    def body(i):
        got.append((x * (i * 0.5) + i).clamp(-3.0, 3.0 + i).sum().item())

    assert _flat_after_warmup(body, 30) == 0
    xs = np.linspace(-1.0, 1.0, 50, dtype=np.float32)
    want = [float(np.clip(xs * (i * 0.5) + i, -3.0, 3.0 + i).sum()) for i in range(42)]
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_reads_at_changing_positions_reuse_their_programs():
    x = hookgrad.arange(200.0).reshape(20, 10)
    got = []

    def body(i):
        got.append((x[i % 20, i % 10].item(), x[:, i % 10][i % 20].item(),
                    x.narrow(1, i % 7, 3).sum().item(), x.select(0, i % 20)[2:5].sum().item()))

    assert _flat_after_warmup(body, 30) == 0
    a = np.arange(200.0).reshape(20, 10)
    want = [(a[i % 20, i % 10], a[i % 20, i % 10], a[:, i % 7:i % 7 + 3].sum(),
             a[i % 20, 2:5].sum()) for i in range(42)]
    np.testing.assert_allclose(got, want)


def test_writes_through_views_at_changing_positions_reuse_their_programs():
    base = hookgrad.zeros(12, 8)
    rows = base[2:10]  # a live view: every write to base is read into it again

    def body(i):
        base[i % 12, i % 5:i % 5 + 3] = float(i)
        rows[i % 8, 1] += 1.0

    assert _flat_after_warmup(body, 30) == 0
    ref = np.zeros((12, 8))
    for i in range(42):
        ref[i % 12, i % 5:i % 5 + 3] = i
        ref[2 + i % 8, 1] += 1.0
    np.testing.assert_array_equal(np.asarray(base.numpy()), ref)
    np.testing.assert_array_equal(np.asarray(rows.numpy()), ref[2:10])


def test_a_write_at_a_position_keeps_the_recorded_gradient():
    def run(L):
        x = L.arange(12.0, requires_grad=True)
        out = L.zeros(4, 6)
        for i in range(4):
            out[i, i:i + 3] = x[3 * i:3 * i + 3] * (i + 1)
        (out * L.arange(24.0).reshape(4, 6)).sum().backward()
        return py(out), py(x.grad), out.grad_fn.name()
    same_as_torch(run)


@pytest.mark.parametrize("index", [(-1, slice(None, -2)), (Ellipsis, 1), (None, 2, slice(1, 4)),
                                   (slice(None, None, 2), 0), (1, Ellipsis, None)])
def test_writes_of_every_index_form_match_pytorch(index):
    def run(L):
        x = L.arange(30.0).reshape(5, 6)
        v = L.ones(1) * -1
        x[index] = v
        x[index] += 2.0
        return py(x)
    same_as_torch(run)


def _written_in_place(write, base):
    """Whether ``write()`` wrote into ``base``'s buffer (donated: the old array is gone)
    rather than into a copy of it."""
    old = base._data
    held = old.unsafe_buffer_pointer()
    del old
    write()
    return base._data.unsafe_buffer_pointer() == held


def test_a_slice_write_into_an_array_nobody_else_holds_writes_in_place():
    n = host_tier.BOUND // 128 + 8  # too large to be written on the host
    base = hookgrad.zeros(n, 128)
    v = hookgrad.ones(64)
    for i in range(3):
        base[i, :64] = v * i
    tiered.wait()
    base[3, :64] = v * 3  # compiled from here on
    assert _written_in_place(lambda: base.__setitem__((4, slice(0, 64)), v * 4), base)
    rows = base[10:20]  # a live view: its write lands in the base in place too
    for i in range(4):
        rows[i, 1:3] = 5.0
    tiered.wait()
    assert _written_in_place(lambda: rows.__setitem__((5, slice(1, 3)), 6.0), base)
    expected = np.zeros((n, 128), np.float32)
    for i in range(5):
        expected[i, :64] = i
    expected[10:14, 1:3] = 5.0
    expected[15, 1:3] = 6.0
    np.testing.assert_array_equal(base.numpy(), expected)
    np.testing.assert_array_equal(rows.numpy(), expected[10:20])


def test_a_slice_write_copies_what_something_else_still_holds():
    base = hookgrad.zeros(64, 8)
    for i in range(4):
        base[i, :4] = float(i)
    tiered.wait()
    kept = base._data  # as a saved tensor, a pending op or a user's reference would
    base[5, :4] = 7.0
    assert not kept.is_deleted()
    assert float(kept[5, 0]) == 0.0 and float(base[5, 0]) == 7.0
    x = hookgrad.zeros(64, 8, requires_grad=True).clone()
    y = x * 2  # saves nothing of x; the write is recorded: no donation while recording
    x[3, :4] = 1.0
    assert x.grad_fn.name() == "torch::autograd::CopySlices"
    assert y.sum().item() == 0.0


def test_an_augmented_slice_assignment_counts_its_writes_as_pytorch():
    def run(L):
        x = L.arange(16.0).reshape(4, 4)
        row = x[2]
        x[1, :2] += 1.0          # the view adds in place, then is assigned back
        x[0] = x[3]              # another region's view: copied
        x[3, 1:] *= x[0, 1:]
        x[..., 0] = x[:, 0] - 1
        return py(x), x._version, py(row), row._version
    same_as_torch(run)
