"""Seeded fuzz programs in all three modes: the CI set is seeds ``0:CI_PROGRAMS`` of the
generator (tests/fuzz/_programs.py), the slow tier's ``0:SLOW_PROGRAMS``; ``python
tools/fuzz.py --seeds A:B --modes eager,compiled,functional`` runs any range of them.

A compiled or functional program traces and lowers its step and the eager reference's op
programs (about a second each on two cores, an eager one a tenth: tools/fuzz.py's
cProfile shows JAX's tracing, MLIR lowering and persistent-cache reads, not XLA's
compiles, which the cache mostly answers), so one CI run checks a window of the CI set: ``WINDOW[mode]`` seeds
from 0, the same on every run (a CI run must not pass or fail by the hour it runs at).
``HOOKGRAD_FUZZ_SEED=N`` starts the window at ``N``, and ``HOOKGRAD_FUZZ_ROTATE=1`` moves
it by a window every hour (``(hour * WINDOW[mode]) % CI_PROGRAMS``, UTC hours since 1970:
the set in about 7 hours eager, 34 compiled or functional), to sweep the set on a machine
that runs the tests often. The window is the test's id (``test_fuzz_seeds[eager-0:150]``). The slow tier (``HOOKGRAD_SLOW=1``) runs all
``SLOW_PROGRAMS`` in every mode, in chunks of ``SLOW_CHUNK``.
"""
import os
import time

import pytest

import hookgrad
from tests.differential import torch
from tests.fuzz import _harness as H
from tests.fuzz import _modes as M

MODES = ("eager", "compiled", "functional")
CI_PROGRAMS = 1000
SLOW_PROGRAMS = 3000
SLOW_CHUNK = 500
WINDOW = {"eager": 150, "compiled": 30, "functional": 30}  # ~1 min together on 2 cores


def window(mode, now=None):
    """The seeds one CI run checks in ``mode``: ``range(start, start + WINDOW[mode])``."""
    size = WINDOW[mode]
    start = os.environ.get("HOOKGRAD_FUZZ_SEED")
    if start is None and os.environ.get("HOOKGRAD_FUZZ_ROTATE"):
        hour = int((time.time() if now is None else now) // 3600)
        start = (hour * size) % CI_PROGRAMS
    elif start is None:
        start = "0"
    elif not start.isdigit():
        raise ValueError(f"HOOKGRAD_FUZZ_SEED: expected a seed number, got {start!r}")
    start = int(start)
    return range(start, start + size)


def check_seeds(mode, seeds):
    """Run ``seeds`` in ``mode`` (eager: against PyTorch; otherwise against eager
    hookgrad); fail with every differing program, shrunk, as PyTorch code."""
    if mode == "eager" and torch is None:
        pytest.skip("PyTorch is not installed: eager programs compare with it")
    results = []
    for seed in seeds:
        if mode == "eager":
            results.append(H.check(seed, hookgrad, torch))
        else:
            results.append(M.check(seed, hookgrad, mode))
    differing = [r.report() for r in results if r.status == "differs"]
    assert not differing, f"{len(differing)} of {len(results)} programs differ in {mode}:\n" + \
        "\n\n".join(differing)
    assert any(r.status == "same" for r in results), f"no program of {mode} was compared"


def _ids(pairs):
    return [f"{mode}-{seeds.start}:{seeds.stop}" for mode, seeds in pairs]


_CI = [(mode, window(mode)) for mode in MODES]
_SLOW = [(mode, range(a, min(a + SLOW_CHUNK, SLOW_PROGRAMS)))
         for mode in MODES for a in range(0, SLOW_PROGRAMS, SLOW_CHUNK)]


@pytest.mark.fuzz
@pytest.mark.parametrize("mode,seeds", _CI, ids=_ids(_CI))
def test_fuzz_seeds(mode, seeds):
    check_seeds(mode, seeds)


@pytest.mark.fuzz
@pytest.mark.slow
@pytest.mark.parametrize("mode,seeds", _SLOW, ids=_ids(_SLOW))
def test_fuzz_seeds_slow(mode, seeds):
    check_seeds(mode, seeds)


def test_the_ci_window_is_fixed_and_rotates_on_request(monkeypatch):
    monkeypatch.delenv("HOOKGRAD_FUZZ_SEED", raising=False)
    monkeypatch.delenv("HOOKGRAD_FUZZ_ROTATE", raising=False)
    assert window("compiled", now=3 * 3600) == window("compiled", now=7 * 3600) == range(30)
    monkeypatch.setenv("HOOKGRAD_FUZZ_ROTATE", "1")
    starts = {window("eager", now=h * 3600).start for h in range(CI_PROGRAMS)}
    assert starts == set(range(0, CI_PROGRAMS, 50))  # 150 * h mod 1000: every 50th seed
    assert window("compiled", now=3 * 3600) == range(90, 120)
    assert window("compiled", now=3 * 3600 + 3599) == range(90, 120)  # an hour's runs agree
    monkeypatch.setenv("HOOKGRAD_FUZZ_SEED", "17")
    assert window("functional") == range(17, 47)
    monkeypatch.setenv("HOOKGRAD_FUZZ_SEED", "x")
    with pytest.raises(ValueError, match="expected a seed number, got 'x'"):
        window("eager")


def test_an_empty_slice_feeds_only_the_loss():
    # seed 1459 slices a size-1 dim to (2, 0); a matmul then needed a (0, m) leaf, which
    # L.tensor(data) cannot make: the generator raised ZeroDivisionError
    from tests.fuzz._programs import generate
    for seed in (1459, 1879):
        program = generate(seed)
        assert any("1:]" in src for _, src in program.lines)
        assert all("L.tensor([]" not in src for _, src in program.lines)
