"""The per-step trace cache of the deferred forward (hookgrad/_ops/lazy_memo.py): a trace
that follows the sequence a segment ran before checks each op against it instead of
walking its arguments. A repeated step walks nothing; a step that differs midway (another
op, another shape, another array where the same one was, a number of another class, a new
default dtype, an earlier op's output in another's place) gives the values and gradients
it gives with the cache off, and PyTorch's.

Every input is past the host stage's bound (``HOST_MAX``): the chains defer, as a model's
activations do."""
import collections
import threading

import numpy as np
import pytest

import hookgrad as hg
from hookgrad._host_transfer import HOST_MAX
from hookgrad._ops import dispatch, lazy, lazy_memo, lazy_segment
from tests.differential import py, same_as_torch, torch

B, D = 8, HOST_MAX // 8 + 8  # (B, D) inputs: past the host stage's bound
_rng = np.random.default_rng(0)
X = _rng.standard_normal((B, D)).astype(np.float32) * 0.5
Z = _rng.standard_normal((B, D)).astype(np.float32) * 0.5
W = _rng.standard_normal((D, D)).astype(np.float32) / D
V = _rng.standard_normal((D, D)).astype(np.float32) / D
Z2 = np.stack([Z, -Z])  # another aval: the step's values (2, B, D) from there on
N = np.arange(B * D, dtype=np.int64).reshape(B, D) % 7
RUNS = lazy.COMPILE_AT + 3  # first calls, the memo made (2nd sighting), then followed


@pytest.fixture
def walks(monkeypatch):
    """Empty segment caches, trace and memo chain; the ops the walk signs (a trace that
    follows a memo walks none), and the positions where a trace stopped following one."""
    monkeypatch.setattr(lazy._local, "trace", None)
    monkeypatch.setattr(lazy._local, "last", None)
    monkeypatch.setattr(lazy_segment, "_seen", {})
    monkeypatch.setattr(lazy_segment, "_compiled", collections.OrderedDict())
    seen = {"walked": 0, "restored": []}
    walk, restore = lazy._walk, lazy_memo.restore

    def walking(*args):
        seen["walked"] += 1
        return walk(*args)

    def restoring(tr, n):
        seen["restored"].append(n)
        return restore(tr, n)
    monkeypatch.setattr(lazy, "_walk", walking)
    monkeypatch.setattr(lazy_memo, "restore", restoring)
    return seen


def step(L, variant=None, inputs=None):
    """A small training step's forward and backward: the loss, the weights' gradients and
    an integer side value; ``variant`` changes it midway."""
    x, z, w, v, n = inputs or (L.tensor(X), L.tensor(Z), L.tensor(W, requires_grad=True),
                               L.tensor(V, requires_grad=True), L.tensor(N))
    h0 = L.tanh(x @ w) * 2
    h = L.cos(h0) if variant == "op" else L.sin(h0)
    h = (h0 if variant == "wiring" else h) + (L.tensor(Z2) if variant == "aval" else z)
    h = h @ (v if variant == "weight" else w)  # (the weight read twice)
    k = 2.5 if variant == "number" else 3
    c = n * k  # (an int64 Tensor times a number: its class decides the dtype)
    loss = (h * h).sum() + c.sum() * 1e-6
    loss.backward()
    return {"loss": py(loss), "w": py(w.grad), "v": None if v.grad is None else py(v.grad),
            "c": py(c), "c dtype": str(c.dtype).replace("torch.", "").replace("hookgrad.", "")}


def _steady(seen, variant=None):
    for _ in range(RUNS):
        want = step(hg, variant)
    seen["walked"], seen["restored"][:] = 0, []
    return want


def test_a_repeated_step_follows_its_memo_and_walks_no_op(walks):
    want = _steady(walks)
    got = step(hg)
    assert walks["walked"] == 0 and walks["restored"] == []
    assert got == want


def test_a_value_held_on_the_host_joins_a_followed_step(walks, monkeypatch):
    # a decode step's positions: a new small Tensor each step (held on the host), added to
    # a pending value (so the host stage declines the op): the step follows its memo all
    # through, the value put on the device where the op is met, never apply's general path
    general = []
    run_general = dispatch._general
    monkeypatch.setattr(dispatch, "_general", lambda op, *rest: general.append(op.name) or
                        run_general(op, *rest))

    def decode(L, k):
        pos = L.tensor(np.arange(D, dtype=np.float32) * k)  # (D,): held on the host
        h = L.tanh(L.tensor(X) @ L.tensor(W)) + pos
        return py((h * h).sum(dim=1))

    for k in range(RUNS):
        same_as_torch(lambda L: decode(L, k), tol=1e-4)
    walks["walked"], general[:] = 0, []
    got = decode(hg, RUNS)
    assert walks["walked"] == 0 and walks["restored"] == [] and general == []
    assert got == pytest.approx(same_as_torch(lambda L: decode(L, RUNS), tol=1e-4))


def _without_memos(monkeypatch, variant):
    with monkeypatch.context() as m:
        m.setattr(lazy_memo, "offer", lambda *args: None)  # no trace follows a memo
        m.setattr(lazy._local, "trace", None)
        return step(hg, variant)


@pytest.mark.parametrize("variant", ["op", "wiring", "aval", "weight", "number"])
def test_a_step_that_differs_midway_is_the_one_without_the_cache(walks, monkeypatch, variant):
    _steady(walks)
    got = same_as_torch(lambda L: step(L, variant), tol=1e-4)
    # it followed the memo up to where it differs, then walked on from there
    assert walks["restored"] and walks["restored"][0] > 0 and walks["walked"] > 0
    assert got == _without_memos(monkeypatch, variant)
    assert step(hg) == _without_memos(monkeypatch, None)  # and back


def test_a_new_default_dtype_stops_every_trace_following(walks, monkeypatch):
    _steady(walks, "number")  # (an int64 Tensor times a float: the default dtype)
    try:
        hg.set_default_dtype(hg.float64)
        got = step(hg, "number")
        assert got["c dtype"] == "float64"
        assert walks["walked"] > 0
        assert got == _without_memos(monkeypatch, "number")
        if torch is not None:
            torch.set_default_dtype(torch.float64)
            try:
                assert got["c dtype"] == step(torch, "number")["c dtype"]
            finally:
                torch.set_default_dtype(torch.float32)
    finally:
        hg.set_default_dtype(hg.float32)
    assert step(hg, "number")["c dtype"] == "float32"


def test_threads_follow_their_own_memos(walks):
    want = _steady(walks)
    errors = []

    def worker(variant):
        try:
            for _ in range(RUNS):
                assert step(hg, variant) == (want if variant is None else step_alone[variant])
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)
    step_alone = {"op": step(hg, "op")}
    threads = [threading.Thread(target=worker, args=(v,)) for v in (None, "op", None)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert step(hg) == want


def test_compiled_vmapped_and_double_backward_runs_compose_with_followed_steps(walks):
    _steady(walks)

    def composed(L):
        w = L.tensor(W, requires_grad=True)
        x = L.tensor(X)
        g, = L.autograd.grad((L.tanh(x @ w) ** 2).sum(), w, create_graph=True)
        gg, = L.autograd.grad((g * g).sum(), w)
        vm = L.func.vmap(lambda r: L.sin(r @ w.detach()) * 2)(x)
        return {"g": py(g), "gg": py(gg), "vm": py(vm)}

    def forward(x, w, z):  # the step's first ops, as a compiled function
        return ((hg.sin(hg.tanh(x @ w) * 2) + z) @ w).sum()
    x, w, z = hg.tensor(X), hg.tensor(W), hg.tensor(Z)
    want = float(forward(x, w, z))
    compiled = hg.compile(forward)
    for _ in range(3):  # the followed step between, its memos in place
        assert step(hg) == step(hg)
        same_as_torch(composed, tol=1e-4)
        assert float(compiled(x, w, z)) == pytest.approx(want, rel=1e-5)
