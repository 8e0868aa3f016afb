"""Deferred forward (hookgrad/_ops/lazy.py): an op output nobody has read is computed when
read, a repeated segment of pending ops as one compiled program. Nothing a user can see
changes: values and gradients, errors at the call that causes them, ``_version``, saved-
tensor checks; a pending value read inside a trace is concrete.

Small CPU values that nothing records run on the host instead (``stages/host.py``) while no
argument is pending; a test of deferral whose chain starts from a user's Tensor starts it
from one past the host stage's bound (``XL``), as a model's activations do."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg
from hookgrad._host_transfer import HOST_MAX
from hookgrad._engine import fusion_forward
from hookgrad._ops import lazy, lazy_segment
from hookgrad._tensor import Pending
from tests import _lazy_caches
from tests.autograd.test_fusion import X, chain, jax_chain
from tests.differential import raises, same_as_torch

RUNS = lazy.COMPILE_AT + 1  # op by op, then compiled, then cached
XL = np.tile(np.float32(X), (1, HOST_MAX // 3 + 1))  # each row past the host stage's bound


@pytest.fixture
def cache(monkeypatch):
    """An empty segment cache and trace for the test: what it compiles is what it counts
    (ops another test left pending, never read, would join its first segment)."""
    _lazy_caches.empty(monkeypatch)
    # the forward's segments run apart, as these tests count and look at their programs
    # (a repeated step's last one runs inside the backward's: tests/autograd/test_fusion_forward.py)
    monkeypatch.setattr(fusion_forward, "ON", [False])
    return lazy_segment


def test_a_repeated_segment_compiles_once_and_gives_eager_values(cache):
    x = hg.tensor(X, requires_grad=True)
    c = hg.tensor(0.5)
    want = jax.value_and_grad(jax_chain)(jnp.asarray(X), jnp.asarray(0.5))
    for run in range(RUNS):
        x.grad = None
        loss = chain(hg, x, c)
        # nothing ran yet (on a first run, ops new to these shapes have run, each once)
        assert run == 0 or loss._arr.__class__ is Pending
        assert loss.shape == () and loss.dtype is hg.float32  # metadata runs nothing
        assert run == 0 or loss._arr.__class__ is Pending
        loss.backward()
        np.testing.assert_allclose(loss.item(), want[0], rtol=1e-6)
        np.testing.assert_allclose(x.grad.numpy(), want[1], rtol=1e-5, atol=1e-7)
    assert len(cache._compiled) == 1


def test_an_array_several_ops_read_is_one_argument_of_the_segment(cache, monkeypatch):
    # a weight or constant read by every other op of a chain: passed to the compiled
    # segment once (each argument costs the call its own dispatch), with eager values
    x = hg.tensor(XL, requires_grad=True)
    c, d = hg.tensor(np.full_like(XL, 0.5)), hg.tensor(np.full_like(XL, 0.25))
    calls = []
    real = lazy.tiered.Program.call_ready

    def counted(self, *leaves, **how):
        calls.append(leaves)
        return real(self, *leaves, **how)
    monkeypatch.setattr(lazy.tiered.Program, "call_ready", counted)

    def run(t):
        return ((t * c).sin() * c + d * c).tanh() * d

    with hg.autograd.set_lazy_forward(False):
        want = run(x).detach().numpy()
    for _ in range(RUNS):
        calls.clear()
        got = run(x)
        np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-6)
    assert len(cache._compiled) == 1
    (leaves,) = calls
    assert len(leaves) == 3 and {id(v) for v in leaves} == {id(x._data), id(c._data),
                                                            id(d._data)}


def test_turned_off_every_op_runs_when_called(cache):
    x = hg.tensor(X)
    with hg.autograd.set_lazy_forward(False):  # the public switch, beside set_backward_fusion
        assert not hg.autograd.is_lazy_forward_enabled()
        for _ in range(RUNS):
            assert chain(hg, x, 0.5)._arr.__class__ is not Pending
    assert hg.autograd.is_lazy_forward_enabled()
    assert not cache._compiled and not cache._seen


def test_a_value_dropped_unread_is_recomputed_for_a_later_reader(cache):
    x = hg.tensor(X)
    for _ in range(RUNS):
        a = x * 2
        b, c = a + 1, a + 2
        del a  # nobody can read it: the first segment does not return it
        np.testing.assert_allclose(b.numpy(), np.array(X) * 2 + 1, rtol=1e-6)
        np.testing.assert_allclose(c.numpy(), np.array(X) * 2 + 2, rtol=1e-6)


def test_ops_sharing_pending_arguments_run_after_them(cache):
    x = hg.tensor(X, requires_grad=True)
    want = jax.grad(lambda a: (a * 2 + jnp.sin(a * 2) * (a * 2)).sum())(jnp.asarray(X))
    for _ in range(RUNS):
        x.grad = None
        a = x * 2
        d = a + a.sin() * a  # a diamond: a feeds sin, mul and add
        d.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-5)


def test_a_shape_error_is_raised_by_the_op_that_causes_it():
    def f(torch):
        a = torch.ones(2, 3)
        for _ in range(RUNS):
            b = a * 2  # its signature is known: deferred
        # a new signature runs now, and fails now
        return raises(lambda: b + torch.ones(4)), b.tolist()
    got = same_as_torch(f)
    assert got[0]["raises"] == "RuntimeError" and "must match the size" in got[0]["message"]


def test_an_inplace_write_on_a_pending_value_bumps_its_version_and_fails_backward():
    def f(torch):
        x = torch.tensor(X, requires_grad=True)
        for _ in range(RUNS):
            a = x * 2
            b = a.sin()  # saves a
            a.mul_(3)
        err = raises(lambda: b.sum().backward())
        return a._version, err["raises"], err["message"].split(":")[0], a.tolist()
    got = same_as_torch(f)
    assert got[:3] == (1, "RuntimeError", "one of the variables needed for gradient "
                       "computation has been modified by an inplace operation")


def test_a_pending_value_read_inside_a_trace_is_concrete():
    x = hg.tensor(X)
    for _ in range(RUNS):
        y = (x * 2).sin()
    assert y._arr.__class__ is Pending
    seen = []

    @jax.jit
    def f(a):
        seen.append(y._data)
        return a + y._data
    out = f(jnp.ones((2, 3)))
    assert not isinstance(seen[0], jax.core.Tracer)
    np.testing.assert_allclose(out, 1 + np.sin(np.array(X) * 2), rtol=1e-6)
    np.testing.assert_allclose(y.numpy(), np.sin(np.array(X) * 2), rtol=1e-6)


def test_the_compiled_mode_sees_values_made_eagerly():
    x = hg.tensor(X)
    for _ in range(RUNS):
        y = (x * 2).sin()

    @hg.compile
    def step(a):
        return a + y
    np.testing.assert_allclose(step(hg.ones(2, 3)).numpy(), 1 + np.sin(np.array(X) * 2),
                               rtol=1e-6)


@pytest.mark.skipif(not jax.config.read("jax_enable_x64"), reason="needs JAX's 64-bit mode")
def test_a_value_deferred_before_a_new_default_dtype_keeps_the_old_one(cache):
    x = hg.tensor([1, 2, 3] * (HOST_MAX // 3 + 1))
    for _ in range(RUNS):
        y = (x * 1.5) * 2  # integer times float: the default dtype
    assert y._arr.__class__ is Pending
    try:
        hg.set_default_dtype(hg.float64)
        assert y.dtype is hg.float32  # computed when called, as eagerly
        np.testing.assert_array_equal(y.numpy(), np.float32([3, 6, 9] * (HOST_MAX // 3 + 1)))
        assert y.numpy().dtype == np.float32
        assert (x * 1.5).dtype is hg.float64
    finally:
        hg.set_default_dtype(hg.float32)


def test_a_model_forward_stays_deferred_through_its_device_idioms(cache):
    # a forward's positions made on its input's device, views of pending values, a .to()
    # of that device, .device asked on the way: none of them computes or pins anything
    x = hg.tensor(XL)
    for run in range(RUNS):
        h = (x * 2).view(-1)
        pos = hg.arange(h.shape[0], device=h.device)
        assert not pos._data._committed  # named, the default device pins nothing
        y = (h.to(h.device) + pos).reshape(x.shape).transpose(0, 1)
        assert run == 0 or (h._arr.__class__ is Pending and y._arr.__class__ is Pending)
        assert y.device == x.device and h.device == hg.device("cpu")
        assert run == 0 or y._arr.__class__ is Pending
        want = (XL * 2).reshape(-1) + np.arange(XL.size)
        np.testing.assert_allclose(y.numpy(), want.reshape(XL.shape).T, rtol=1e-6)
    assert len(cache._compiled) == 1


def test_a_copy_of_a_pending_value_stays_deferred(cache):
    # generate's ``logits[:, -1].to(copy=True, dtype=torch.float32)``: a copy, no read
    x = hg.tensor(XL)
    for run in range(RUNS):
        h = x * 2
        y = h.to(copy=True, dtype=hg.float32)
        assert y is not h and y.dtype is hg.float32
        assert run == 0 or (h._arr.__class__ is Pending and y._arr.__class__ is Pending)
        np.testing.assert_allclose(y.numpy(), XL * 2, rtol=1e-6)


def test_the_op_past_the_depth_bound_starts_the_next_segment(cache, monkeypatch):
    # the chain behind it runs as one segment; the op itself waits, as the first of the next
    monkeypatch.setattr(lazy, "MAX_DEPTH", 4)
    x = hg.tensor(X, requires_grad=True)
    want = np.asarray(X) * 2 ** 6
    for run in range(RUNS):
        x.grad = None
        ys = [x]
        for _ in range(6):
            ys.append(ys[-1] * 2)
        waiting = [y._arr.__class__ is Pending and y._arr.value is None for y in ys]
        assert run == 0 or waiting == [False] * 5 + [True] * 2
        ys[-1].sum().backward()
        np.testing.assert_allclose(ys[-1].detach().numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(x.grad.numpy(), np.full(np.shape(X), 2.0 ** 6))


def test_the_chains_of_the_op_past_the_depth_bound_run_as_one_segment(cache, monkeypatch):
    # an op taking two chains at the bound runs both as one segment, with every other op
    # pending (``c``'s chain): one XLA call, not one per argument
    monkeypatch.setattr(lazy, "MAX_DEPTH", 4)
    x = hg.tensor(XL)
    segments = []
    run_segment = lazy_segment._run_segment
    monkeypatch.setattr(lazy_segment, "_run_segment", lambda nodes, *plan: segments.append(
        len(nodes)) or run_segment(nodes, *plan))
    for run in range(RUNS):
        a, b, c = x, x, x
        for _ in range(4):
            a, b, c = a * 2, b + 1, c - 1
        del segments[:]
        y, z = a - b, c * c  # the same chain twice: its ops run once
        assert run == 0 or (segments == [12] and y._arr.value is None)
        np.testing.assert_allclose(y.numpy(), XL * 16 - (XL + 4), rtol=1e-6)
        np.testing.assert_allclose(z.numpy(), (XL - 4) ** 2, rtol=1e-5)


def test_a_chain_run_by_a_read_is_not_cut_at_the_depth_bound(cache, monkeypatch):
    # reading ``h`` ran every pending op, ``g`` among them: the ops made from ``g`` start
    # a new chain, so they wait
    monkeypatch.setattr(lazy, "MAX_DEPTH", 4)
    x = hg.tensor(XL)
    for run in range(RUNS):
        h = x * 2 * 2 * 2
        g = h * 2
        np.testing.assert_allclose(h.numpy(), XL * 8, rtol=1e-6)
        row, y = g[0, 1:], g * 2  # an index read, then an op
        assert run == 0 or (g._arr.value is not None and y._arr.value is None and
                            row._arr.value is None)
        np.testing.assert_allclose(y.numpy(), XL * 32, rtol=1e-6)
        np.testing.assert_allclose(row.numpy(), XL[0, 1:] * 16, rtol=1e-6)


def test_a_thread_uses_and_reads_another_threads_pending_values(cache):
    # each thread defers into its own trace: a pending value of another joins this one's
    import threading
    x = hg.tensor(XL)
    for run in range(RUNS):
        a = x * 2 + 1
        got = {}
        worker = threading.Thread(target=lambda: got.update(b=(a * 3).numpy(), c=a * 4))
        worker.start()
        worker.join()
        assert run == 0 or a._arr.__class__ is Pending
        np.testing.assert_allclose(got["b"], (XL * 2 + 1) * 3, rtol=1e-6)
        np.testing.assert_allclose(a.numpy(), XL * 2 + 1, rtol=1e-6)
        np.testing.assert_allclose(got["c"].numpy(), (XL * 2 + 1) * 4, rtol=1e-6)


def test_attention_without_a_mask_defers(cache):
    # None operands (attention's left-out mask, its dropout key) join the segment
    q = hg.tensor(np.random.default_rng(0).standard_normal((1, 2, 3, 700)).astype(np.float32))
    assert q.numel() > HOST_MAX
    F = hg.nn.functional
    for run in range(RUNS):
        h = q * 2
        a = F.scaled_dot_product_attention(h, h, h)
        y = a.transpose(2, 3) + 1
        assert run == 0 or (a._arr.__class__ is Pending and y._arr.__class__ is Pending)
        with hg.autograd.set_lazy_forward(False):
            want = F.scaled_dot_product_attention(q * 2, q * 2, q * 2).numpy().swapaxes(2, 3) + 1
        np.testing.assert_allclose(y.numpy(), want, rtol=1e-5)
    assert len(cache._compiled) == 1


def test_dropout_defers_with_the_key_drawn_when_called(cache):
    # the key is drawn at the call, as eagerly: the same seed gives the same masks and grads
    x = hg.tensor(X, requires_grad=True)
    got = {}
    for lazy_on in (True, False):
        hg.manual_seed(0)
        with hg.autograd.set_lazy_forward(lazy_on):
            runs = []
            for run in range(RUNS):
                x.grad = None
                y = hg.nn.functional.dropout(x * 2, 0.5) + 1
                assert not lazy_on or run == 0 or y._arr.__class__ is Pending
                y.sum().backward()
                runs.append((y.detach().numpy(), x.grad.numpy()))
        got[lazy_on] = runs
    for (y1, g1), (y2, g2) in zip(got[True], got[False]):
        np.testing.assert_array_equal(y1, y2)
        np.testing.assert_array_equal(g1, g2)


def test_a_segment_holding_a_dropout_key_compiles_with_the_eager_masks(cache):
    # the key is a leaf of the segment's program, which its key describes (shape, dtype)
    x = hg.tensor(XL)
    got = {}
    for lazy_on in (True, False):
        hg.manual_seed(0)
        with hg.autograd.set_lazy_forward(lazy_on):
            got[lazy_on] = [(hg.nn.functional.dropout(x * 2, 0.5) + 1).sum(0).numpy()
                            for _ in range(RUNS + 1)]
    assert len(cache._compiled) == 1
    for y1, y2 in zip(got[True], got[False]):
        np.testing.assert_array_equal(y1, y2)


def test_the_outputs_of_a_multi_output_op_defer_and_compute_together(cache):
    # GPT-2 splits its fused qkv projection: the pieces stay pending, one program gives
    # them all, and values and gradients are eager's
    w = hg.tensor(np.random.default_rng(0).standard_normal((2, 6)).astype(np.float32),
                  requires_grad=True)
    for run in range(RUNS):
        w.grad = None
        q, k, v = (w * 2).split(2, dim=-1)
        a, b = (w + 1).chunk(2, dim=0)
        rows = w.unbind(0)[1] * 3
        assert run == 0 or all(t._arr.__class__ is Pending for t in (q, k, v, a, b, rows))
        y = q * k + v
        assert run == 0 or y._arr.__class__ is Pending
        got = [t.detach().numpy() for t in (y, a, b, rows)]
        (y.sum() + a.sum() * b.sum() + rows.sum()).backward()

        def want_fn(w):
            q, k, v = jnp.split(w * 2, 3, axis=-1)
            a, b = jnp.split(w + 1, 2, axis=0)
            return q * k + v, a, b, w[1] * 3

        def loss(w):
            y, a, b, rows = want_fn(w)
            return y.sum() + a.sum() * b.sum() + rows.sum()
        w0 = jnp.asarray(w.detach().numpy())
        for g, e in zip(got, want_fn(w0)):
            np.testing.assert_allclose(g, e, rtol=1e-6)
        np.testing.assert_allclose(w.grad.numpy(), jax.grad(loss)(w0), rtol=1e-5)


@pytest.mark.parametrize("grad", [False, True])
def test_the_pieces_of_a_split_at_the_depth_bound_run_with_it(cache, monkeypatch, grad):
    # the split joins the trace at the bound's last op, so its first piece starts the next
    # segment: running the trace computes the split, and every piece gets its value
    monkeypatch.setattr(lazy, "MAX_DEPTH", 4)

    def pieces(L):
        w = L.tensor(XL, requires_grad=grad)
        q, k, v = (w * 2 * 2 * 2).split(XL.shape[1] // 3, dim=1)
        y = q * k + v
        if grad:
            y.sum().backward()
        return [y.detach().tolist(), w.grad.tolist() if grad else None]

    for run in range(RUNS + 1):
        same_as_torch(pieces)


def test_a_multi_output_op_runs_once_for_all_its_outputs(cache, monkeypatch):
    computed = []
    settle = lazy_segment._settle

    def counting(q, v):
        if q.aval.__class__ is tuple:
            computed.append(q.op.name)
        return settle(q, v)
    monkeypatch.setattr(lazy_segment, "_settle", counting)
    x = hg.tensor(XL)
    for run in range(RUNS):
        computed.clear()
        parts = (x * 2).split(1, dim=0)
        sums = [p.sum() for p in parts]
        assert run == 0 or all(s._arr.__class__ is Pending for s in sums)
        assert [s.item() for s in sums] == pytest.approx(
            [float(np.sum(XL[i] * 2)) for i in range(len(parts))], rel=1e-5)
        # read one by one, the pieces were all computed with the first read
        assert computed == ([] if run == 0 else [computed[0]])


@pytest.mark.parametrize("grad", [False, True])
def test_basic_indexing_of_a_pending_value_defers(cache, grad):
    # Llama's rotate_half, x[..., :d] and x[..., d:] of a pending x, with and without a
    # graph: nothing is computed until read, and the forward repeats as one program
    W = np.random.default_rng(1).standard_normal((2, 3, 700)).astype(np.float32)
    assert W.size > HOST_MAX  # without a graph, a smaller w * 2 would run on the host
    pending = []

    def rotated(L):
        w = L.tensor(W, requires_grad=grad)
        x = w * 2
        d = x.shape[-1] // 2
        x1, x2 = x[..., :d], x[..., d:]
        y = L.cat((-x2, x1), dim=-1) * x
        if L is hg:
            pending.append(all(t._arr.__class__ is Pending for t in (x1, x2, y)))
        if grad:
            y.sum().backward()
        return [y.detach().tolist(), w.grad.tolist() if grad else None]

    compiled = []
    for run in range(RUNS + 1):  # the first run learns the ops' output types
        same_as_torch(rotated)
        compiled.append(len(cache._compiled))
    assert all(pending[1:])
    assert compiled[-1] == compiled[-2] >= 1  # compiled once, then reused


@pytest.mark.parametrize("write", ["base", "piece", "row"])
def test_writes_through_the_views_a_deferred_split_made_are_seen_by_all(cache, write):
    # split and unbind make views: an in-place write to the base or to one piece shows
    # in the others, as eagerly, though the pieces were pending when it happened
    def pieces(L):
        a = L.tensor(np.arange(12., dtype=np.float32).reshape(3, 4))
        got = []
        for run in range(RUNS):
            x = a * 2
            q = x.split(2, dim=-1)
            u = x.unbind(0)
            {"base": lambda: x.add_(1), "piece": lambda: q[0].mul_(10),
             "row": lambda: u[1].zero_()}[write]()
            got.append([t.tolist() for t in (x, *q, *u)])
        return got
    same_as_torch(pieces)


def test_a_segment_run_op_by_op_leaves_out_what_nobody_can_read(cache, monkeypatch):
    """On a segment's first sightings its ops run one by one; an op whose value nobody can
    read (its Tensor dropped, nothing pending reads it) is not run, as the compiled
    segment leaves it out, and still runs for a later reader of its pending value."""
    x = hg.tensor(XL)
    x.sin(), x.cos(), x.exp()  # (each op's first call with these types runs eagerly)
    ran = []
    real = lazy_segment._run_one
    monkeypatch.setattr(lazy_segment, "_run_one", lambda q: ran.append(q) or real(q))
    a, b = x.sin(), x.cos()
    c = b.exp()
    kept = b._arr
    del b, c  # nothing can read the cos or the exp any more
    np.testing.assert_allclose(a.numpy(), np.sin(XL), rtol=1e-6)
    assert len(ran) == 1 and kept.value is None
    np.testing.assert_allclose(np.asarray(lazy.force(kept)), np.cos(XL), rtol=1e-6)


def test_a_compiled_segment_takes_its_python_numbers_with_no_transfer(cache):
    # a segment's numbers (slice positions, scales) go in as JAX scalars kept per value:
    # jaxlib would otherwise put each on the device at every run (a guarded transfer)
    def f(L, x):
        y = x * 2.5 + 3
        return (y[:, 1:5] - y[:, :4] * -0.0).sum(1).tolist()

    x = hg.tensor(XL)
    for _ in range(2 * RUNS):  # (its first runs learn the ops' output types)
        got = f(hg, x)
        if cache._compiled:
            break
    assert len(cache._compiled) == 1
    assert f(hg, x) == got  # the compiled segment, its numbers kept
    with jax.transfer_guard_host_to_device("disallow"):
        again = f(hg, x)
    assert again == got
    same_as_torch(lambda L: f(L, L.tensor(XL)))


def test_an_index_read_of_a_pending_value_joins_the_trace_when_made(cache, monkeypatch):
    # rotate_half's x[..., :d] of a pending x is in the trace as soon as it is made: the op
    # that takes it finds it there (a read left outside joined only once that op's walk
    # missed it, then walked the op again); values as eagerly
    W = np.random.default_rng(2).standard_normal((2, 3, 700)).astype(np.float32)
    w = hg.tensor(W)
    want = np.concatenate((-W[..., 350:] * 2, W[..., :350] * 2), -1) * (W * 2)
    ready = []
    real = lazy._ready
    monkeypatch.setattr(lazy, "_ready", lambda *a: ready.append(a[0].n) or real(*a))
    for run in range(RUNS):
        x = w * 2
        x1, x2 = x[..., :350], x[..., 350:]
        if run:
            assert x1._arr in lazy._local.trace.index and x2._arr in lazy._local.trace.index
        y = hg.cat((-x2, x1), dim=-1) * x
        np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)
    assert ready == []  # no op met a pending argument outside its trace


def test_a_chain_a_hundred_ops_deep_runs_as_one_segment(cache, monkeypatch):
    # a small transformer's decode step (two blocks, the head, generate's stop check) is
    # ~100 ops in a row: one segment, one XLA call, not cut in two at a depth of 64
    x = hg.tensor(XL)
    segments = []
    run_segment = lazy_segment._run_segment
    monkeypatch.setattr(lazy_segment, "_run_segment", lambda nodes, *plan: segments.append(
        len(nodes)) or run_segment(nodes, *plan))
    for run in range(RUNS):
        del segments[:]
        y = x
        for _ in range(50):
            y = y * 1.0078125 - 0.0078125
        np.testing.assert_allclose(y.numpy(), (XL - 1) * 1.0078125 ** 50 + 1, rtol=1e-4)
        assert run == 0 or segments == [100]
