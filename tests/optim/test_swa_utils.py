"""hookgrad.optim.swa_utils against torch.optim.swa_utils: averaged weights and buffers
after several updates, the SWALR lr sequence, update_bn's statistics, errors."""
import warnings

import pytest

import hookgrad
from tests.differential import py, raises, same_as_torch


def _model(L):
    model = L.nn.Sequential(L.nn.Linear(3, 2), L.nn.BatchNorm1d(2))
    with L.no_grad():  # known weights: the libraries' initial draws differ
        model[0].weight.copy_(L.tensor([[0.5, -1.0, 0.25], [2.0, 0.0, -0.5]]))
        model[0].bias.copy_(L.tensor([0.1, -0.2]))
    return model


def _train_steps(L, averaged, model, steps=4):
    """Give ``model`` known weights and batch statistics each step, then average them."""
    for k in range(steps):
        with L.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(L.arange(float(p.numel())).reshape(p.shape) * (k + 1) - i)
        model(L.arange(12.0).reshape(4, 3) * (k - 1.5))
        averaged.update_parameters(model)
    return averaged


AVERAGINGS = {
    "swa": lambda S: {},
    "swa_avg_fn": lambda S: {"avg_fn": S.get_swa_avg_fn()},
    "ema_avg_fn": lambda S: {"avg_fn": S.get_ema_avg_fn(0.8)},
    "swa_multi": lambda S: {"multi_avg_fn": S.get_swa_multi_avg_fn()},
    "ema_multi": lambda S: {"multi_avg_fn": S.get_ema_multi_avg_fn(0.75)},
}


@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("kind", sorted(AVERAGINGS))
def test_averaged_model_after_updates_matches_torch(kind, use_buffers):
    def run(L):
        model = _model(L)
        S = L.optim.swa_utils
        try:  # averaging num_batches_tracked in place with the running mean raises
            averaged = _train_steps(L, S.AveragedModel(model, use_buffers=use_buffers,
                                                       **AVERAGINGS[kind](S)), model)
        except RuntimeError as e:
            return {"raises": type(e).__name__, "message": str(e)}
        out = averaged(L.arange(6.0).reshape(2, 3) ** 2) if use_buffers else None
        return {"state": {k: py(v) for k, v in averaged.state_dict().items()},
                "out": py(out), "keys": list(averaged.state_dict())}

    got = same_as_torch(run)
    if kind == "swa_multi" and use_buffers:
        assert got["message"].startswith("Integer division with addcdiv is no longer")
        return
    assert got["state"]["n_averaged"] == 4
    if kind == "swa":  # the mean of the four weights (k + 1) * arange - i
        assert got["state"]["module.0.bias"] == [-1.0, 1.5]


def test_avg_fns_on_integer_and_float_tensors_match_torch():
    """Floats lerp in place; integer tensors take PyTorch's integer paths, errors
    included (the running mean cannot divide integers in place)."""
    def run(L):
        S = L.optim.swa_utils
        out = []
        for fn in (S.get_swa_multi_avg_fn(), S.get_ema_multi_avg_fn(0.5)):
            for count in (3, L.tensor(3)):
                floats, ints = [L.tensor([1.0, 2.0])], [L.tensor([8, 2])]
                fn(floats, [L.tensor([5.0, 0.0])], count)
                out += [py(floats), raises(fn, ints, [L.tensor([0, 7])], count), py(ints)]
        out.append(py(S.get_swa_avg_fn()(L.tensor([1.0]), L.tensor([5.0]), 3)))
        out.append(py(S.get_ema_avg_fn(0.5)(L.tensor([1.0]), L.tensor([5.0]), 3)))
        return out

    got = same_as_torch(run)
    assert got[:3] == [[[2.0, 1.5]], {"raises": "RuntimeError", "message":
                       "result type Float can't be cast to the desired output type Long"},
                       [[8, 2]]]
    assert got[-5:-2] == [[[3.0, 1.0]], {"returned": True}, [[4, 4]]]  # EMA: (8 + 0) / 2


def test_update_bn_recomputes_running_stats_and_restores_the_model():
    def run(L):
        model = _model(L)
        bn = model[1]
        bn.momentum = 0.3
        model.eval()
        batches = [(L.arange(12.0).reshape(4, 3) * k, L.zeros(4)) for k in range(1, 4)]
        L.optim.swa_utils.update_bn(batches, model)
        stats = [py(bn.running_mean), py(bn.running_var), py(bn.num_batches_tracked)]
        return stats + [bn.momentum, model.training,
                        L.optim.swa_utils.update_bn([L.ones(2, 3)], L.nn.Linear(3, 1))]

    got = same_as_torch(run)
    assert got[-3:] == [0.3, False, None]


SWALR_CASES = [({"swa_lr": 0.05}, 14), ({"swa_lr": 0.05, "anneal_epochs": 3,
                                         "anneal_strategy": "linear"}, 6),
               ({"swa_lr": [0.02, 0.4], "anneal_epochs": 0}, 3),
               ({"swa_lr": 0.01, "anneal_epochs": 4, "anneal_strategy": "cos"}, 7)]


@pytest.mark.parametrize("kwargs,epochs", SWALR_CASES)
def test_swalr_lr_sequence_matches_torch(kwargs, epochs):
    def run(L):
        w = L.zeros(2, requires_grad=True)
        opt = L.optim.SGD([{"params": [w]}, {"params": [L.zeros(1, requires_grad=True)],
                                            "lr": 0.3}], lr=0.5)
        sched = L.optim.swa_utils.SWALR(opt, **kwargs)
        lrs = [sched.get_last_lr()]
        for _ in range(epochs):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
        state = sched.state_dict()
        return {"lrs": lrs, "state": sorted(k for k in state if k != "_last_lr"),
                "swa_lr": [g["swa_lr"] for g in opt.param_groups]}

    got = same_as_torch(run)
    assert got["lrs"][-1] == got["swa_lr"]


def test_swalr_state_dict_round_trip_keeps_the_ramp():
    def lrs(strategy, resume):
        w = hookgrad.zeros(1, requires_grad=True)
        opt = hookgrad.optim.SGD([w], lr=1.0)
        sched = hookgrad.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=4,
                                               anneal_strategy=strategy)
        if resume is not None:
            sched.load_state_dict(resume)
        return sched

    saved = lrs("linear", None)
    saved.optimizer.step()
    saved.step()
    resumed = lrs("cos", saved.state_dict())
    assert resumed.anneal_func is resumed._linear_anneal
    assert "anneal_func" not in saved.state_dict() and "optimizer" not in saved.state_dict()


def test_swalr_get_lr_outside_step_warns():
    opt = hookgrad.optim.SGD([hookgrad.zeros(1, requires_grad=True)], lr=1.0)
    sched = hookgrad.optim.swa_utils.SWALR(opt, swa_lr=0.1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sched.get_lr()
    assert [str(w.message) for w in caught] == [
        "To get the last learning rate computed by the scheduler, please use "
        "`get_last_lr()`."]
    assert caught[0].filename == __file__


def test_errors_match_torch():
    def run(L):
        S = L.optim.swa_utils
        opt = L.optim.SGD([L.zeros(1, requires_grad=True)], lr=1.0)
        return [raises(S.get_ema_multi_avg_fn, 1.5), raises(S.get_ema_avg_fn, -0.1),
                raises(S.AveragedModel, L.nn.Linear(1, 1), None, S.get_swa_avg_fn(),
                       S.get_swa_multi_avg_fn()),
                raises(S.SWALR, opt, 0.1, 10, "exp"), raises(S.SWALR, opt, 0.1, -1),
                raises(S.SWALR, opt, 0.1, 2.5), raises(S.SWALR, opt, [0.1, 0.2])]

    got = same_as_torch(run)
    assert [g["message"] for g in got] == [
        "Invalid decay value 1.5 provided. Please provide a value in [0,1] range.",
        "Invalid decay value -0.1 provided. Please provide a value in [0,1] range.",
        "Only one of avg_fn and multi_avg_fn should be provided",
        "anneal_strategy must be one of 'cos' or 'linear', instead got exp",
        "anneal_epochs must be equal or greater than 0, got -1",
        "anneal_epochs must be equal or greater than 0, got 2.5",
        "swa_lr must have the same length as optimizer.param_groups. swa_lr has 2 values, "
        "param_groups has 1."]
