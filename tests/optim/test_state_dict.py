"""Optimizer state: the ``state`` view, ``state_dict`` / ``load_state_dict`` (also to and
from PyTorch), copying and pickling."""
import copy
import pickle

import numpy as np
import pytest

import hookgrad
from hookgrad import optim
from tests.optim._common import INIT, Pair, arr, leaf, quad_grad, torch, torch_test


@torch_test
@pytest.mark.parametrize("name,kwargs", [("SGD", {"lr": 0.05, "momentum": 0.9,
                                                   "dampening": 0.2}),
                                          ("Adam", {"lr": 0.05, "amsgrad": True}),
                                          ("RMSprop", {"centered": True, "momentum": 0.3}),
                                          ("Adagrad", {"lr_decay": 0.1})])
def test_state_dict_crosses_to_and_from_torch(name, kwargs):
    pair = Pair(name, kwargs)
    pair.step(3)
    pair.assert_state_close(tol=1e-4)
    # torch's state into a fresh hookgrad optimizer, and hookgrad's into a fresh torch one
    h2 = [leaf(arr(t)) for t in pair.t]
    ho2 = getattr(optim, name)(h2, lr=1.0)
    ho2.load_state_dict(pair.to.state_dict())
    t2 = [torch.nn.Parameter(torch.tensor(arr(h))) for h in pair.h]
    to2 = getattr(torch.optim, name)(t2, lr=1.0)
    sd = pair.ho.state_dict()
    sd["state"] = {k: {n: torch.tensor(arr(v)) for n, v in s.items()}
                   for k, s in sd["state"].items()}
    to2.load_state_dict(sd)
    pair.ho, pair.to, pair.h, pair.t = ho2, to2, h2, t2
    assert pair.ho.param_groups[0]["lr"] == pair.to.param_groups[0]["lr"] != 1.0
    pair.step(3)
    pair.assert_close()
    pair.assert_state_close(tol=1e-4)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_state_dict_round_trip(name):
    kwargs = {"momentum": 0.9} if name in ("SGD", "RMSprop") else {}
    ps = [leaf(a) for a in INIT]
    opt = getattr(optim, name)(ps, lr=0.05, **kwargs)

    def steps(params, o, n):
        for _ in range(n):
            for k, p in enumerate(params):
                p.grad = hookgrad.tensor(quad_grad(k, arr(p)))
            o.step()

    steps(ps, opt, 3)
    sd = opt.state_dict()
    assert sorted(sd) == ["param_groups", "state"]
    assert sd["param_groups"][0]["params"] == [0, 1]
    qs = [leaf(arr(p)) for p in ps]
    opt2 = getattr(optim, name)(qs, lr=1.0)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["params"][0] is qs[0]
    assert opt2.param_groups[0]["lr"] == 0.05
    steps(ps, opt, 3)
    steps(qs, opt2, 3)
    for p, q in zip(ps, qs):
        np.testing.assert_array_equal(arr(p), arr(q))
    # the saved dict was a snapshot
    assert sd["state"].keys() == opt.state_dict()["state"].keys()


def test_state_view_and_assignment():
    ps = [leaf(a) for a in INIT]
    opt = optim.Adam(ps, lr=0.1)
    assert len(opt.state) == 0 and opt.state[ps[0]] == {} and ps[0] not in opt.state
    ps[0].grad = hookgrad.tensor(np.ones(3, np.float32))
    opt.step()
    assert ps[0] in opt.state and ps[1] not in opt.state and len(opt.state) == 1
    st = opt.state[ps[0]]
    assert list(st) == ["step", "exp_avg", "exp_avg_sq"] and st["step"].item() == 1.0
    np.testing.assert_allclose(arr(st["exp_avg"]), np.full(3, 0.1), rtol=1e-6)
    st["step"] = hookgrad.tensor(100.0)  # a copy: the optimizer is unchanged
    assert opt.state[ps[0]]["step"].item() == 1.0
    opt.state[ps[0]] = dict(st)  # assignment writes through
    assert opt.state[ps[0]]["step"].item() == 100.0
    with pytest.raises(ValueError, match="has shape"):
        opt.state[ps[0]] = {"step": 1.0, "exp_avg": hookgrad.zeros(2),
                            "exp_avg_sq": st["exp_avg_sq"]}
    assert opt.state[ps[0]]["step"].item() == 100.0  # unchanged by the failed write
    del opt.state[ps[0]]
    assert len(opt.state) == 0


@torch_test
def test_adagrad_state_exists_from_construction():
    pair = Pair("Adagrad", {"initial_accumulator_value": 0.3})
    pair.assert_state_close()
    assert len(pair.ho.state) == 2


def test_load_state_dict_errors_leave_optimizer_unchanged():
    ps = [leaf(a) for a in INIT]
    opt = optim.SGD(ps, lr=0.1, momentum=0.9)
    for k, p in enumerate(ps):
        p.grad = hookgrad.tensor(quad_grad(k, arr(p)))
    opt.step()
    sd = opt.state_dict()
    other = optim.SGD([{"params": [ps[0]]}, {"params": [ps[1]]}], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        other.load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        optim.SGD(ps[:1], lr=0.1).load_state_dict(sd)
    bad = copy.deepcopy(sd)
    bad["param_groups"][0]["lr"] = 7.0
    bad["state"][1]["momentum_buffer"] = hookgrad.zeros(5)
    before = opt.state_dict()
    with pytest.raises(ValueError, match="has shape"):
        opt.load_state_dict(bad)
    assert opt.param_groups[0]["lr"] == 0.1
    np.testing.assert_array_equal(arr(opt.state[ps[1]]["momentum_buffer"]),
                                  arr(before["state"][1]["momentum_buffer"]))


@torch_test
def test_repr_and_param_group_keys_match_torch():
    for name, kwargs in [("SGD", {"momentum": 0.9}), ("Adam", {}), ("AdamW", {}),
                         ("RMSprop", {}), ("Adagrad", {})]:
        pair = Pair(name, kwargs)
        assert repr(pair.ho) == repr(pair.to)
        assert pair.ho.defaults == pair.to.defaults


def test_deepcopy_and_pickle():
    ps = [leaf(a) for a in INIT]
    opt = optim.Adam(ps, lr=0.1)
    for k, p in enumerate(ps):
        p.grad = hookgrad.tensor(quad_grad(k, arr(p)))
    opt.step()
    for clone in (copy.deepcopy(opt), pickle.loads(pickle.dumps(opt))):
        q = clone.param_groups[0]["params"][0]
        assert q is not ps[0]
        np.testing.assert_array_equal(arr(clone.state[q]["exp_avg"]),
                                      arr(opt.state[ps[0]]["exp_avg"]))
        q.grad = hookgrad.tensor(np.ones(3, np.float32))
        clone.step()
        assert clone.state[q]["step"].item() == 2.0
        assert opt.state[ps[0]]["step"].item() == 1.0


def test_named_parameters():
    ps = [leaf(a) for a in INIT]
    opt = optim.SGD([("w", ps[0]), ("b", ps[1])], lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["w", "b"]
    assert opt.param_groups[0]["params"][1] is ps[1]
    with pytest.raises(ValueError, match="Some param names are missing"):
        optim.SGD([("w", ps[0]), ps[1]], lr=0.1)
    with pytest.raises(ValueError, match="cannot add param group without names"):
        opt.add_param_group({"params": [leaf(INIT[0])]})
