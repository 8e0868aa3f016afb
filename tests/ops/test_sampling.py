"""The sampling ops: what PyTorch records for them and the distributions they draw from
(the numbers themselves differ from PyTorch's: docs/differences.md)."""
import pytest

import hookgrad
from tests.differential import py, raises, same_as_torch

_FILLS = [
    ("normal_", (2.0, 3.0), 2.0, 3.0), ("uniform_", (1.0, 3.0), 2.0, 2 / 12 ** 0.5),
    ("exponential_", (2.0,), 0.5, 0.5), ("log_normal_", (0.0, 0.5), 1.133, 0.604),
    ("geometric_", (0.5,), 2.0, 2 ** 0.5), ("bernoulli_", (0.3,), 0.3, 0.458),
    ("random_", (0, 5), 2.0, 2 ** 0.5),
]


@pytest.mark.parametrize("name, args, mean, std", _FILLS)
def test_a_fill_records_torchs_node_with_a_zero_gradient(name, args, mean, std):
    def run(L):
        x = L.ones(4, requires_grad=True)
        y = x * 2
        out = getattr(y, name)(*args)
        out.sum().backward()
        return {"same": out is y, "node": y.grad_fn.name(), "grad": py(x.grad),
                "dtype": str(y.dtype).split(".")[1]}
    got = same_as_torch(run)
    assert got["same"] and got["grad"] == [0.0] * 4


@pytest.mark.parametrize("name, args, mean, std", _FILLS)
def test_a_fill_draws_from_its_distribution(name, args, mean, std):
    hookgrad.manual_seed(30)
    x = getattr(hookgrad.zeros(20000), name)(*args)
    n = x.numel() ** 0.5
    assert abs(x.mean().item() - mean) < 5 * std / n
    assert abs(x.std().item() - std) < 0.1 * std


def test_cauchy_median():
    hookgrad.manual_seed(30)
    x = hookgrad.zeros(20000).cauchy_(1.0, 2.0)
    assert abs(x.median().item() - 1.0) < 0.1


def test_bernoulli_with_a_tensor_of_probabilities():
    hookgrad.manual_seed(30)
    p = hookgrad.tensor([0.0, 1.0]).repeat(1000)
    x = hookgrad.zeros(2000).bernoulli_(p)
    assert x.tolist() == p.tolist()
    assert hookgrad.bernoulli(p).tolist() == p.tolist()


@pytest.mark.parametrize("call", [
    lambda L: L.randn(2, requires_grad=True).normal_(),
    lambda L: L.ones(2).normal_(0, -1.0),
    lambda L: L.ones(2).uniform_(2, 1),
    lambda L: L.ones(2).exponential_(-1),
    lambda L: L.ones(2).geometric_(1.5),
    lambda L: L.ones(2).random_(3, 2),
    lambda L: L.multinomial(L.ones(3), 4),
    lambda L: L.multinomial(L.ones(3), 0),
    lambda L: L.multinomial(L.ones(1, 1, 3), 1),
])
def test_bad_input_gets_torchs_error(call):
    got = same_as_torch(lambda L: raises(call, L))
    assert got["raises"] == "RuntimeError"


def test_sampling_functions_record_torchs_nodes():
    def run(L):
        m = L.tensor([0.2, 0.5, 0.9], requires_grad=True)
        outs = {"normal_tf": L.normal(m, 1.0), "normal_ft": L.normal(0.0, m),
                "normal_tt": L.normal(m, m), "bernoulli": L.bernoulli(m),
                "poisson": L.poisson(m)}
        res = {k: [v.grad_fn.name(), list(v.shape), str(v.dtype).split(".")[1]]
               for k, v in outs.items()}
        sum(v.sum() for k, v in outs.items()).backward()
        fixed = L.normal(0.0, 1.0, (2, 3))
        return res | {"grad": py(m.grad), "fixed": [list(fixed.shape), fixed.requires_grad],
                      "multinomial": [str(L.multinomial(m, 2).dtype).split(".")[1],
                                      list(L.multinomial(m.detach()[None], 5, True).shape)]}
    got = same_as_torch(run)
    assert got["grad"] == [0.0, 0.0, 0.0]


def test_multinomial_draws_by_weight():
    hookgrad.manual_seed(30)
    w = hookgrad.tensor([[1.0, 0.0, 3.0]])
    draws = hookgrad.multinomial(w, 4000, replacement=True)
    assert set(draws.unique().tolist()) == {0, 2}
    assert abs((draws == 2).float().mean().item() - 0.75) < 0.03
    picks = hookgrad.multinomial(hookgrad.tensor([1.0, 0.0, 3.0, 2.0]), 3)
    assert sorted(picks.tolist()) == [0, 2, 3]


def test_samples_inside_compile_are_traced_draws():
    @hookgrad.compile
    def f(x):
        return x.clone().normal_() + hookgrad.bernoulli(x * 0 + 0.5)
    hookgrad.manual_seed(30)
    a = f(hookgrad.zeros(2000))
    assert abs(a.mean().item() - 0.5) < 0.1 and a.shape == (2000,)
