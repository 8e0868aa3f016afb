"""``hookgrad.Generator`` and ``default_generator``: PyTorch's API over JAX PRNG keys.
Numbers differ from PyTorch's for the same seed (JAX's PRNG), so the differential checks
compare the API's behaviour, not the draws."""
import pickle

import jax
import numpy as np
import pytest

import hookgrad
from hookgrad.nn import init
from tests.differential import raises, same_as_torch


def _draws(g):
    return [hookgrad.randperm(6, generator=g).tolist(), hookgrad.rand(3, generator=g).tolist(),
            hookgrad.randn(2, generator=g).tolist(),
            hookgrad.randint(0, 10, (3,), generator=g).tolist(),
            init.normal_(hookgrad.empty(2), generator=g).tolist()]


def test_generator_api_as_torch():
    def fn(L):
        g = L.Generator()
        return [g.initial_seed(), repr(g.device), g.manual_seed(3) is g, g.initial_seed(),
                g.manual_seed(-1).initial_seed(), isinstance(g.seed(), int),
                L.manual_seed(3) is L.default_generator, L.initial_seed(),
                L.default_generator.initial_seed(), str(L.get_rng_state().dtype).split(".")[1]]
    out = same_as_torch(fn)
    assert out[0] == 67280421310721 and out[4] == 2 ** 64 - 1


def test_seeded_generators_reproduce_and_leave_the_global_key_alone():
    hookgrad.manual_seed(0)
    state = hookgrad.get_rng_state()
    a = _draws(hookgrad.Generator().manual_seed(7))
    b = _draws(hookgrad.Generator().manual_seed(7))
    c = _draws(hookgrad.Generator().manual_seed(8))
    assert a == b and a != c
    assert hookgrad.get_rng_state().tolist() == state.tolist()


def test_generator_advances_and_get_set_state_round_trips():
    g = hookgrad.Generator().manual_seed(1)
    first = hookgrad.randperm(8, generator=g).tolist()
    state = g.get_state()
    second = hookgrad.randperm(8, generator=g).tolist()
    assert first != second
    assert g.set_state(state) is g
    assert hookgrad.randperm(8, generator=g).tolist() == second
    assert g.initial_seed() == 1 and state.dtype == hookgrad.uint8
    restored = pickle.loads(pickle.dumps(g))
    assert restored.get_state().tolist() == g.get_state().tolist()


def test_default_generator_is_the_global_key():
    hookgrad.manual_seed(5)
    x = hookgrad.rand(4).tolist()
    assert hookgrad.default_generator.manual_seed(5) is hookgrad.default_generator
    assert hookgrad.rand(4).tolist() == x
    state = hookgrad.get_rng_state()
    y = hookgrad.rand(4, generator=hookgrad.default_generator).tolist()
    hookgrad.set_rng_state(state)
    assert hookgrad.rand(4).tolist() == y


@pytest.mark.parametrize("call, error, match", [
    (lambda L: L.Generator().manual_seed("a"), RuntimeError,
     "manual_seed expected a long, but got str"),
    (lambda L: L.Generator().manual_seed(1.5), RuntimeError,
     "manual_seed expected a long, but got float"),
    (lambda L: L.Generator().manual_seed(2 ** 64), ValueError, "Overflow when unpacking long"),
    (lambda L: L.Generator().set_state([1]), TypeError, "expected a torch.ByteTensor, but got "
                                                        "list"),
    (lambda L: L.Generator().set_state(L.zeros(3)), TypeError,
     "RNG state must be a torch.ByteTensor"),
    (lambda L: L.Generator().set_state(L.zeros(3, dtype=L.uint8)), RuntimeError,
     "Invalid .*state"),
    (lambda L: L.Generator(device="meta"), RuntimeError, "META device type not an accelerator"),
    (lambda L: L.manual_seed("a"), ValueError, "invalid literal for int"),
])
def test_generator_bad_input(call, error, match):
    g = hookgrad.Generator().manual_seed(4)
    before = g.get_state().tolist()
    with pytest.raises(error, match=match):
        call(hookgrad)
    assert g.get_state().tolist() == before
    same_as_torch(lambda L: raises(call, L))


@pytest.mark.skipif(hookgrad.cuda.is_available(), reason="checks the behaviour without a GPU")
def test_cuda_generator_without_a_gpu():
    with pytest.raises(RuntimeError, match="Cannot get CUDA generator"):
        hookgrad.Generator("cuda")
    same_as_torch(lambda L: raises(L.Generator, "cuda"))


def test_non_default_generator_refused_under_compile():
    g = hookgrad.Generator().manual_seed(0)
    before = g.get_state().tolist()

    @hookgrad.compile(fullgraph=True)   # by default: eagerly
    def step(x):
        return x + hookgrad.rand(2, generator=g)
    with pytest.raises(RuntimeError, match="Generator other than the default one was used "
                                           "inside hookgrad.compile"):
        step(hookgrad.zeros(2))
    assert g.get_state().tolist() == before


def test_default_generator_under_compile_draws_fresh_numbers():
    @hookgrad.compile
    def step(x):
        return x + hookgrad.rand(2, generator=hookgrad.default_generator)
    hookgrad.manual_seed(0)
    a, b = step(hookgrad.zeros(2)).tolist(), step(hookgrad.zeros(2)).tolist()
    assert a != b
    assert not isinstance(hookgrad.random._state["key"], jax.core.Tracer)
    np.testing.assert_array_less(np.asarray(a), 1.0)
