"""NAdam, RAdam, Adamax and LBFGS against torch.optim: the same gradients give the same
parameters and state step by step; argument errors; state_dict round trips; inside
hookgrad.compile."""
import re

import numpy as np
import pytest

import hookgrad
from hookgrad import optim
from tests.optim._common import (INIT, arr, assert_compiled_matches_eager,
                                 assert_matches_torch_step_by_step, assert_state_dict_round_trips,
                                 leaf, quad_grad, sweep_ids, torch, torch_test)

SWEEP = [
    ("NAdam", {}),
    ("NAdam", {"lr": 0.05, "betas": (0.8, 0.99), "momentum_decay": 0.1}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("NAdam", {"lr": 0.01, "eps": 1e-3, "maximize": True}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.05, "betas": (0.8, 0.9)}),  # rectified from step 3 on
    ("RAdam", {"lr": 0.05, "betas": (0.9, 0.9), "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.05, "betas": (0.9, 0.8), "weight_decay": 0.1,
               "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.05, "betas": (0.5, 0.7), "eps": 1e-2, "maximize": True}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.05, "betas": (0.8, 0.9), "eps": 1e-3}),
    ("Adamax", {"lr": 0.05, "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.05, "maximize": True}),
]


@torch_test
@pytest.mark.parametrize("name,kwargs", SWEEP, ids=sweep_ids(SWEEP))
def test_matches_torch_step_by_step(name, kwargs):
    assert_matches_torch_step_by_step(name, kwargs)


@torch_test
@pytest.mark.parametrize("name", ["NAdam", "RAdam", "Adamax"])
def test_state_dict_round_trips_to_and_from_torch(name):
    assert_state_dict_round_trips(name, {"lr": 0.05, "betas": (0.8, 0.9)})


def test_state_has_pytorch_names():
    ps = [leaf(a) for a in INIT]
    for cls, names in ((optim.NAdam, ["step", "mu_product", "exp_avg", "exp_avg_sq"]),
                       (optim.RAdam, ["step", "exp_avg", "exp_avg_sq"]),
                       (optim.Adamax, ["step", "exp_avg", "exp_inf"])):
        opt = cls(ps)
        assert opt.state[ps[0]] == {}
        for k, p in enumerate(ps):
            p.grad = hookgrad.tensor(quad_grad(k, arr(p)))
        opt.step()
        assert list(opt.state[ps[1]]) == names
        assert opt.state[ps[1]]["step"].item() == 1.0


def test_nadam_mu_product_is_the_schedule_product():
    p = leaf(INIT[0])
    opt = optim.NAdam([p], betas=(0.9, 0.999), momentum_decay=0.004)
    expected = 1.0
    for t in range(1, 4):
        p.grad = hookgrad.tensor(quad_grad(0, arr(p)))
        opt.step()
        expected *= 0.9 * (1 - 0.5 * 0.96 ** (t * 0.004))
    np.testing.assert_allclose(opt.state[p]["mu_product"].item(), expected, rtol=1e-6)


@pytest.mark.parametrize("name", ["NAdam", "RAdam", "Adamax"])
def test_argument_errors(name):
    cls = getattr(optim, name)
    p = [leaf(INIT[0])]
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        cls(p, lr=-1)
    with pytest.raises(ValueError, match="Invalid epsilon value: -0.1"):
        cls(p, eps=-0.1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 0: 1.0"):
        cls(p, betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: -0.5"):
        cls(p, betas=(0.9, -0.5))
    with pytest.raises(ValueError, match="Invalid weight_decay value: -0.1"):
        cls(p, weight_decay=-0.1)
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        cls(p, differentiable=True)
    if name == "NAdam":
        with pytest.raises(ValueError, match="Invalid momentum_decay value: -1"):
            cls(p, momentum_decay=-1)


@pytest.mark.parametrize("name,kwargs", [("NAdam", {"lr": 0.05, "weight_decay": 0.1}),
                                         ("RAdam", {"lr": 0.05, "betas": (0.8, 0.9)}),
                                         ("Adamax", {"lr": 0.05})])
def test_inside_compile(name, kwargs):
    assert_compiled_matches_eager(name, kwargs)


# ------------------------------------------------------------------ LBFGS

def _quad_loss(L, ps):
    """0.5 x'Ax + b'x per parameter (tests/optim/_common.py's quadratic)."""
    from tests.optim._common import _QUAD
    total = 0
    for (a, b), p in zip(_QUAD, ps):
        x = p.reshape(-1)
        total = total + 0.5 * (x * (L.tensor(a) @ x)).sum() + (L.tensor(b) * x).sum()
    return total


def _mlp_loss(L, ps):
    w1, b1, w2 = ps
    x = L.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2))
    target = L.tensor(np.array([[0.5], [-0.2], [0.1], [0.9]], np.float32))
    h = L.tanh(x @ w1 + b1)
    return ((h @ w2 - target) ** 2).mean()


_MLP_INIT = [np.random.RandomState(1).randn(*s).astype(np.float32) * 0.5
             for s in ((2, 3), (3,), (3, 1))]


def _lbfgs_run(L, loss_fn, init, kwargs, steps):
    if L is hookgrad:
        ps = [leaf(a) for a in init]
    else:
        ps = [L.nn.Parameter(L.tensor(np.array(a))) for a in init]
    opt = L.optim.LBFGS(ps, **kwargs)
    calls = []

    def closure():
        opt.zero_grad()
        loss = loss_fn(L, ps)
        loss.backward()
        calls.append(1)
        return loss

    losses = [opt.step(closure).item() for _ in range(steps)]
    return ps, opt, losses, len(calls)


# few enough iterations that float32 rounding (torch's kernels vs XLA's) stays below
# 1e-5: a quasi-Newton method amplifies it over many iterations
LBFGS_CASES = [
    ("quad", {"max_iter": 3}),
    ("quad", {"lr": 0.5, "max_iter": 4, "history_size": 2}),
    ("quad", {"lr": 0.1, "max_iter": 3, "max_eval": 2}),
    ("mlp", {"lr": 0.8, "max_iter": 3}),
    ("mlp", {"max_iter": 4, "history_size": 2, "tolerance_change": 1e-4}),
    ("quad", {"line_search_fn": "strong_wolfe", "max_iter": 3}),
    ("mlp", {"line_search_fn": "strong_wolfe", "max_iter": 3}),
    # a long first step: the search brackets and zooms back
    ("mlp", {"line_search_fn": "strong_wolfe", "lr": 20.0, "max_iter": 3,
             "history_size": 2}),
    ("quad", {"line_search_fn": "strong_wolfe", "lr": 30.0, "max_iter": 2, "max_eval": 4}),
]


@torch_test
@pytest.mark.parametrize("problem,kwargs", LBFGS_CASES,
                         ids=[f"{p}-{'-'.join(k)}" for p, k in LBFGS_CASES])
def test_lbfgs_matches_torch(problem, kwargs):
    loss_fn, init = (_quad_loss, INIT) if problem == "quad" else (_mlp_loss, _MLP_INIT)
    hp, ho, hl, hcalls = _lbfgs_run(hookgrad, loss_fn, init, kwargs, 2)
    tp, to, tl, tcalls = _lbfgs_run(torch, loss_fn, init, kwargs, 2)
    assert hcalls == tcalls
    np.testing.assert_allclose(hl, tl, rtol=1e-5, atol=1e-6)
    for h, t in zip(hp, tp):
        np.testing.assert_allclose(arr(h), arr(t), rtol=1e-5, atol=1e-5)
    hs, ts = ho.state[hp[0]], to.state[tp[0]]
    assert (hs["func_evals"], hs["n_iter"]) == (ts["func_evals"], ts["n_iter"])
    assert len(hs["old_dirs"]) == len(ts["old_dirs"])
    for name in ("d", "prev_flat_grad", "H_diag", "t"):
        np.testing.assert_allclose(np.asarray(arr(hs[name]) if isinstance(
            hs[name], hookgrad.Tensor) else hs[name]), np.asarray(ts[name]), rtol=1e-4,
            atol=1e-5, err_msg=name)
    assert hs["prev_loss"] == pytest.approx(ts["prev_loss"], rel=5e-5)


def test_lbfgs_converges_on_the_quadratic():
    from tests.optim._common import _QUAD
    ps, opt, losses, _ = _lbfgs_run(hookgrad, _quad_loss, INIT, {"max_iter": 50}, 2)
    for (a, b), p in zip(_QUAD, ps):  # the minimiser solves A x = -b
        np.testing.assert_allclose(arr(p).reshape(-1), np.linalg.solve(a, -b), rtol=1e-4,
                                   atol=1e-4)
    assert losses[1] < losses[0]


@torch_test
def test_lbfgs_state_dict_from_torch_continues_like_torch():
    kwargs = {"lr": 0.8, "max_iter": 3, "history_size": 4}
    tp, to, _, _ = _lbfgs_run(torch, _mlp_loss, _MLP_INIT, kwargs, 2)
    hp = [leaf(arr(p)) for p in tp]
    ho = optim.LBFGS(hp, **kwargs)
    ho.load_state_dict(to.state_dict())
    for L, ps, opt in ((hookgrad, hp, ho), (torch, tp, to)):
        def closure(L=L, ps=ps, opt=opt):
            opt.zero_grad()
            loss = _mlp_loss(L, ps)
            loss.backward()
            return loss
        opt.step(closure)
    for h, t in zip(hp, tp):
        np.testing.assert_allclose(arr(h), arr(t), rtol=1e-5, atol=1e-5)


def test_lbfgs_errors():
    p = leaf(INIT[0])
    with pytest.raises(TypeError, match=re.escape(
            "LBFGS.step() missing 1 required positional argument: 'closure'")):
        optim.LBFGS([p]).step()
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.LBFGS([p], lr=-1)
    with pytest.raises(ValueError, match=re.escape(
            "LBFGS doesn't support per-parameter options (parameter groups)")):
        optim.LBFGS([{"params": [p]}, {"params": [leaf(INIT[1])]}])
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        optim.LBFGS([p], line_search_fn="armijo").step(lambda: 0.0)
    assert optim.LBFGS([p], max_iter=8).defaults["max_eval"] == 10


def test_lbfgs_with_a_compiled_closure_and_not_inside_compile():
    p = leaf(INIT[0])
    opt = optim.LBFGS([p], max_iter=3)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="cannot run inside hookgrad.compile"):
        hookgrad.compile(lambda: opt.step(closure), fullgraph=True)()   # default: eagerly
    assert p not in opt.state  # nothing recorded by the refused step
    ref = leaf(INIT[0])
    ref_opt = optim.LBFGS([ref], max_iter=3)

    def ref_closure():
        ref_opt.zero_grad()
        loss = (ref * ref).sum()
        loss.backward()
        return loss

    compiled = hookgrad.compile(closure)
    for _ in range(2):
        np.testing.assert_allclose(opt.step(compiled).item(), ref_opt.step(ref_closure).item(),
                                   rtol=1e-6)
    np.testing.assert_allclose(arr(p), arr(ref), rtol=1e-6, atol=1e-7)
