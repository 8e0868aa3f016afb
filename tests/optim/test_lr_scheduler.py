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
