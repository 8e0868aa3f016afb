"""ASGD, Adafactor and Muon against torch.optim: the same gradients give the same
parameters and state step by step, on a quadratic and on a model; argument and step
errors; state_dict round trips; inside hookgrad.compile."""
import re

import jax
import numpy as np
import pytest

import hookgrad
from hookgrad import optim
from tests.optim._common import (INIT, Pair, arr, assert_compiled_matches_eager,
                                 assert_matches_torch_step_by_step, assert_state_dict_round_trips,
                                 leaf, quad_grad, sweep_ids, torch, torch_test)

_RNG = np.random.RandomState(3)
# Muon takes matrices only; Adafactor factors 2-D and higher (quad_grad wants 3 and 4 values)
MATRICES = [_RNG.randn(3, 1).astype(np.float32), _RNG.randn(2, 2).astype(np.float32)]
FACTORED_3D = [INIT[0], _RNG.randn(1, 2, 2).astype(np.float32)]

SWEEP = [
    ("ASGD", {}, INIT),
    ("ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 2}, INIT),
    ("ASGD", {"lr": 0.05, "t0": 3, "weight_decay": 0.1, "maximize": True}, INIT),
    ("Adafactor", {}, INIT),
    ("Adafactor", {"lr": 0.05, "beta2_decay": -0.5, "eps": (1e-3, 1e-2), "d": 1.5}, INIT),
    ("Adafactor", {"lr": 0.05, "weight_decay": 0.1, "maximize": True}, INIT),
    ("Adafactor", {"lr": 0.05, "eps": (None, 0.5)}, FACTORED_3D),
    ("Muon", {}, MATRICES),
    ("Muon", {"lr": 0.02, "adjust_lr_fn": "match_rms_adamw", "weight_decay": 0.0}, MATRICES),
    ("Muon", {"lr": 0.02, "momentum": 0.5, "nesterov": False, "ns_steps": 3,
              "ns_coefficients": (2.0, -1.5, 0.5), "adjust_lr_fn": "original"}, MATRICES),
]


@torch_test
@pytest.mark.parametrize("name,kwargs,init", SWEEP, ids=sweep_ids(SWEEP))
def test_matches_torch_step_by_step(name, kwargs, init):
    assert_matches_torch_step_by_step(name, kwargs, init=init)


@torch_test
@pytest.mark.parametrize("name,groups,init", [
    ("ASGD", [([0], {"lr": 0.05}), ([1], {"lr": 0.1, "t0": 1, "maximize": True})], INIT),
    ("Adafactor", [([0], {}), ([1], {"lr": 0.05, "weight_decay": 0.1})], FACTORED_3D),
    ("Muon", [([0], {"nesterov": False}), ([1], {"lr": 0.02, "momentum": 0.5})], MATRICES),
], ids=["ASGD", "Adafactor", "Muon"])
def test_param_groups_and_skipped_parameters_match_torch(name, groups, init):
    # a parameter without a gradient is skipped: its state (and step) stay
    pair = Pair(name, groups=groups, init=init)
    for skip in ((), (1,), (0,), (), (1,)):
        pair.step(skip=skip)
        pair.assert_close()
    pair.assert_state_close()


@torch_test
def test_asgd_eta_follows_the_previous_steps_lr():
    pair = Pair("ASGD", {"lr": 0.1, "lambd": 0.05, "t0": 1})
    for lr in (0.1, 0.05, 0.2, 0.01):
        for group in pair.ho.param_groups + pair.to.param_groups:
            group["lr"] = lr
        pair.step()
        pair.assert_close()
    pair.assert_state_close()


@torch_test
@pytest.mark.parametrize("name,kwargs,init", [
    ("ASGD", {"lr": 0.05, "t0": 2}, INIT),
    ("Adafactor", {"lr": 0.05}, FACTORED_3D),
    ("Muon", {"lr": 0.02}, MATRICES),
])
def test_state_dict_round_trips_to_and_from_torch(name, kwargs, init):
    assert_state_dict_round_trips(name, kwargs, init=init)


def test_state_has_pytorch_names_and_shapes():
    ps = [leaf(a) for a in FACTORED_3D]
    for cls, names in ((optim.ASGD, [["step", "eta", "mu", "ax"]] * 2),
                       (optim.Adafactor, [["step", "variance"], ["step", "row_var", "col_var"]])):
        opt = cls(ps)
        for k, p in enumerate(ps):
            p.grad = hookgrad.tensor(quad_grad(k, arr(p)))
        opt.step()
        assert [list(opt.state[p]) for p in ps] == names
    assert opt.state[ps[1]]["row_var"].shape == (1, 2, 1)
    assert opt.state[ps[1]]["col_var"].shape == (1, 1, 2)
    with pytest.raises(ValueError, match=re.escape("has shape (2, 2), but expected (1, 2, 1)")):
        opt.state[ps[1]] = {"step": 1.0, "row_var": hookgrad.zeros(2, 2),
                            "col_var": hookgrad.zeros(1, 1, 2)}
    ms = [leaf(a) for a in MATRICES]
    opt = optim.Muon(ms)
    for k, p in enumerate(ms):
        p.grad = hookgrad.tensor(quad_grad(k, arr(p)))
    opt.step()
    assert list(opt.state[ms[0]]) == ["momentum_buffer"]


def _model(L, bias, rng=np.random.RandomState(7)):
    """The same two-layer model in hookgrad or PyTorch."""
    w = [rng.randn(5, 4).astype(np.float32) * 0.5, rng.randn(5).astype(np.float32) * 0.1,
         rng.randn(2, 5).astype(np.float32) * 0.5, rng.randn(2).astype(np.float32) * 0.1]
    model = L.nn.Sequential(L.nn.Linear(4, 5, bias=bias), L.nn.Tanh(),
                            L.nn.Linear(5, 2, bias=bias))
    with L.no_grad():
        for p, v in zip(model.parameters(), w if bias else w[::2]):
            p.copy_(L.tensor(v))
    return model


def _train(L, name, kwargs, bias, steps=5):
    model = _model(L, bias, np.random.RandomState(7))
    opt = getattr(L.optim, name)(model.parameters(), **kwargs)
    # a batch larger than the layers: full-rank gradients (Newton-Schulz lifts a rank-
    # deficient matrix's rounding noise to singular values near 1)
    data = np.random.RandomState(8)
    x = L.tensor(data.randn(8, 4).astype(np.float32))
    y = L.tensor(data.randn(8, 2).astype(np.float32))
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return [arr(p) for p in model.parameters()], losses


@torch_test
@pytest.mark.parametrize("name,kwargs,bias", [
    ("ASGD", {"lr": 0.1, "t0": 2}, True),
    ("Adafactor", {"lr": 0.05, "weight_decay": 0.01}, True),
    ("Muon", {"lr": 0.02}, False),
])
def test_trains_a_model_as_torch(name, kwargs, bias):
    hp, hl = _train(hookgrad, name, kwargs, bias)
    tp, tl = _train(torch, name, kwargs, bias)
    np.testing.assert_allclose(hl, tl, rtol=1e-5, atol=1e-6)
    for h, t in zip(hp, tp):
        np.testing.assert_allclose(h, t, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,kwargs,bias", [
    ("ASGD", {"lr": 0.05, "t0": 1, "weight_decay": 0.1}, True),
    ("Adafactor", {"lr": 0.05}, True),
    ("Muon", {"lr": 0.02}, False),
])
def test_inside_compile(name, kwargs, bias):
    assert_compiled_matches_eager(name, kwargs, bias=bias)


@torch_test
@pytest.mark.parametrize("name,kwargs,error,match", [
    ("ASGD", {"lr": -1}, ValueError, "Invalid learning rate: -1"),
    ("ASGD", {"weight_decay": -0.5}, ValueError, "Invalid weight_decay value: -0.5"),
    ("Adafactor", {"lr": -1}, ValueError, "Learning rate should be >= 0 but is: -1"),
    ("Adafactor", {"beta2_decay": 0.5}, ValueError, "beta2_decay should be <= 0 but is: 0.5"),
    ("Adafactor", {"eps": (-1, 1e-3)}, ValueError, "epsilon1 should be >= 0 but is: -1"),
    ("Adafactor", {"eps": (None, -1)}, ValueError, "epsilon2 should be >= 0 but is: -1"),
    ("Adafactor", {"d": 0.5}, ValueError, "Clipping threshold d should be >= 1 but is: 0.5"),
    ("Adafactor", {"weight_decay": -1}, ValueError, "weight_decay should be >= 0 but is: -1"),
    ("Muon", {"lr": -1}, ValueError, "Learning rate should be >= 0 but is: -1"),
    ("Muon", {"momentum": -1}, ValueError, "momentum should be >= 0 but is: -1"),
    ("Muon", {"weight_decay": -1}, ValueError, "weight decay should be >= 0 but is: -1"),
    ("Muon", {"adjust_lr_fn": "x"}, ValueError,
     "Adjust learning rate function x is not supported"),
    ("Muon", {"foreach": True}, TypeError, "unexpected keyword argument 'foreach'"),
])
def test_argument_errors_match_torch(name, kwargs, error, match):
    for lib in (hookgrad, torch):
        p = leaf(MATRICES[1]) if lib is hookgrad else torch.nn.Parameter(torch.zeros(2, 2))
        with pytest.raises(error, match=match):
            getattr(lib.optim, name)([p], **kwargs)


@torch_test
def test_muon_step_errors_match_torch():
    for lib in (hookgrad, torch):
        mat = leaf(MATRICES[1]) if lib is hookgrad else torch.nn.Parameter(torch.ones(2, 2))
        vec = leaf(INIT[0]) if lib is hookgrad else torch.nn.Parameter(torch.ones(3))
        with pytest.raises(ValueError, match=re.escape(
                "Muon only supports 2D parameters whereas we found a parameter with size: "
                "torch.Size([3])")):
            lib.optim.Muon([vec])
        opt = lib.optim.Muon([mat])
        opt.add_param_group({"params": [vec]})  # not checked until it steps
        vec.grad = lib.ones(3)
        with pytest.raises(ValueError, match="Param gradient must be a 2D matrix"):
            opt.step()
        for key, value, match in (("ns_steps", 100, "Number of steps must be less than 100"),
                                  ("ns_coefficients", (1.0, 2.0),
                                   "Coefficients must be a tuple of exactly 3 values")):
            opt = lib.optim.Muon([mat], **{key: value})
            mat.grad = lib.ones(2, 2)
            with pytest.raises(ValueError, match=match):
                opt.step()
    assert arr(mat).tolist() == [[1.0, 1.0], [1.0, 1.0]]  # nothing written by the failures


@torch_test
def test_muon_orthogonalises_as_torch():
    from torch.optim._muon import _zeropower_via_newtonschulz as torch_ns

    from hookgrad.optim._muon import _newton_schulz
    rng = np.random.RandomState(0)
    ns = jax.jit(_newton_schulz, static_argnums=(4,))
    for shape in ((3, 1), (2, 5), (6, 4), (16, 32)):
        g = rng.randn(*shape).astype(np.float32)
        want = torch_ns(torch.tensor(g), (3.4445, -4.7750, 2.0315), 5, 1e-7).float().numpy()
        # each iteration rounds to bfloat16 as PyTorch's does, inside jit too
        np.testing.assert_array_equal(np.asarray(ns(g, 3.4445, -4.7750, 2.0315, 5, 1e-7)),
                                      want)


def test_modules_mirror_pytorchs_paths():
    from hookgrad.optim import asgd, sparse_adam
    assert asgd.ASGD is optim.ASGD and sparse_adam.SparseAdam is optim.SparseAdam
    with pytest.raises(AttributeError, match="hookgrad does not implement torch.optim.asgd.asgd"):
        asgd.asgd  # noqa: B018 - PyTorch's functional form
