"""Adadelta and Rprop against torch.optim: the same gradients give the same parameters and
state step by step; argument errors; state names."""
import pytest

import hookgrad
from hookgrad import optim
from tests.optim._common import (INIT, arr, assert_matches_torch_step_by_step,
                                 assert_state_dict_round_trips, leaf, quad_grad, sweep_ids, torch,
                                 torch_test)

SWEEP = [
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-4}),
    ("Adadelta", {"lr": 0.5, "weight_decay": 0.1}),
    ("Adadelta", {"lr": 0.5, "maximize": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.1, "etas": (0.3, 1.5), "step_sizes": (0.05, 0.2)}),
    ("Rprop", {"lr": 0.05, "maximize": True}),
]


@torch_test
@pytest.mark.parametrize("name,kwargs", SWEEP, ids=sweep_ids(SWEEP))
def test_matches_torch_step_by_step(name, kwargs):
    assert_matches_torch_step_by_step(name, kwargs, steps=8)


@torch_test
@pytest.mark.parametrize("name", ["Adadelta", "Rprop"])
def test_state_dict_round_trips_to_and_from_torch(name):
    assert_state_dict_round_trips(name, {"lr": 0.5})


@torch_test
@pytest.mark.parametrize("name,kwargs,match", [
    ("Adadelta", {"rho": 1.5}, "Invalid rho value: 1.5"),
    ("Adadelta", {"lr": -1}, "Invalid learning rate: -1"),
    ("Adadelta", {"eps": -1}, "Invalid epsilon value: -1"),
    ("Rprop", {"etas": (1.5, 1.2)}, "Invalid eta values: 1.5, 1.2"),
])
def test_argument_errors_match_torch(name, kwargs, match):
    for lib in (hookgrad, torch):
        with pytest.raises(ValueError, match=match):
            getattr(lib.optim, name)([leaf(INIT[0]) if lib is hookgrad else
                                      torch.nn.Parameter(torch.zeros(1))], **kwargs)


def test_state_has_pytorch_names():
    ps = [leaf(a) for a in INIT]
    for cls, names in ((optim.Adadelta, ["step", "square_avg", "acc_delta"]),
                       (optim.Rprop, ["step", "prev", "step_size"])):
        opt = cls(ps)
        for k, p in enumerate(ps):
            p.grad = hookgrad.tensor(quad_grad(k, arr(p)))
        opt.step()
        assert list(opt.state[ps[1]]) == names
