"""Saved layout values left out of a deferred segment's program (hookgrad/_ops/lazy_layout.py):
a ``t`` of a weight, a ``reshape`` of a value the program returns, saved by the next op,
is not an output of the forward's program; the fused backward rebuilds it in its own, any
other read runs its op alone. What is seen stays PyTorch's: gradients, ``_saved_*``,
saved-tensor hooks, version checks, double backward, a later read of the Tensor."""

import jax
import numpy as np
import pytest

import hookgrad as hg
from hookgrad._engine import fusion_forward, fusion_layout
from hookgrad._ops import lazy_layout, lazy_segment, tiered
from hookgrad._tensor import Pending
from tests import _lazy_caches
from tests.differential import py, raises_as_torch, same_as_torch
from tests.ops.test_lazy_forward import RUNS, XL

# (small: ``tanh`` of the projection stays off its flat tails, so every gradient counts)
W = np.linspace(-1.0, 1.0, XL.shape[1] * 6, dtype=np.float32).reshape(6, XL.shape[1]) / \
    (np.abs(XL).sum(1).max() + 1)


@pytest.fixture
def cache(monkeypatch):
    """Empty segment and region caches, and an empty trace (ops another test left pending
    would join the first segment); yields the positions each segment's program returned."""
    _lazy_caches.empty(monkeypatch, regions=True)
    # the forward's segments run apart, as these tests count and look at their programs
    # (a repeated step's last one runs inside the backward's: tests/autograd/test_fusion_forward.py)
    monkeypatch.setattr(fusion_forward, "ON", [False])
    outs = []
    real = lazy_segment._run_segment

    def spy(nodes, plan):
        outs.append([nodes[k] for k in plan[2]])
        return real(nodes, plan)
    monkeypatch.setattr(lazy_segment, "_run_segment", spy)
    return outs


def forward(L, x, w):
    """A projection through ``t`` of the weight (``mm`` saves it, ``x`` requiring grad),
    a ``reshape`` of a value
    the program returns (``tanh``'s, which it saves), saved by ``mul``."""
    h = (x @ w.t()).tanh()
    r = h.reshape(-1, 3)
    return (r * r).sum(), r


def _below(fn, name):
    """The first node named ``name`` below ``fn`` (first edges first)."""
    while fn.name() != name:
        fn = next(f for f, _ in fn.next_functions if f is not None)
    return fn


_seen_saved = []


def _saved_pendings():
    return list({id(p): p for p in _seen_saved
                 if p.__class__ is Pending and p.saved == lazy_layout.LEFT}.values())


def steps(L, runs=RUNS + 2, create_graph=False, read_first=True):
    x = L.tensor(XL, requires_grad=True)
    w = L.tensor(W, requires_grad=True)
    got = []
    for _ in range(runs):
        w.grad = None
        loss, r = forward(L, x, w)
        if L is hg:  # the saved values, before any read
            node, mm = _below(loss.grad_fn, "MulBackward0"), _below(loss.grad_fn, "MmBackward0")
            _seen_saved[:] = [s[0] for s in node._stored if s.__class__ is tuple]
            _seen_saved.extend(s[0] for s in mm._stored if s.__class__ is tuple)
        del r
        if read_first:  # the segment runs for the loss (else for the backward's first read)
            loss.item()
        loss.backward(create_graph=create_graph)
        got.append([loss.item(), py(w.grad)])
    return got


def test_saved_layout_values_leave_the_program_and_gradients_stay_torchs(cache):
    # (the last forwards run compiled; the backward's region then sees the same values
    # left out twice, and runs compiled)
    got = same_as_torch(steps)
    assert len(got) == RUNS + 2
    # the last forward's program returned neither the ``t`` nor the ``reshape``: both
    # were rebuilt by the backward, which left them pending
    assert sorted(p.op.name for p in _saved_pendings()) == ["reshape", "t"]
    assert all(p.value is None for p in _saved_pendings())
    returned = {q.op.name for q in cache[-1]}
    assert "t" not in returned and "reshape" not in returned and "tanh" in returned


def test_the_value_whose_read_runs_the_segment_is_given_out(cache):
    # the backward's first read (``mul``'s saved ``r``) runs the forward: ``r`` is an
    # output of the program, the ``t`` is left out
    same_as_torch(lambda L: steps(L, read_first=False))
    assert [p.op.name for p in _saved_pendings()] == ["t"]
    assert "reshape" in {q.op.name for q in cache[-1]}


def test_turned_off_every_saved_value_is_returned(cache, monkeypatch):
    monkeypatch.setattr(lazy_layout, "ON", [False])
    same_as_torch(steps)
    assert not _saved_pendings()
    assert {"t", "reshape"} <= {q.op.name for q in cache[-1]}


def test_node_by_node_the_backward_runs_each_left_out_op_alone(cache):
    with hg.autograd.set_backward_fusion(False):
        same_as_torch(steps)
    assert sorted(p.op.name for p in _saved_pendings()) == ["reshape", "t"]
    assert all(p.value is not None for p in _saved_pendings())  # read: computed


def test_with_tiered_execution_the_first_backwards_run_node_by_node(cache):
    with hg.autograd.set_tiered_execution(True):
        got = steps(hg)
    tiered.wait()
    want = steps(hg, runs=1)
    np.testing.assert_allclose(got[-1][1], want[0][1], rtol=1e-5)
    np.testing.assert_allclose(got[0][1], want[0][1], rtol=1e-5)


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
def test_anomaly_mode_reads_the_left_out_values(cache):
    def f(L):
        with L.autograd.detect_anomaly():
            return steps(L)
    same_as_torch(f)


def test_double_backward_reads_the_left_out_values_as_tensors(cache):
    def f(L):
        got = steps(L, create_graph=True)
        return got
    same_as_torch(f)


def test_saved_attributes_give_the_left_out_values(cache):
    def f(L):
        x, w = L.tensor(XL, requires_grad=True), L.tensor(W, requires_grad=True)
        for _ in range(RUNS):
            loss, r = forward(L, x, w)
            del r
            loss.item()  # the forward's program has run
        mul, mm = _below(loss.grad_fn, "MulBackward0"), _below(loss.grad_fn, "MmBackward0")
        return [py(mul._saved_self), py(mul._saved_other), py(mm._saved_mat2),
                list(mm._saved_mat2.shape)]
    same_as_torch(f)


def test_pack_hooks_see_the_layout_values(cache):
    def f(L):
        x, w = L.tensor(XL, requires_grad=True), L.tensor(W, requires_grad=True)
        packed = []

        def pack(t):
            packed.append(t)
            return t
        for _ in range(RUNS):
            packed.clear()
            w.grad = None
            with L.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                loss, r = forward(L, x, w)
                del r
                loss.backward()
        return [[list(t.shape), py(t)] for t in packed] + [py(w.grad)]
    same_as_torch(f)


def test_a_weight_written_in_place_after_the_forward_fails_the_backward(cache):
    def call(L):
        x, w = L.tensor(XL, requires_grad=True), L.tensor(W, requires_grad=True)
        for _ in range(RUNS):
            loss, _ = forward(L, x, w)
            loss.item()
            with L.no_grad():
                w.mul_(2)
            loss.backward()
    raises_as_torch(call, RuntimeError, "modified by an inplace operation")


def test_a_left_out_value_saved_again_is_computed_when_read(cache):
    # ``r``, left out of its segment, joins a later one as ``sin``'s argument (which saves
    # it again) and is read: the segment gives it out, as the value its read runs it for
    left = []

    def f(L):
        x, w = L.tensor(XL, requires_grad=True), L.tensor(W, requires_grad=True)
        got = []
        for _ in range(RUNS + 2):
            w.grad = None
            loss, r = forward(L, x, w)
            loss.item()
            if L is hg:
                left.append(r._arr.__class__ is Pending and r._arr.value is None)
            s = r.sin() * 2
            got.append(py(r))
            (s.sum() + loss).backward()
            got += [py(s), py(w.grad)]
        return got
    same_as_torch(f)
    assert any(left)


class _Net(hg.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = hg.nn.Parameter(hg.tensor(W))

    def forward(self, x):
        return forward(hg, x, self.w)[0]


def test_the_three_modes_give_the_eager_gradients_of_left_out_values(cache):
    net, x = _Net(), hg.tensor(XL, requires_grad=True)
    for _ in range(RUNS + 2):  # eager, settled: its ``t`` left out (the backward's first
        net.zero_grad()        # read, ``mul``'s ``reshape``, runs the segment)
        net(x).backward()
    assert "t" not in {q.op.name for q in cache[-1]}  # (its program's outputs)
    eager = net.w.grad.numpy()

    def step(x):
        loss = net(x)
        loss.backward()
        return loss
    compiled = hg.compile(step)
    for _ in range(2):
        net.zero_grad()
        compiled(x)
    np.testing.assert_allclose(net.w.grad.numpy(), eager, rtol=1e-5)
    params = hg.func.state(net)
    g = jax.grad(lambda p, a: hg.func.functional_call(net, p, (a,)))(params, x._data)
    np.testing.assert_allclose(np.asarray(g["w"]), eager, rtol=1e-5)


def test_a_left_out_value_computed_meanwhile_is_taken_as_it_is(cache):
    # between a node's unpack (which gives the value pending) and the region's program,
    # another thread's read may compute it: the region takes its array, rebuilding nothing
    x, w = hg.tensor(XL, requires_grad=True), hg.tensor(W, requires_grad=True)
    for _ in range(RUNS + 2):
        loss, r = forward(hg, x, w)
        loss.item()
    p = r._arr
    assert p.__class__ is Pending and p.saved == lazy_layout.LEFT and p.value is None
    flat = [p]
    lays, left = fusion_layout.lays(flat)
    assert [k for k, _, _ in lays] == [0] and left == [(0, p)] and flat[0] is not p
    want = r.detach().numpy()  # a read: computed now
    flat = [p]
    assert fusion_layout.lays(flat) == ((), None)
    np.testing.assert_array_equal(np.asarray(flat[0]), want)
