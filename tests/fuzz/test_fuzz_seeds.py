"""Seeded fuzz programs in all three modes: the CI set is seeds ``0:CI_PROGRAMS`` of the
generator (tests/fuzz/_programs.py), the slow tier's ``0:SLOW_PROGRAMS``; ``python
tools/fuzz.py --seeds A:B --modes eager,compiled,functional`` runs any range of them.

A compiled or functional program traces and lowers its step and the eager reference's op
programs (about half a second of CPU each, an eager one a fifth: tools/fuzz.py's cProfile
shows JAX's tracing and MLIR lowering, and persistent-cache reads, not XLA's compiles,
which the cache mostly answers), so one CI run checks a window of the CI set:
``WINDOW[mode]`` seeds per pytest-xdist worker (``pytest -n 2`` checks twice as many in
about the same time), from 0, the same on every run (a CI run must not pass or fail by
the hour it runs at). ``HOOKGRAD_FUZZ_SEED=N`` starts the window at ``N``, and
``HOOKGRAD_FUZZ_ROTATE=1`` moves it by a window every hour (``(hour * size) %
CI_PROGRAMS``, UTC hours since 1970), to sweep the set on a machine that runs the tests
often. A window runs as tests of ``CI_CHUNK[mode]`` seeds, which workers share; each
test's id is its seeds (``test_fuzz_seeds[eager-0:75]``). The slow tier
(``HOOKGRAD_SLOW=1``) runs all ``SLOW_PROGRAMS`` in every mode, in chunks of ``SLOW_CHUNK``.
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
WINDOW = {"eager": 150, "compiled": 30, "functional": 30}  # per worker: ~70 s of CPU
CI_CHUNK = {"eager": 75, "compiled": 30, "functional": 30}


def workers():
    """The number of pytest-xdist workers running the suite (1: it runs serially)."""
    n = os.environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    return int(n) if n.isdigit() and int(n) > 0 else 1


def window(mode, now=None, n_workers=None):
    """The seeds one CI run checks in ``mode``: ``range(start, start + size)``, ``size``
    being ``WINDOW[mode]`` times the number of workers."""
    size = WINDOW[mode] * (workers() if n_workers is None else n_workers)
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


def _chunks(seeds, size):
    return [range(a, min(a + size, seeds.stop)) for a in range(seeds.start, seeds.stop, size)]


_CI = [(mode, part) for mode in MODES for part in _chunks(window(mode), CI_CHUNK[mode])]
_SLOW = [(mode, part) for mode in MODES for part in _chunks(range(SLOW_PROGRAMS), SLOW_CHUNK)]


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
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT", raising=False)
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


def test_two_workers_check_twice_the_window_in_chunks_they_share(monkeypatch):
    monkeypatch.delenv("HOOKGRAD_FUZZ_SEED", raising=False)
    monkeypatch.delenv("HOOKGRAD_FUZZ_ROTATE", raising=False)
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")  # as pytest -n 2 sets it
    assert workers() == 2 and window("eager") == range(300) and window("compiled") == range(60)
    assert _chunks(window("eager"), CI_CHUNK["eager"]) == [
        range(0, 75), range(75, 150), range(150, 225), range(225, 300)]
    assert _chunks(range(10, 75), 30) == [range(10, 40), range(40, 70), range(70, 75)]
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT")
    assert workers() == 1 and window("functional") == range(30)


def test_an_empty_slice_feeds_only_the_loss():
    # seed 1459 slices a size-1 dim to (2, 0); a matmul then needed a (0, m) leaf, which
    # L.tensor(data) cannot make: the generator raised ZeroDivisionError
    from tests.fuzz._programs import generate
    for seed in (1459, 1879):
        program = generate(seed)
        assert any("1:]" in src for _, src in program.lines)
        assert all("L.tensor([]" not in src for _, src in program.lines)
