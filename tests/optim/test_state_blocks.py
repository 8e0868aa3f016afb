"""The optimizer state in blocks (``hookgrad.optim._blocks``): one optax count for the
parameters of a group that step together, PyTorch's per-parameter ``step`` read from it,
and a parameter skipped once keeping its own step, eagerly and compiled."""
import jax
import numpy as np
import pytest

import hookgrad
from hookgrad import optim
from tests.optim._common import Pair, arr, leaf, torch, torch_test

INIT3 = [np.linspace(-1, 1, 3, dtype=np.float32), np.eye(2, dtype=np.float32) * 0.5,
         np.array([0.3, -0.7, 1.1], np.float32)]


class Pair3(Pair):
    """``Pair`` over three parameters, with the gradient ``(k + 1) * x + 0.1``."""

    def __init__(self, name, kwargs):
        super().__init__(name, kwargs, init=INIT3)

    def set_grads(self, skip=()):
        for k, (h, t) in enumerate(zip(self.h, self.t)):
            g = None if k in skip else (k + 1) * arr(h) + np.float32(0.1)
            h.grad = None if g is None else hookgrad.tensor(g)
            t.grad = None if g is None else torch.tensor((k + 1) * arr(t) + np.float32(0.1))


def blocks(opt):
    """The parameters' positions of each block of each group."""
    return [[b.index for b in g] for g in opt._state_arrays()["state"]]


def scalar_leaves(opt):
    """How many 0-d arrays the state holds (the counts, scalar state)."""
    return sum(np.ndim(x) == 0 for x in jax.tree_util.tree_leaves(opt._state_arrays()["state"]))


def steps_of(opt):
    return [float(arr(s["step"])) for _, s in sorted(opt.state_dict()["state"].items())]


def compiled_step_of(ps, opt, used):
    """A compiled step whose loss uses the parameters at positions ``used``."""
    @hookgrad.compile
    def step():
        loss = sum((ps[k] * ps[k]).sum() * (k + 1) for k in used)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return step


def test_one_count_for_parameters_stepping_together():
    ps = [leaf(a) for a in INIT3]
    opt = optim.AdamW(ps, lr=0.1)
    step = compiled_step_of(ps, opt, (0, 1, 2))
    for _ in range(3):
        step()
    assert blocks(opt) == [[(0, 1, 2)]]
    one = [leaf(INIT3[0])]
    opt1 = optim.AdamW(one, lr=0.1)
    compiled_step_of(one, opt1, (0,))()
    # the counts do not grow with the number of parameters
    assert scalar_leaves(opt) == scalar_leaves(opt1) > 0
    assert steps_of(opt) == [3.0, 3.0, 3.0]
    assert [float(arr(opt.state[p]["step"])) for p in ps] == [3.0, 3.0, 3.0]


@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_skipped_parameter_keeps_its_own_step(mode):
    ps = [leaf(a) for a in INIT3]
    opt = optim.Adam(ps, lr=0.1)
    if mode == "compiled":
        run = {used: compiled_step_of(ps, opt, used) for used in ((0, 1, 2), (0, 2))}
    else:
        def run_eager(used):
            opt.zero_grad()
            sum((ps[k] * ps[k]).sum() * (k + 1) for k in used).backward()
            opt.step()
        run = {used: (lambda used=used: run_eager(used)) for used in ((0, 1, 2), (0, 2))}
    run[(0, 1, 2)]()
    run[(0, 2)]()           # parameter 1 has no .grad: skipped, its step stays
    assert steps_of(opt) == [2.0, 1.0, 2.0]
    assert blocks(opt) == [[(0, 2), (1,)]]
    run[(0, 1, 2)]()
    assert steps_of(opt) == [3.0, 2.0, 3.0]
    # the values match an optimizer keeping one state per parameter (loaded singly)
    ref = [leaf(a) for a in INIT3]
    ref_opt = optim.Adam(ref, lr=0.1)
    for used in ((0, 1, 2), (0, 2), (0, 1, 2)):
        for k in used:
            ref_opt.zero_grad()
            (ref[k] * ref[k]).sum().mul(k + 1).backward()
            ref_opt.step()
    for p, q in zip(ps, ref):
        np.testing.assert_allclose(arr(p), arr(q), rtol=1e-6, atol=1e-6)


def test_state_dict_merges_equal_steps_and_round_trips():
    ps = [leaf(a) for a in INIT3]
    opt = optim.AdamW(ps, lr=0.1)
    step = compiled_step_of(ps, opt, (0, 1, 2))
    skip = compiled_step_of(ps, opt, (0, 2))
    step()
    skip()
    sd = opt.state_dict()
    qs = [leaf(arr(p)) for p in ps]
    opt2 = optim.AdamW(qs, lr=1.0)
    opt2.load_state_dict(sd)
    # parameters whose saved steps are equal share a block again
    assert blocks(opt2) == [[(0, 2), (1,)]]
    sd2 = opt2.state_dict()
    for k, s in sd["state"].items():
        assert list(sd2["state"][k]) == list(s)
        for name, v in s.items():
            np.testing.assert_array_equal(arr(sd2["state"][k][name]), arr(v))
    # a parameter's state assigned or deleted alone leaves the others' as they were
    opt2.state[qs[0]] = {"step": hookgrad.tensor(7.0), "exp_avg": hookgrad.zeros(3),
                         "exp_avg_sq": hookgrad.zeros(3)}
    del opt2.state[qs[1]]
    assert steps_of(opt2) == [7.0, 2.0]
    assert sorted(map(sorted, blocks(opt2)[0])) == [[0], [2]]


@torch_test
@pytest.mark.parametrize("name,kwargs", [("AdamW", {"lr": 0.05}),
                                          ("NAdam", {"lr": 0.05}),
                                          ("Adagrad", {"lr": 0.1})])
def test_per_parameter_steps_as_torch(name, kwargs):
    pair = Pair3(name, kwargs)
    pair.step(2)
    pair.step(1, skip=(1,))
    pair.step(2)
    pair.assert_close()
    pair.assert_state_close(tol=1e-5)
    # torch's per-parameter state loads into blocks and steps on alike
    h2 = [leaf(arr(t)) for t in pair.t]
    ho2 = getattr(optim, name)(h2, **kwargs)
    ho2.load_state_dict(pair.to.state_dict())
    assert sorted(map(sorted, blocks(ho2)[0])) == [[0, 2], [1]]
    pair.ho, pair.h = ho2, h2
    pair.step(2, skip=(0,))
    pair.assert_close()
    pair.assert_state_close(tol=1e-5)
