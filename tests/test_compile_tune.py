"""``hookgrad.compile(mode=..., options=...)``: which XLA options a compiled step runs with."""
import jax
import numpy as np
import pytest

import hookgrad as hg
from hookgrad._compile import tune
from hookgrad import nn
from tests.test_compile import _arr, _mse_step

PLATFORM = jax.default_backend()
NO_YNN = tune.NO_YNN


def _uses_ynn(step):
    return '"kind":"__ynn_fusion"' in step.lower().compile().as_text()


def _compiled_and_eager(**compile_kw):
    """An eager SGD step on one model and the same step compiled with ``compile_kw`` on its
    twin, with a host hook counting the compiled step's calls. The first Linear is big
    enough for XLA:CPU to give its dots to YNNPACK."""
    pair = []
    for _ in range(2):
        hg.manual_seed(0)
        m = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 2))
        pair.append((m, hg.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)))
    (me, oe), (mc, oc) = pair
    step = _mse_step(hg.randn(16, 16), hg.randn(16, 2))
    seen = []
    mc[0].register_forward_hook(
        hg.compile.host_hook(lambda m, args, out: seen.append(out.sum().item())))
    return (lambda: step(me, oe)), hg.compile(lambda: step(mc, oc), **compile_kw), me, mc, seen


def _assert_same_state(me, mc):
    for (k, pe), (_, pc) in zip(me.named_parameters(), mc.named_parameters()):
        np.testing.assert_allclose(_arr(pc), _arr(pe), rtol=1e-5, atol=1e-6, err_msg=k)


# --------------------------------------------------------------------------- arguments


@pytest.mark.parametrize("kw, error, match", [
    (dict(mode="fastest"), RuntimeError, "Unrecognized mode=fastest, should be one of: "
                                         "default, lite, reduce-overhead"),
    (dict(mode="max-autotune", options={}), RuntimeError, "Either mode or options"),
    (dict(options={"no_such_option": 1}), RuntimeError, "XLA rejected an option: .*"
                                                        "no_such_option"),
    (dict(options={"xla_cpu_use_xnnpack": "sometimes"}), RuntimeError, "xla_cpu_use_xnnpack"),
    (dict(options=[("max_autotune", True)]), TypeError, "expects a dict of XLA compiler "
                                                        "options, got list"),
])
def test_mode_and_options_are_checked_when_compile_is_called(kw, error, match):
    with pytest.raises(error, match=match):
        hg.compile(lambda x: x, **kw)
    with pytest.raises(error, match=match):   # the decorator form checks them as early
        hg.compile(**kw)


@pytest.mark.parametrize("mode", [None, "default", "lite", "reduce-overhead"])
def test_default_modes_compile_with_xlas_defaults(mode):
    eager, compiled, me, mc, seen = _compiled_and_eager(mode=mode)
    for _ in range(3):
        eager()
        compiled()
    _assert_same_state(me, mc)
    assert compiled.compiler_options() == {}
    assert len(seen) == 3


@pytest.mark.skipif(PLATFORM != "cpu", reason="an XLA:CPU option")
def test_options_reach_the_compiled_program():
    _, default, *_ = _compiled_and_eager()
    eager, compiled, me, mc, _ = _compiled_and_eager(options=NO_YNN)
    for _ in range(3):
        eager()
        default()
        compiled()
    _assert_same_state(me, mc)
    assert compiled.compiler_options() == NO_YNN
    # the programs XLA built differ by the option: YNNPACK runs no fusion in this one
    assert _uses_ynn(default) and not _uses_ynn(compiled)


# --------------------------------------------------------------------------- max-autotune


def test_pick_takes_a_candidate_only_if_it_is_clearly_faster():
    assert tune.pick([1.0, 0.7, 0.8]) == 1
    assert tune.pick([1.0, 0.97, 1.2]) == 0      # within the margin: keep the default
    assert tune.pick([1.0, 1.1]) == 0


def test_candidates_keep_the_users_options():
    base = {"xla_cpu_use_xnnpack": False}
    cands = tune.candidates("cpu", base)
    assert cands[0] == base
    assert all(c["xla_cpu_use_xnnpack"] is False for c in cands)
    assert len({tuple(sorted(c.items())) for c in cands}) == len(cands)
    assert tune.candidates("no-such-platform", base) == [base]


@pytest.fixture
def two_candidates(monkeypatch):
    """The default and NO_YNN on this platform, the second always picked, after one timed
    round: a program's 2nd to 5th runs tune it (one untimed and one timed call each)."""
    monkeypatch.setitem(tune.CANDIDATES, PLATFORM, ({}, NO_YNN))
    monkeypatch.setattr(tune, "pick", lambda ratios, margin=0: len(ratios) - 1)
    monkeypatch.setattr(tune, "MIN_ROUNDS", 1)
    monkeypatch.setattr(tune, "BUDGET_S", 0.0)


def test_max_autotune_times_a_programs_calls_on_each_candidate(two_candidates):
    eager, compiled, me, mc, seen = _compiled_and_eager(mode="max-autotune")
    for _ in range(2):   # the first call's program (creating the momentum buffers) runs
        eager()          # once; the later calls' program runs first as compiled by default
        compiled()
    assert compiled.compiler_options() == {}
    if PLATFORM == "cpu":
        assert _uses_ynn(compiled)
    for n in range(4):
        assert compiled.compiler_options() == {}    # still tuning
        eager()
        compiled()
    assert compiled.compiler_options() == NO_YNN    # picked, and compiled with it
    if PLATFORM == "cpu":
        assert not _uses_ynn(compiled)
    eager()
    compiled()
    assert compiled.trace_count == 2                # tuning compiles; it does not retrace
    _assert_same_state(me, mc)      # every call, tuning or not, is one step written back
    assert len(seen) == 7           # and runs the host hook once


def test_options_max_autotune_tunes_on_top_of_the_given_options(two_candidates):
    xnn = {"xla_cpu_use_xnnpack": True}
    _, compiled, *_ = _compiled_and_eager(options=dict(xnn, max_autotune=True))
    for _ in range(6):
        compiled()
    assert compiled.compiler_options() == dict(NO_YNN, **xnn)


def test_a_candidate_xla_cannot_compile_is_left_out(two_candidates, monkeypatch):
    monkeypatch.setitem(tune.CANDIDATES, PLATFORM, ({}, {"no_such_option": 1}, NO_YNN))
    eager, compiled, me, mc, _ = _compiled_and_eager(mode="max-autotune")
    for _ in range(6):
        eager()
        compiled()
    _assert_same_state(me, mc)
    tuned, = (e.tuning for e in compiled._cache.values() if e.tuning is not None)
    assert [o for o, _, _ in tuned] == [{}, NO_YNN]
    assert compiled.compiler_options() == NO_YNN


def test_max_autotune_without_candidates_compiles_once_as_the_default(monkeypatch):
    """As on GPUs and TPUs, whose XLA autotunes its kernels itself."""
    monkeypatch.setitem(tune.CANDIDATES, PLATFORM, ({},))
    monkeypatch.setattr(tune, "MIN_ROUNDS", 1)
    jits = []
    real_jit = tune.jit
    monkeypatch.setattr(tune, "jit", lambda *a: jits.append(a[2]) or real_jit(*a))
    eager, compiled, me, mc, _ = _compiled_and_eager(mode="max-autotune")
    for _ in range(6):
        eager()
        compiled()
    _assert_same_state(me, mc)
    assert compiled.compiler_options() == {}
    assert jits == [{}, {}]        # one program per key: the first call's, the later calls'


def test_max_autotune_keeps_the_state_of_n_eager_steps(monkeypatch):
    """This platform's candidates, timed: whichever is picked computes the same step."""
    monkeypatch.setattr(tune, "BUDGET_S", 0.0)   # MIN_ROUNDS timed rounds, no more
    cands = tune.candidates(PLATFORM, {})
    eager, compiled, me, mc, seen = _compiled_and_eager(mode="max-autotune")
    n = 2 + len(cands) * (tune.MIN_ROUNDS + 1)
    for _ in range(n):
        eager()
        compiled()
    _assert_same_state(me, mc)
    tuned = [e.tuning for e in compiled._cache.values() if e.tuning is not None]
    # the later calls' program was tuned (where there is anything to choose between)
    assert [[o for o, _, _ in t] for t in tuned] == ([cands] if len(cands) > 1 else [])
    assert compiled.compiler_options() in cands
    assert len(seen) == n
