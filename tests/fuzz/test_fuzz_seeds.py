"""Seeded fuzz programs in all three modes: a CI run checks seeds ``0:WINDOW`` of the
generator (tests/fuzz/_programs.py), the slow tier ``0:SLOW_PROGRAMS`` (the CI set,
``0:CI_PROGRAMS``, that a rotating window sweeps); ``python tools/fuzz.py --seeds A:B
--modes eager,compiled,functional_jit`` runs any range of them.

Each seed is checked in every mode from one generation and one eager hookgrad run
(``_modes.eager_runs``): that run is compared with PyTorch (eager) and is the reference of
the compiled step and of the functional run. The seeds run with tiered execution on, as
users run (values are compared to ``TOL``; off, the eager run compiles every op signature
it meets). The CI window runs the functional mode as a training step does, its gradient
under ``jax.jit`` (``functional_jit``: one program a seed, where eager ``jax.grad``
compiles a primal and a transposed program for each op signature it has not met: with an
empty XLA cache ~0.45 s of CPU a seed against ~0.17 s; the program returns what it
observes as outputs, no host callback, so JAX's persistent cache keeps it and a warm run
pays ~0.05 s a seed, not ~0.17 s); eager ``jax.grad`` stays in the slow tier's seeds and
in tests/fuzz/test_fuzz_modes.py.

One CI run checks a window of the CI set:
``WINDOW`` seeds from 0, the same on every run (a CI run must not pass or fail by the hour
it runs at). ``HOOKGRAD_FUZZ_SEED=N`` starts the window at ``N``, and
``HOOKGRAD_FUZZ_ROTATE=1`` moves it by a window every hour (``(hour * WINDOW) %
CI_PROGRAMS``, UTC hours since 1970), to sweep the set on a machine that runs the tests
often. A window runs as tests of ``CI_CHUNK`` seeds; each test's id is its seeds
(``test_fuzz_seeds[0:40]``). The slow tier (``HOOKGRAD_SLOW=1``) runs all
``SLOW_PROGRAMS``, in chunks of ``SLOW_CHUNK``.
"""
import math
import os
import sys
import time

import pytest

import hookgrad
from tests.differential import torch
from tests.fuzz import _harness as H
from tests.fuzz import _modes as M

MODES = ("eager", "compiled", "functional_jit")  # the CI window's
SLOW_MODES = ("eager", "compiled", "functional")
SLOW_PROGRAMS = 3000
CI_PROGRAMS = SLOW_PROGRAMS  # what HOOKGRAD_FUZZ_ROTATE sweeps: every seed the slow tier checks
SLOW_CHUNK = 250
WINDOW = 250  # seeds a CI run checks: ~0.55 s a seed with an empty XLA cache, ~0.15 s warm
# NOTE: the README's ``pytest -n 2 --dist loadfile`` runs this whole file on one worker, so
# the window is the CI run's critical path. It was 1,000 seeds per worker (2,000 under
# ``-n 2``): 1,062 s of one worker's time with an empty cache, which put a fresh machine's
# CI run past 20 minutes (1,348 s); the rotating window and the slow tier cover the rest.
# At 400, a fresh machine's whole .ci/run took 1,186 s here (the suite 1,098 s): 250 keeps
# a margin
CI_CHUNK = 40


def window(now=None):
    """The seeds one CI run checks: ``range(start, start + WINDOW)``."""
    start = os.environ.get("HOOKGRAD_FUZZ_SEED")
    if start is None and os.environ.get("HOOKGRAD_FUZZ_ROTATE"):
        hour = int((time.time() if now is None else now) // 3600)
        start = (hour * WINDOW) % CI_PROGRAMS
    elif start is None:
        start = "0"
    elif not start.isdigit():
        raise ValueError(f"HOOKGRAD_FUZZ_SEED: expected a seed number, got {start!r}")
    start = int(start)
    return range(start, start + WINDOW)


def check_seed(seed, modes=MODES):
    """``{mode: Result}`` of ``seed`` in ``modes`` (eager: against PyTorch, left out
    without it; otherwise against eager hookgrad), from one generation and one eager run."""
    from tests.fuzz._programs import generate
    program = generate(seed)
    runs = M.eager_runs(program, hookgrad)
    results = {}
    for mode in modes:
        if mode == "eager":
            if torch is not None:
                results[mode] = H.check(seed, hookgrad, torch, program=program, got=runs[0])
        else:
            results[mode] = M.check(seed, hookgrad, mode, program=program, eager=runs)
    return results


def check_seeds(seeds, modes=MODES):
    """Run ``seeds`` in ``modes``; fail with every differing program, shrunk, as PyTorch
    code."""
    results = {mode: [] for mode in modes}
    # NOTE: tiered execution on, as users run (the suite turns it off, tests/conftest.py):
    # the fuzz compares values to TOL, and an op met once runs in NumPy, uncompiled; off,
    # the eager run compiles each new op signature (an empty XLA cache, seeds 0:80: 84 s of
    # CPU against 52 s)
    with hookgrad.autograd.set_tiered_execution(True):
        for seed in seeds:
            for mode, res in check_seed(seed, modes).items():
                results[mode].append(res)
    differing = [f"{mode}: {r.report()}" for mode, rs in results.items() for r in rs
                 if r.status == "differs"]
    assert not differing, f"{len(differing)} programs of seeds {seeds} differ:\n" + \
        "\n\n".join(differing)
    for mode, rs in results.items():
        assert not rs or any(r.status == "same" for r in rs), f"no program of {mode} was compared"


def _ids(parts):
    return [f"{seeds.start}:{seeds.stop}" for seeds in parts]


def _chunks(seeds, size):
    return [range(a, min(a + size, seeds.stop)) for a in range(seeds.start, seeds.stop, size)]


_CI = _chunks(window(), CI_CHUNK)
_SLOW = _chunks(range(SLOW_PROGRAMS), SLOW_CHUNK)


@pytest.mark.fuzz
@pytest.mark.parametrize("seeds", _CI, ids=_ids(_CI))
def test_fuzz_seeds(seeds):
    check_seeds(seeds)


@pytest.mark.fuzz
@pytest.mark.slow
@pytest.mark.parametrize("seeds", _SLOW, ids=_ids(_SLOW))
def test_fuzz_seeds_slow(seeds):
    check_seeds(seeds, SLOW_MODES)


def test_the_ci_window_is_fixed_and_rotates_on_request(monkeypatch):
    monkeypatch.delenv("HOOKGRAD_FUZZ_SEED", raising=False)
    monkeypatch.delenv("HOOKGRAD_FUZZ_ROTATE", raising=False)
    assert window(now=3 * 3600) == window(now=7 * 3600) == range(WINDOW)
    monkeypatch.setenv("HOOKGRAD_FUZZ_ROTATE", "1")
    starts = {window(now=h * 3600).start for h in range(CI_PROGRAMS)}
    assert starts == set(range(0, CI_PROGRAMS, math.gcd(WINDOW, CI_PROGRAMS)))  # all swept
    third = 3 * WINDOW % CI_PROGRAMS
    assert window(now=3 * 3600) == range(third, third + WINDOW)
    assert window(now=3 * 3600 + 3599) == range(third, third + WINDOW)  # an hour's runs agree
    monkeypatch.setenv("HOOKGRAD_FUZZ_SEED", "17")
    assert window() == range(17, 17 + WINDOW)
    monkeypatch.setenv("HOOKGRAD_FUZZ_SEED", "x")
    with pytest.raises(ValueError, match="expected a seed number, got 'x'"):
        window()


def test_the_window_does_not_grow_with_workers_and_runs_in_chunks(monkeypatch):
    # ``--dist loadfile`` gives this file to one worker: more workers check no more seeds
    monkeypatch.delenv("HOOKGRAD_FUZZ_SEED", raising=False)
    monkeypatch.delenv("HOOKGRAD_FUZZ_ROTATE", raising=False)
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")  # as pytest -n 2 sets it
    assert window() == range(WINDOW)
    assert _chunks(range(120), CI_CHUNK) == [range(0, 40), range(40, 80), range(80, 120)]
    assert _chunks(range(10, 75), 30) == [range(10, 40), range(40, 70), range(70, 75)]


def test_one_eager_run_serves_every_mode(monkeypatch):
    # the eager check, the compiled reference and the functional reference come from one
    # run of the program repeated; each is what its own run gives
    from tests.fuzz._programs import generate
    calls = []
    run = H.run
    monkeypatch.setattr(H, "run", lambda p, lib: calls.append(lib) or run(p, lib))
    for seed in (1, 7):  # 7 raises
        program = generate(seed)
        once, repeated = M.eager_runs(program, hookgrad)
        assert calls == [hookgrad]
        assert once == run(program, hookgrad)
        assert repeated == M._eager_calls(program, hookgrad)
        calls.clear()
    results = check_seed(1, ("compiled", "functional", "functional_jit"))  # run as it is
    assert calls == [hookgrad] and {r.status for r in results.values()} == {"same"}


def test_seeds_run_with_tiered_execution_on(monkeypatch):
    tiered = []
    monkeypatch.setattr(sys.modules[__name__], "check_seed", lambda seed, modes: tiered.append(
        (seed, modes, hookgrad.autograd.is_tiered_execution_enabled())) or {})
    was = hookgrad.autograd.is_tiered_execution_enabled()
    check_seeds(range(3, 5))
    assert tiered == [(3, MODES, True), (4, MODES, True)]
    assert hookgrad.autograd.is_tiered_execution_enabled() == was  # restored


def test_an_empty_slice_feeds_only_the_loss():
    # seed 1459 slices a size-1 dim to (2, 0); a matmul then needed a (0, m) leaf, which
    # L.tensor(data) cannot make: the generator raised ZeroDivisionError
    from tests.fuzz._programs import generate
    for seed in (1459, 1879):
        program = generate(seed)
        assert any("1:]" in src for _, src in program.lines)
        assert all("L.tensor([]" not in src for _, src in program.lines)
