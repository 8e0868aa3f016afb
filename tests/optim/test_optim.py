"""hookgrad.optim numerics against torch.optim: the same gradients give the same parameters
and state for every optimizer and a sweep of its options; param groups, hyper-parameter
changes, skipped parameters, closures; in-place updates and zero_grad."""
import numpy as np
import pytest

import hookgrad
from hookgrad import optim
from hookgrad.optim import _transform
from tests.optim._common import (INIT, Pair, arr, assert_matches_torch_step_by_step, leaf,
                                 sweep_ids, torch, torch_test)


SWEEP = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.5}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.01, "momentum": 0.5, "weight_decay": 0.1, "maximize": True}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "betas": (0.9, 0.9), "amsgrad": True}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-3, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("Adam", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1, "maximize": True}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "betas": (0.9, 0.9), "weight_decay": 0.1, "amsgrad": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "centered": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "eps": 1e-3}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.005, "maximize": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "weight_decay": 0.1, "initial_accumulator_value": 0.5}),
    ("Adagrad", {"lr": 0.1, "eps": 1e-2}),  # eps outside the root, as PyTorch
    ("Adagrad", {"lr": 0.05, "maximize": True}),
]


# ------------------------------------------------------------------ numerics vs PyTorch

@torch_test
@pytest.mark.parametrize("name,kwargs", SWEEP, ids=sweep_ids(SWEEP))
def test_matches_torch(name, kwargs):
    assert_matches_torch_step_by_step(name, kwargs, steps=8, state_tol=1e-4)


@torch_test
def test_param_groups_with_their_own_options():
    groups = [([0], {"lr": 0.1, "momentum": 0.9}), ([1], {"nesterov": True, "momentum": 0.5})]
    pair = Pair("SGD", {"lr": 0.02}, groups=groups)
    pair.step(5)
    pair.assert_close()
    assert pair.ho.param_groups[1]["lr"] == 0.02
    pair = Pair("Adam", {"lr": 0.01}, groups=[([0], {"lr": 0.1}), ([1], {"amsgrad": True})])
    pair.step(5)
    pair.assert_close()
    pair.assert_state_close(tol=1e-4)


@torch_test
def test_add_param_group_later():
    pair = Pair("Adam", {"lr": 0.05}, groups=[([0], {})])
    pair.step(2)
    pair.ho.add_param_group({"params": [pair.h[1]], "lr": 0.2})
    pair.to.add_param_group({"params": [pair.t[1]], "lr": 0.2})
    pair.step(3)
    pair.assert_close()
    pair.assert_state_close(tol=1e-4)


@torch_test
@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad"])
def test_lr_change_takes_effect_without_recompiling(name):
    pair = Pair(name, {"lr": 0.05, "momentum": 0.5} if name in ("SGD", "RMSprop")
                else {"lr": 0.05})
    pair.step(3)
    statics = (pair.ho._static(pair.ho.param_groups[0]),)
    fn = _transform._update_fn(type(pair.ho), statics)
    compiled = fn._cache_size()
    for o in (pair.ho, pair.to):
        o.param_groups[0]["lr"] = 0.01
    pair.step(3)
    pair.assert_close()
    assert fn._cache_size() == compiled  # lr is a jit argument, not a constant


@torch_test
def test_structural_option_change_carries_state():
    pair = Pair("SGD", {"lr": 0.05})
    pair.step(2)
    for o in (pair.ho, pair.to):  # momentum on: the buffer starts from the next gradient
        o.param_groups[0]["momentum"] = 0.9
        o.param_groups[0]["dampening"] = 0.3
    pair.step(3)
    pair.assert_close()
    pair.assert_state_close()
    pair = Pair("Adam", {"lr": 0.05})
    pair.step(2)
    for o in (pair.ho, pair.to):
        o.param_groups[0]["maximize"] = True
        o.param_groups[0]["weight_decay"] = 0.1
    pair.step(3)
    pair.assert_close()
    pair.assert_state_close(tol=1e-4)


@torch_test
@pytest.mark.parametrize("name", ["Adam", "SGD"])
def test_params_without_grad_are_skipped(name):
    pair = Pair(name, {"lr": 0.05, "momentum": 0.9} if name == "SGD" else {"lr": 0.05})
    pair.step(2)
    before = arr(pair.h[1]).copy()
    version = pair.h[1]._version
    pair.step(2, skip=(1,))
    np.testing.assert_array_equal(arr(pair.h[1]), before)
    assert pair.h[1]._version == version
    pair.step(2)
    pair.assert_close()
    pair.assert_state_close(tol=1e-4)  # per-parameter step counts differ, as in PyTorch


@torch_test
def test_step_from_real_backward():
    x = np.linspace(-1, 1, 3).astype(np.float32)

    def run(lib, p):
        opt = lib.optim.Adam([p], lr=0.1)
        for _ in range(4):
            opt.zero_grad()
            loss = ((p * lib.tensor(x) - 1.0) ** 2).sum()
            loss.backward()
            opt.step()
        return arr(p)

    np.testing.assert_allclose(run(hookgrad, leaf(INIT[0])),
                               run(torch, torch.nn.Parameter(torch.tensor(INIT[0]))),
                               rtol=1e-5, atol=1e-5)


@torch_test
def test_closure_runs_with_grad_and_returns_loss():
    pair = Pair("SGD", {"lr": 0.1})
    modes = []

    def closure(lib, p, opt):
        def f():
            modes.append(lib.is_grad_enabled())
            opt.zero_grad()
            loss = (p * p).sum()
            loss.backward()
            return loss
        return f

    with hookgrad.no_grad():
        hl = pair.ho.step(closure(hookgrad, pair.h[0], pair.ho))
    with torch.no_grad():
        tl = pair.to.step(closure(torch, pair.t[0], pair.to))
    assert modes == [True, True]
    assert hl.item() == pytest.approx(tl.item())
    pair.assert_close()


# ------------------------------------------------------------------ in place, grads

def test_step_updates_leaf_in_place_and_bumps_version():
    p = leaf(INIT[0])
    opt = optim.SGD([p], lr=0.5)
    assert hookgrad.is_grad_enabled()
    for i in range(1, 3):
        before = arr(p).copy()
        p.grad = hookgrad.tensor(np.ones(3, np.float32))
        obj = p
        opt.step()
        assert p is obj and p.is_leaf and p.requires_grad
        assert p._version == i
        np.testing.assert_allclose(arr(p), before - 0.5)
    # still a working leaf of new graphs
    (p * 2).sum().backward()
    np.testing.assert_allclose(arr(p.grad), np.full(3, 3.0))


def test_saved_tensor_sees_optimizer_write():
    p = leaf(INIT[0])
    y = (p * p).sum()  # saves p
    p.grad = hookgrad.tensor(np.ones(3, np.float32))
    optim.SGD([p], lr=0.1).step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_zero_grad():
    ps = [leaf(a) for a in INIT]
    opt = optim.SGD(ps, lr=0.1)
    opt.zero_grad()  # no grads yet: nothing to do
    for p in ps:
        (p * 3).sum().backward()
    g0 = ps[0].grad
    opt.zero_grad(set_to_none=False)
    assert ps[0].grad is g0 and not g0.requires_grad
    for p in ps:
        np.testing.assert_array_equal(arr(p.grad), np.zeros(p.shape))
    opt.zero_grad()
    assert all(p.grad is None for p in ps)
    opt.step()  # no gradients: nothing moves
    np.testing.assert_array_equal(arr(ps[0]), INIT[0])
    assert ps[0]._version == 0


_FLOAT64_SCRIPT = """
import jax
jax.config.update("jax_enable_x64", True)
import numpy as np, torch, hookgrad
worst = 0.0
for name, kw in [("SGD", dict(lr=0.1, momentum=0.9, dampening=0.2, weight_decay=0.1)),
                 ("Adam", dict(lr=0.1, amsgrad=True, weight_decay=0.1)),
                 ("AdamW", dict(lr=0.1)), ("RMSprop", dict(centered=True, momentum=0.5)),
                 ("Adagrad", dict(lr=0.1, lr_decay=0.1, eps=1e-3))]:
    x0 = np.array([1.0, -2.0, 3.0])
    p = hookgrad.tensor(x0, dtype=hookgrad.float64, requires_grad=True)
    t = torch.nn.Parameter(torch.tensor(x0))
    ho = getattr(hookgrad.optim, name)([p], **kw)
    to = getattr(torch.optim, name)([t], **kw)
    for _ in range(6):
        g = np.sin(3 * t.detach().numpy())
        p.grad = hookgrad.tensor(g, dtype=hookgrad.float64)
        t.grad = torch.tensor(g)
        ho.step(); to.step()
    worst = max(worst, float(np.abs(np.asarray(p._data) - t.detach().numpy()).max()))
print(worst)
"""


@pytest.mark.slow
@torch_test
def test_float64_matches_torch_to_rounding():
    """With x64 (in a subprocess: the flag is global) the formulas agree to ~1e-16, which
    float32 tolerances could not show."""
    import subprocess
    import sys
    from pathlib import Path
    out = subprocess.run([sys.executable, "-c", _FLOAT64_SCRIPT], capture_output=True,
                         text=True, cwd=Path(__file__).resolve().parents[2], timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert float(out.stdout.strip().splitlines()[-1]) < 1e-13
