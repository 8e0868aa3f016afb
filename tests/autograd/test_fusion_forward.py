"""The pending forward inside a fused backward region (hookgrad/_engine/fusion_forward.py):
from a repeated step's fourth replayed backward on, the forward's last segment, still
pending at ``backward()``, runs in the region's program. What a user sees is eager's:
gradients and values (checked against JAX and PyTorch), every Tensor still held readable,
``retain_graph`` and hooks as before; only the values nobody can read any more never
leave the program."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg
from hookgrad._engine import fusion, fusion_forward
from hookgrad._ops import lazy, tiered
from hookgrad._tensor import Pending
from tests import _lazy_caches
from tests.differential import py, same_as_torch
from tests.ops.test_lazy_forward import XL

STEPS = fusion_forward.AFTER + 4  # replayed, then fused (compiled in the background)


class Fused(list):
    """Per backward, whether its region ran the pending forward in its program; ``nout``:
    per fused program made, how many forward values it gives out besides the gradients."""
    nout = None


@pytest.fixture
def fused(monkeypatch):
    """Empty caches and trace, tiered execution on; yields a ``Fused``."""
    _lazy_caches.empty(monkeypatch, regions=True)
    ran = Fused()
    ran.nout = []
    real_program, real_run = fusion_forward._program, fusion_forward.run

    def program(seg, nleaves, region_fn, nx, subs, nout):
        ran.nout.append(nout)
        return real_program(seg, nleaves, region_fn, nx, subs, nout)

    def run(*args):
        got = real_run(*args)
        ran.append(got is not None)
        return got
    monkeypatch.setattr(fusion_forward, "_program", program)
    monkeypatch.setattr(fusion._forward, "run", run)
    with hg.autograd.set_tiered_execution(True):
        yield ran


def block(L, x, c):
    return ((x * c).sin() + c).tanh()


def jax_block(x, c):
    return jnp.tanh(jnp.sin(x * c) + c)


def _steps(L, keep=False, retain=False, hook=False):
    """``STEPS`` training steps of three blocks on ``XL``: per step the loss, the input's
    gradient and (``keep``) a value the step still holds after its backward."""
    x = L.tensor(XL, requires_grad=True)
    c = L.tensor(np.full_like(XL, 0.5))
    out = []
    for _ in range(STEPS):
        x.grad = None
        h = block(L, x, c)
        if hook:
            h.register_hook(lambda g: g * 2.0)
        y = block(L, block(L, h, c), c)
        loss = y.sum()
        loss.backward(retain_graph=retain)
        if retain:
            loss.backward()
        if L is hg:
            tiered.wait()
        out.append([loss.item(), py(x.grad)] + ([py(h)] if keep else []))
    return out


def test_a_repeated_step_runs_its_pending_forward_in_the_backwards_program(fused):
    """The chain's forward is pending at ``backward()``: from the plan's fourth replay on
    (its program compiled in the background meanwhile) it runs in the region's program,
    which gives out only the values still held; gradients are JAX's."""
    got = same_as_torch(_steps)
    want = jax.value_and_grad(lambda x: jax_block(jax_block(jax_block(
        x, 0.5), 0.5), 0.5).sum())(jnp.asarray(XL))
    for loss, grad in got:
        np.testing.assert_allclose(loss, want[0], rtol=1e-5)
        np.testing.assert_allclose(grad, want[1], rtol=1e-5, atol=1e-7)
    assert fused[-2:] == [True, True] and not fused[0]
    # one program, giving out what the step still holds (``h``, ``y``, the loss), none of
    # the other values the backward saved
    assert fused.nout == [3]


def test_one_step_is_one_program_once_fused(fused, monkeypatch):
    """The whole step, forward and backward, is one XLA call."""
    calls = []
    real = tiered._call_jitted
    monkeypatch.setattr(tiered, "_call_jitted", lambda fn, args: calls.append(1) or real(
        fn, args))
    per_step = []
    x, c = hg.tensor(XL, requires_grad=True), hg.tensor(np.full_like(XL, 0.5))
    for _ in range(STEPS):
        calls.clear()
        x.grad = None
        block(hg, block(hg, block(hg, x, c), c), c).sum().backward()
        x.grad.numpy()
        tiered.wait()
        per_step.append(len(calls))
    assert fused[-1] and per_step[-1] == 1


def test_a_value_still_held_leaves_the_program_with_its_eager_value(fused):
    got = same_as_torch(lambda L: _steps(L, keep=True))
    assert fused[-1]
    assert got[-1][2] == got[0][2]  # the value held: its own array, as eagerly


def test_a_value_nobody_holds_stays_pending_and_computes_when_read(fused):
    """A value the program did not give out (only the backward's nodes saved it, and they
    let go of it) keeps its op and arguments: a later read computes it, as eagerly."""
    x, c = hg.tensor(XL, requires_grad=True), hg.tensor(np.full_like(XL, 0.5))
    for _ in range(STEPS):
        x.grad = None
        h = block(hg, x, c)
        p = h._arr
        loss = block(hg, block(hg, h, c), c).sum()
        del h
        loss.backward()
        tiered.wait()
    assert fused[-1] and p.__class__ is Pending and p.value is None
    np.testing.assert_allclose(np.asarray(lazy.value(p)),
                               jax_block(jnp.asarray(XL), 0.5), rtol=1e-6)


def test_retain_graph_runs_the_forward_apart_and_backward_twice_as_torch(fused):
    same_as_torch(lambda L: _steps(L, retain=True))
    assert not any(fused)


def test_a_hooked_value_inside_the_forward_is_given_out_and_gradients_stay_torchs(fused):
    """A tensor hook stops the region at its node: the hooked value's node and what
    follows it run apart from the fused region, and read what the program gave out."""
    same_as_torch(lambda L: _steps(L, hook=True))
    assert fused[-1]


def test_turned_off_the_forward_runs_apart(fused, monkeypatch):
    monkeypatch.setattr(fusion_forward, "ON", [False])
    same_as_torch(_steps)
    assert not any(fused)


def test_grad_of_grad_and_autograd_grad_run_the_forward_apart(fused):
    """``create_graph`` records the backward (no fused region), ``autograd.grad`` walks
    its own regions (no plan): the forward runs apart, gradients stay PyTorch's."""
    def steps(L):
        x = L.tensor(XL, requires_grad=True)
        c = L.tensor(np.full_like(XL, 0.5))
        out = []
        for _ in range(STEPS):
            loss = block(L, block(L, x, c), c).sum()
            (g,) = L.autograd.grad(loss, x, create_graph=True)
            (gg,) = L.autograd.grad(g.sum(), x)
            loss = block(L, block(L, x, c), c).sum()
            (g1,) = L.autograd.grad(loss, x)
            out.append([py(g), py(gg), py(g1)])
        return out
    same_as_torch(steps)
    assert not any(fused)


def test_a_plan_whose_segments_never_repeat_stops_making_programs(fused, monkeypatch):
    """Where each step's segment is new to the plan (here: a new key every step), a plan
    makes at most ``MAX_MADE`` fused programs, keeps ``PER_PLAN``, then runs apart."""
    monkeypatch.setattr(fusion_forward, "MAX_MADE", 3)
    real = fusion_forward._program
    made = []

    def program(*args):
        made.append(1)
        return real(*args)
    monkeypatch.setattr(fusion_forward, "_program", program)
    monkeypatch.setattr(lazy, "take", _new_memo_each_time(lazy.take))
    got = same_as_torch(lambda L: _steps(L)[-1:])
    assert len(made) == 3 and not fused[-1]
    assert got  # (gradients PyTorch's throughout)


def _new_memo_each_time(take):
    def taking(pendings):
        got = take(pendings)
        if got is not None:
            tr = got[0]
            m = tr.memo
            tr.memo = type(m).__new__(type(m))
            for k in ("ops", "n", "struct", "key", "h", "nexts", "bounds"):
                setattr(tr.memo, k, getattr(m, k))
        return got
    return taking
