"""hookgrad.optim.lr_scheduler against torch.optim.lr_scheduler: lr sequences, state dicts,
resuming, warnings, errors, and a schedule driving training."""
import re
import warnings

import numpy as np
import pytest

import hookgrad
from hookgrad import optim
from hookgrad.optim import lr_scheduler
from tests.optim._common import INIT, Pair, leaf, torch, torch_test


def _halve(epoch):
    return 0.5 ** (epoch // 2)


def _slow(epoch):
    return 1.0 / (1 + epoch)


SCHEDULES = [
    ("StepLR", {"step_size": 3, "gamma": 0.5}),
    ("MultiStepLR", {"milestones": [2, 5, 5, 9], "gamma": 0.1}),
    ("ExponentialLR", {"gamma": 0.9}),
    ("CosineAnnealingLR", {"T_max": 4, "eta_min": 0.001}),  # 12 epochs: down, up, down
    ("CosineAnnealingLR", {"T_max": 5}),
    ("LinearLR", {}),
    ("LinearLR", {"start_factor": 0.25, "end_factor": 0.5, "total_iters": 4}),
    ("LambdaLR", {"lr_lambda": _halve}),
    ("LambdaLR", {"lr_lambda": [_halve, _slow]}),
]


def _pair(name, kwargs, lrs=(0.1, 0.02)):
    """hookgrad and torch SGD with two groups, each with a scheduler."""
    hps = [leaf(a) for a in INIT]
    tps = [torch.nn.Parameter(torch.tensor(a)) for a in INIT]
    ho = optim.SGD([{"params": [hps[0]], "lr": lrs[0]}, {"params": [hps[1]], "lr": lrs[1]}])
    to = torch.optim.SGD([{"params": [tps[0]], "lr": lrs[0]},
                          {"params": [tps[1]], "lr": lrs[1]}])
    hs = getattr(lr_scheduler, name)(ho, **kwargs)
    ts = getattr(torch.optim.lr_scheduler, name)(to, **kwargs)
    return ho, to, hs, ts


def _assert_same(hs, ts, ho, to):
    assert hs.last_epoch == ts.last_epoch
    np.testing.assert_allclose(hs.get_last_lr(), ts.get_last_lr(), rtol=1e-13, atol=0)
    np.testing.assert_allclose([g["lr"] for g in ho.param_groups],
                               [g["lr"] for g in to.param_groups], rtol=1e-13, atol=0)


@torch_test
@pytest.mark.parametrize("name,kwargs", SCHEDULES, ids=[f"{n}{i}" for i, (n, _) in
                                                         enumerate(SCHEDULES)])
def test_lr_sequence_matches_torch(name, kwargs):
    ho, to, hs, ts = _pair(name, kwargs)
    _assert_same(hs, ts, ho, to)
    seen = set()
    for _ in range(12):
        ho.step()
        to.step()
        hs.step()
        ts.step()
        _assert_same(hs, ts, ho, to)
        seen.add(round(hs.get_last_lr()[0], 12))
    assert len(seen) > 1  # the schedule did change the lr
    assert ho.param_groups[0]["initial_lr"] == 0.1
    h_sd, t_sd = hs.state_dict(), ts.state_dict()
    assert sorted(h_sd) == sorted(t_sd)
    for k in ("last_epoch", "base_lrs", "_step_count"):
        assert h_sd[k] == t_sd[k]


@torch_test
@pytest.mark.parametrize("name,kwargs", SCHEDULES, ids=[f"{n}{i}" for i, (n, _) in
                                                         enumerate(SCHEDULES)])
def test_state_dict_resume(name, kwargs):
    ho, to, hs, ts = _pair(name, kwargs)
    for _ in range(5):
        ho.step()
        hs.step()
    sd = hs.state_dict()
    ho2, _, hs2, _ = _pair(name, kwargs)
    ho2.load_state_dict(ho.state_dict())
    hs2.load_state_dict(sd)
    for _ in range(6):
        for o, s in ((ho, hs), (ho2, hs2)):
            o.step()
            s.step()
        assert hs2.get_last_lr() == hs.get_last_lr()
        assert hs2.last_epoch == hs.last_epoch


@torch_test
@pytest.mark.parametrize("name,kwargs", SCHEDULES[:7], ids=[f"{n}{i}" for i, (n, _) in
                                                             enumerate(SCHEDULES[:7])])
def test_resume_with_last_epoch_matches_torch(name, kwargs):
    ho, to, hs, ts = _pair(name, kwargs)
    for _ in range(4):
        for o, s in ((ho, hs), (to, ts)):
            o.step()
            s.step()
    hs2 = getattr(lr_scheduler, name)(ho, last_epoch=hs.last_epoch, **kwargs)
    ts2 = getattr(torch.optim.lr_scheduler, name)(to, last_epoch=ts.last_epoch, **kwargs)
    _assert_same(hs2, ts2, ho, to)
    for _ in range(5):
        for o, s in ((ho, hs2), (to, ts2)):
            o.step()
            s.step()
        _assert_same(hs2, ts2, ho, to)


@torch_test
@pytest.mark.parametrize("name,kwargs", SCHEDULES[:7], ids=[f"{n}{i}" for i, (n, _) in
                                                             enumerate(SCHEDULES[:7])])
def test_step_with_epoch_uses_closed_form(name, kwargs):
    ho, to, hs, ts = _pair(name, kwargs)
    for epoch in (3, 7, 4):
        ho.step()
        to.step()
        with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)`"):
            hs.step(epoch)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ts.step(epoch)
        _assert_same(hs, ts, ho, to)


def test_lambda_lr_state_dict_keeps_callable_objects():
    class Decay:
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, epoch):
            return self.rate ** epoch

    opt = optim.SGD([leaf(INIT[0])], lr=1.0)
    sched = lr_scheduler.LambdaLR(opt, [Decay(0.5)])
    sd = sched.state_dict()
    assert sd["lr_lambdas"] == [{"rate": 0.5}]
    plain = lr_scheduler.LambdaLR(optim.SGD([leaf(INIT[0])], lr=1.0), lambda e: 1.0)
    assert plain.state_dict()["lr_lambdas"] == [None]
    other = lr_scheduler.LambdaLR(optim.SGD([leaf(INIT[0])], lr=1.0), [Decay(0.9)])
    other.load_state_dict(sd)
    assert other.lr_lambdas[0].rate == 0.5 and "lr_lambdas" in sd
    opt.step()
    sched.step()
    assert sched.get_last_lr() == [0.5]


def test_warns_when_scheduler_steps_before_optimizer():
    opt = optim.SGD([leaf(INIT[0])], lr=1.0)
    sched = lr_scheduler.StepLR(opt, step_size=1)
    msg = re.escape("Detected call of `lr_scheduler.step()` before `optimizer.step()`")
    with pytest.warns(UserWarning, match=msg):
        sched.step()
    opt2 = optim.SGD([leaf(INIT[0])], lr=1.0)
    sched2 = lr_scheduler.StepLR(opt2, step_size=1)
    opt2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched2.step()
    with pytest.warns(UserWarning, match=re.escape("please use `get_last_lr()`")):
        sched2.get_lr()


def test_step_hooks_still_run_through_scheduler_wrapper():
    p = leaf(INIT[0])
    opt = optim.SGD([p], lr=1.0)
    calls = []
    opt.register_step_post_hook(lambda o, a, k: calls.append(len(a)))
    lr_scheduler.ExponentialLR(opt, gamma=0.5)
    p.grad = hookgrad.tensor(np.ones(3, np.float32))
    opt.step()
    assert calls == [1] and opt._opt_called
    np.testing.assert_allclose(np.asarray(p._data), INIT[0] - 1.0)


def test_errors():
    opt = optim.SGD([leaf(INIT[0])], lr=1.0)
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        lr_scheduler.StepLR([], step_size=1)
    with pytest.raises(ValueError, match="Starting multiplicative factor expected to be "
                                         "greater than 0 and less or equal to 1."):
        lr_scheduler.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match="Ending multiplicative factor expected to be "
                                         "between 0 and 1."):
        lr_scheduler.LinearLR(opt, end_factor=1.5)
    with pytest.raises(ValueError, match="Expected 1 lr_lambdas, but got 2"):
        lr_scheduler.LambdaLR(opt, [_halve, _slow])
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in "
                                       "param_groups\\[0\\]"):
        lr_scheduler.StepLR(opt, step_size=2, last_epoch=3)


@torch_test
def test_schedule_drives_training_like_torch():
    pair = Pair("Adam", {"lr": 0.1})
    hs = lr_scheduler.StepLR(pair.ho, step_size=2, gamma=0.3)
    ts = torch.optim.lr_scheduler.StepLR(pair.to, step_size=2, gamma=0.3)
    for _ in range(6):
        pair.step()
        hs.step()
        ts.step()
        pair.assert_close()
    assert pair.ho.param_groups[0]["lr"] == pytest.approx(0.1 * 0.3 ** 3)


def test_tensor_lr_is_updated_in_place():
    lr = hookgrad.tensor(0.5)
    opt = optim.SGD([leaf(INIT[0])], lr=lr)
    sched = lr_scheduler.ExponentialLR(opt, gamma=0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr and lr.item() == 0.25
    assert sched.get_last_lr()[0].item() == 0.25 and sched.get_last_lr()[0] is not lr


# ------------------------------------------------------------------ the other schedulers

MORE = [
    ("MultiplicativeLR", {"lr_lambda": _slow}),
    ("ConstantLR", {}),
    ("ConstantLR", {"factor": 0.5, "total_iters": 7}),
    ("PolynomialLR", {"total_iters": 20, "power": 2.0}),
    ("CosineAnnealingWarmRestarts", {"T_0": 3, "T_mult": 2, "eta_min": 0.001}),
    ("CosineAnnealingWarmRestarts", {"T_0": 4}),
    ("OneCycleLR", {"max_lr": 0.5, "total_steps": 31}),
    ("OneCycleLR", {"max_lr": [0.5, 0.2], "epochs": 4, "steps_per_epoch": 8,
                    "anneal_strategy": "linear", "pct_start": 0.25}),
    ("OneCycleLR", {"max_lr": 0.5, "total_steps": 31, "three_phase": True,
                    "base_momentum": 0.8, "div_factor": 10.0}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 4}),
    ("CyclicLR", {"base_lr": [0.01, 0.02], "max_lr": 0.1, "step_size_up": 3,
                  "step_size_down": 5, "mode": "triangular2", "base_momentum": 0.7}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 2, "mode": "exp_range",
                  "gamma": 0.9, "cycle_momentum": False}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 3, "scale_fn": _slow,
                  "scale_mode": "iterations"}),
]


def _group_lrs_and_momenta(opt):
    """Each group's lr, momentum and betas, flat (pytest.approx compares flat sequences)."""
    flat = []
    for g in opt.param_groups:
        flat += [g["lr"], g.get("momentum", -1.0), *(g.get("betas") or (-1.0, -1.0))]
    return flat


@torch_test
@pytest.mark.parametrize("name,kwargs", MORE, ids=[f"{n}{i}" for i, (n, _) in enumerate(MORE)])
def test_more_lr_sequences_match_torch(name, kwargs):
    ho, to, hs, ts = _pair(name, kwargs)
    _assert_same(hs, ts, ho, to)
    seen = set()
    for _ in range(30):
        for o, s in ((ho, hs), (to, ts)):
            o.step()
            s.step()
        _assert_same(hs, ts, ho, to)
        assert _group_lrs_and_momenta(ho) == pytest.approx(_group_lrs_and_momenta(to),
                                                          rel=1e-13)
        seen.add(round(hs.get_last_lr()[0], 12))
    assert len(seen) > 1
    assert sorted(hs.state_dict()) == sorted(ts.state_dict())


@torch_test
def test_one_cycle_cycles_adam_beta1_like_torch():
    pair = Pair("Adam", {"lr": 0.1, "betas": (0.9, 0.99)})
    hs = lr_scheduler.OneCycleLR(pair.ho, max_lr=0.3, total_steps=10)
    ts = torch.optim.lr_scheduler.OneCycleLR(pair.to, max_lr=0.3, total_steps=10)
    betas = []
    for _ in range(9):
        pair.step()
        hs.step()
        ts.step()
        pair.assert_close()
        assert pair.ho.param_groups[0]["betas"] == pytest.approx(
            pair.to.param_groups[0]["betas"], rel=1e-13)
        betas.append(pair.ho.param_groups[0]["betas"][0])
    assert min(betas) < 0.9 < max(betas)  # beta1 went down and back up
    with pytest.raises(ValueError, match="Tried to step 11 times. The specified number of "
                                         "total steps is 10"):
        hs.step()
        hs.step()


@torch_test
def test_warm_restarts_fractional_epochs_match_torch():
    for kwargs in ({"T_0": 3, "T_mult": 2}, {"T_0": 2, "eta_min": 0.01}):
        ho, to, hs, ts = _pair("CosineAnnealingWarmRestarts", kwargs)
        for epoch in (0.5, 1.25, 2.9, 3.0, 4.5, 9.1, 10.0, 21.7, 0.1):
            hs.step(epoch)
            ts.step(epoch)
            _assert_same(hs, ts, ho, to)
            assert hs.T_cur == pytest.approx(ts.T_cur, rel=1e-13) and hs.T_i == ts.T_i
        with pytest.raises(ValueError, match="Expected non-negative epoch, but got -1"):
            hs.step(-1)


PLATEAU = [
    {"patience": 3},
    {"mode": "max", "factor": 0.5, "patience": 1, "threshold": 0.1, "cooldown": 2},
    {"patience": 0, "threshold_mode": "abs", "threshold": 0.5, "min_lr": [0.05, 0.001]},
    {"factor": 0.2, "patience": 2, "min_lr": 0.01, "eps": 0.05},
]


@torch_test
@pytest.mark.parametrize("kwargs", PLATEAU, ids=[str(i) for i in range(len(PLATEAU))])
def test_reduce_on_plateau_matches_torch(kwargs):
    ho, to, hs, ts = _pair("ReduceLROnPlateau", kwargs)
    metrics = [5.0, 4.0, 4.2, 4.1, 3.99, 4.5, 4.4, 4.3, 1.0, 1.2, 1.1, 1.05, 1.3, 0.9, 0.95,
               0.96, 0.97, 2.0, 2.1, 2.2, 0.5, 0.6, 0.7, 0.8, 0.9, 0.91, 0.92, 0.93, 0.94,
               0.3]
    lrs = set()
    for m in metrics:
        hs.step(hookgrad.tensor(m) if m == 1.0 else m)
        ts.step(m)
        _assert_same(hs, ts, ho, to)
        assert (hs.best, hs.num_bad_epochs, hs.cooldown_counter) == (
            ts.best, ts.num_bad_epochs, ts.cooldown_counter)
        lrs.add(hs.get_last_lr()[0])
    assert len(lrs) > 1
    h_sd, t_sd = hs.state_dict(), ts.state_dict()
    assert sorted(h_sd) == sorted(t_sd)
    assert {k: h_sd[k] for k in t_sd} == t_sd
    ho2, _, hs2, _ = _pair("ReduceLROnPlateau", {})
    hs2.load_state_dict(h_sd)
    assert (hs2.mode, hs2.patience, hs2.best) == (hs.mode, hs.patience, hs.best)


def _composite(lib, opt, kind):
    s = lib.optim.lr_scheduler
    if kind == "sequential":
        parts = [s.LinearLR(opt, start_factor=0.1, total_iters=5),
                 s.ExponentialLR(opt, gamma=0.9), s.CosineAnnealingLR(opt, T_max=6)]
        return s.SequentialLR(opt, schedulers=parts, milestones=[5, 15])
    return s.ChainedScheduler([s.ConstantLR(opt, factor=0.5, total_iters=4),
                               s.ExponentialLR(opt, gamma=0.9)])


@torch_test
@pytest.mark.parametrize("kind", ["sequential", "chained"])
def test_sequential_and_chained_match_torch(kind):
    ho, to, _, _ = _pair("StepLR", {"step_size": 1000})
    hs, ts = _composite(hookgrad, ho, kind), _composite(torch, to, kind)
    np.testing.assert_allclose(hs.get_last_lr(), ts.get_last_lr(), rtol=1e-13)
    for _ in range(30):
        for o, s in ((ho, hs), (to, ts)):
            o.step()
            s.step()
        np.testing.assert_allclose(hs.get_last_lr(), ts.get_last_lr(), rtol=1e-13)
        np.testing.assert_allclose([g["lr"] for g in ho.param_groups],
                                   [g["lr"] for g in to.param_groups], rtol=1e-13)
    sd = hs.state_dict()
    assert sorted(sd) == sorted(ts.state_dict())
    assert len(sd["_schedulers"]) == len(hs._schedulers)


def test_more_errors():
    opt = optim.SGD([leaf(INIT[0])], lr=1.0)
    other = optim.SGD([leaf(INIT[0])], lr=1.0)
    s = lr_scheduler
    with pytest.raises(ValueError, match="Constant multiplicative factor expected to be "
                                         "between 0 and 1."):
        s.ConstantLR(opt, factor=2.0)
    with pytest.raises(TypeError, match="lr_lambda should be a function, but got float"):
        s.MultiplicativeLR(opt, 0.5)
    with pytest.raises(ValueError, match="Expected positive integer T_0, but got 0"):
        s.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="Expected integer T_mult >= 1, but got 1.5"):
        s.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=1.5)
    with pytest.raises(ValueError, match="Expected float or int eta_min, but got None"):
        s.CosineAnnealingWarmRestarts(opt, T_0=2, eta_min=None)
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        s.OneCycleLR(opt, max_lr=0.1)
    with pytest.raises(ValueError, match="Expected positive integer total_steps, but got 0"):
        s.OneCycleLR(opt, max_lr=0.1, total_steps=0)
    with pytest.raises(ValueError, match="Expected positive integer epochs, but got -1"):
        s.OneCycleLR(opt, max_lr=0.1, epochs=-1, steps_per_epoch=2)
    with pytest.raises(ValueError, match="Expected float between 0 and 1 pct_start, but "
                                         "got 1.5"):
        s.OneCycleLR(opt, max_lr=0.1, total_steps=5, pct_start=1.5)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', "
                                         "instead got exp"):
        s.OneCycleLR(opt, max_lr=0.1, total_steps=5, anneal_strategy="exp")
    with pytest.raises(ValueError, match="max_lr must have the same length as "
                                         "optimizer.param_groups. max_lr has 2 values"):
        s.OneCycleLR(opt, max_lr=[0.1, 0.2], total_steps=5)
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        s.OneCycleLR(optim.Adagrad([leaf(INIT[0])]), max_lr=0.1, total_steps=5)
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        s.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode maximum is unknown!"):
        s.ReduceLROnPlateau(opt, mode="maximum")
    with pytest.raises(ValueError, match="threshold mode relative is unknown!"):
        s.ReduceLROnPlateau(opt, threshold_mode="relative")
    with pytest.raises(ValueError, match="expected 1 min_lrs, got 2"):
        s.ReduceLROnPlateau(opt, min_lr=[0.1, 0.2])
    plateau = s.ReduceLROnPlateau(opt)
    with pytest.raises(ValueError, match="SequentialLR does not support `ReduceLROnPlateau`"):
        s.SequentialLR(opt, [plateau], [])
    with pytest.raises(ValueError, match="ChainedScheduler expects at least one scheduler"):
        s.ChainedScheduler([])
    with pytest.raises(ValueError, match="SequentialLR expects all schedulers to belong to "
                                         "the same optimizer"):
        s.SequentialLR(opt, [s.StepLR(other, 2)], [])
    with pytest.raises(ValueError, match="Sequential Schedulers expects number of schedulers "
                                         "provided to be one more than the number of "
                                         "milestone points"):
        s.SequentialLR(opt, [s.StepLR(opt, 2)], [3])
    with pytest.raises(TypeError, match="ChainedScheduler at index 0 should have "
                                        "`optimizer` as its attribute."):
        s.ChainedScheduler([object()], optimizer=opt)


@torch_test
def test_cyclic_lr_errors_match_torch():
    for lib, o in ((lr_scheduler, optim.SGD([leaf(INIT[0])], lr=0.1)),
                   (torch.optim.lr_scheduler,
                    torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1))):
        with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
            lib.CyclicLR(o, 0.01, 0.1, mode="sine")
        with pytest.raises(ValueError, match="max_lr must have the same length"):
            lib.CyclicLR(o, 0.01, [0.1, 0.2], cycle_momentum=False)
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        lr_scheduler.CyclicLR(optim.Adagrad([leaf(INIT[0])]), 0.01, 0.1)


_REEXPORTS = ["Any", "Counter", "Literal", "Self", "SupportsFloat", "TYPE_CHECKING",
              "TypedDict", "annotations", "bisect_right", "cast", "inf", "override",
              "partial", "ref", "wraps"]


def test_module_level_helpers_are_torchs():
    """``from torch.optim.lr_scheduler import Optimizer, inf, ...`` works: the module
    re-exports the helpers PyTorch's binds, the same objects."""
    assert lr_scheduler.Optimizer is optim.Optimizer
    assert lr_scheduler.Tensor is hookgrad.Tensor
    assert lr_scheduler.inf == float("inf")
    assert lr_scheduler.bisect_right([1, 2, 2, 3], 2) == 3
    if torch is not None:
        import torch.optim.lr_scheduler as torch_sched
        for name in _REEXPORTS:
            assert getattr(lr_scheduler, name) is getattr(torch_sched, name), name
