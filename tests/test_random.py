"""hookgrad/_random.py: keys made and split on the host (NumPy) are JAX's own, bit for bit,
so a fresh process compiles no seeding or splitting program before its first draws."""
import jax
import numpy as np
import pytest

import hookgrad
from hookgrad import _random

SEEDS = [0, 1, 42, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 7, 67280421310721, 2 ** 63 - 1, 2 ** 63,
         2 ** 64 - 1]


def _bits(key):
    return np.asarray(jax.random.key_data(key)).tolist()


@pytest.mark.parametrize("seed", SEEDS)
def test_host_keys_and_splits_are_jaxs(seed):
    want = jax.random.key(seed - 2 ** 64 if seed >= 2 ** 63 else seed)
    got = _random.jax_key(seed)
    assert got.dtype == want.dtype and _bits(got) == _bits(want)
    for _ in range(4):
        (w1, w2), (g1, g2) = jax.random.split(want), _random.split(want)
        assert [_bits(g1), _bits(g2)] == [_bits(w1), _bits(w2)]
        assert g1.dtype == w1.dtype
        # placed as JAX places its own: uncommitted, on the default device
        assert not g1.committed and not g2.committed
        assert g1.sharding == w1.sharding and g2.sharding == w2.sharding
        want = w2


def test_a_host_split_runs_on_the_host_and_makes_keys_as_jaxs_constructor(monkeypatch):
    """The host split's keys skip ``PRNGKeyArray``'s checks of their data: they must hold
    what its constructor sets (a JAX upgrade that adds a field fails here) and draw as
    JAX's keys do, and a key of JAX's own making must take the host's way."""
    monkeypatch.setitem(_random._host, "splits", 0)
    key = jax.random.key(7)
    got = _random.split(key)
    assert _random._host["splits"] == 1  # the host split ran, not the compiled one
    for g, w in zip(got, jax.random.split(key)):
        made = type(w)(w._impl, jax.random.key_data(w))  # JAX's own constructor
        assert sorted(vars(g)) == sorted(vars(made))
        assert {k: v for k, v in vars(g).items() if k != "_base_array"} == \
            {k: v for k, v in vars(made).items() if k != "_base_array"}
        assert g.dtype == w.dtype and g.shape == w.shape and _bits(g) == _bits(w)
        np.testing.assert_array_equal(jax.random.uniform(g, (3,)), jax.random.uniform(w, (3,)))
    assert _random._host["splits"] == 1 and _random.split(got[0]) and \
        _random._host["splits"] == 2  # a host-made key splits on the host again


def test_splits_past_the_host_budget_use_jax(monkeypatch):
    monkeypatch.setitem(_random._host, "splits", _random.HOST_SPLITS)
    key = jax.random.key(3)
    assert [_bits(k) for k in _random.split(key)] == [_bits(k) for k in jax.random.split(key)]
    assert _random._host["splits"] == _random.HOST_SPLITS


def test_splits_past_the_host_budget_reuse_one_program(monkeypatch):
    """Past the host's budget a concrete key is split by one compiled program, not by
    JAX's eager split (milliseconds of primitives dispatched one by one per split)."""
    monkeypatch.setitem(_random._host, "splits", _random.HOST_SPLITS)
    # the programs traced here, if not before: one split, then a chain of splits
    key = _random.split(_random.split(jax.random.key(4))[0])[0]
    want = [key]
    for _ in range(5):
        want.append(jax.random.split(want[-1])[0])
    eager = []
    real_split = jax.random.split
    monkeypatch.setattr(jax.random, "split", lambda *a, **k: eager.append(1) or real_split(*a, **k))
    for w in want[1:]:
        key = _random.split(key)[0]
        assert _bits(key) == _bits(w)
    assert eager == []


def test_splits_past_the_host_budget_in_sequence_are_jaxs_chain(monkeypatch):
    """Past the host's budget a key split in sequence (each split of the key the last gave)
    is split ``CHAIN`` steps ahead in one program: every key and subkey is still JAX's
    split of the one before, a key from elsewhere (a reseed, an interleaved chain) gets
    its own split, and the chain program runs once per ``CHAIN`` splits."""
    monkeypatch.setitem(_random._host, "splits", _random.HOST_SPLITS)
    runs = []
    real = _random._compiled_chain
    monkeypatch.setattr(_random, "_compiled_chain", lambda k: runs.append(1) or real(k))
    a, b = jax.random.key(11), jax.random.key(12)
    want_a, want_b, got_a, got_b = a, b, a, b
    n = 2 * _random.CHAIN + 3
    for i in range(n):
        want_a, sub = jax.random.split(want_a)
        got_a, got_sub = _random.split(got_a)
        assert [_bits(got_a), _bits(got_sub)] == [_bits(want_a), _bits(sub)]
        if i % 7 == 6:  # another chain in between: its own bits, and a's chain goes on
            want_b, sub = jax.random.split(want_b)
            got_b, got_sub = _random.split(got_b)
            assert [_bits(got_b), _bits(got_sub)] == [_bits(want_b), _bits(sub)]
    assert 3 <= len(runs) < n // 2


def test_a_seeded_draw_makes_no_program_for_keys():
    """Seeding and the key split of a draw compile nothing (the draws run on the host)."""
    hookgrad.manual_seed(5)
    hookgrad.rand(3)  # anything a first draw of this size compiles, compiled now
    names = []
    with jax.log_compiles(), _LogNames(names):
        hookgrad.manual_seed(6)
        hookgrad.rand(3)
    assert not [n for n in names if "threefry" in n or "split" in n], names


class _LogNames:
    """Collects the names of the programs JAX logs as compiled."""

    def __init__(self, out):
        import logging
        self.out, self.logging = out, logging

    def __enter__(self):
        out = self.out

        class H(self.logging.Handler):
            def emit(self, record):
                out.append(record.getMessage())
        self.h = H()
        self.logger = self.logging.getLogger("jax")
        self.logger.addHandler(self.h)
        return self

    def __exit__(self, *exc):
        self.logger.removeHandler(self.h)
