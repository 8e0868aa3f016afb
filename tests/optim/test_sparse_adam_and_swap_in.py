"""SparseAdam on an embedding against PyTorch's (its sparse gradients: the looked-up rows),
and swap_in_optimizer_params_and_state against PyTorch's."""
import copy

import numpy as np
import pytest

import hookgrad
from hookgrad import optim
from tests.optim._common import INIT, Pair, arr, leaf, to_torch_state_dict, torch, torch_test

_W = np.random.RandomState(0).randn(7, 3).astype(np.float32)
# repeated rows, the padding row, rows left out, a row looked up alone
_LOOKUPS = ([1, 2, 2, 0], [3, 0], [1, 5], [4, 4, 6], [2])


def _embedding(L, **kwargs):
    emb = L.nn.Embedding(7, 3, sparse=True, padding_idx=0, **kwargs)
    with L.no_grad():
        emb.weight.copy_(L.tensor(_W))
    return emb


def _step(L, emb, opt, rows):
    opt.zero_grad()
    out = emb(L.tensor(rows))
    (out ** 2 * L.tensor(np.linspace(0.5, 1.5, 3, dtype=np.float32))).sum().backward()
    opt.step()


def _close(h, t):
    np.testing.assert_allclose(arr(h), arr(t), rtol=1e-5, atol=1e-6)


@torch_test
@pytest.mark.parametrize("kwargs", [{}, {"lr": 0.1, "betas": (0.5, 0.8), "eps": 1e-3},
                                    {"lr": 0.05, "maximize": True}])
def test_sparse_adam_on_an_embedding_matches_torch(kwargs):
    he, te = _embedding(hookgrad), _embedding(torch)
    ho, to = optim.SparseAdam(he.parameters(), **kwargs), \
        torch.optim.SparseAdam(te.parameters(), **kwargs)
    for rows in _LOOKUPS:
        _step(hookgrad, he, ho, rows)
        _step(torch, te, to, rows)
        _close(he.weight, te.weight)
    hs, ts = ho.state_dict(), to.state_dict()
    assert list(hs["state"][0]) == list(ts["state"][0]) == ["step", "exp_avg", "exp_avg_sq"]
    assert hs["state"][0]["step"] == ts["state"][0]["step"] == len(_LOOKUPS)
    assert type(hs["state"][0]["step"]) is int
    for name in ("exp_avg", "exp_avg_sq"):
        _close(hs["state"][0][name], ts["state"][0][name])
    assert hs["param_groups"] == ts["param_groups"]


@torch_test
def test_sparse_adam_state_dict_round_trips_to_and_from_torch():
    he, te = _embedding(hookgrad), _embedding(torch)
    ho, to = optim.SparseAdam(he.parameters(), lr=0.1), \
        torch.optim.SparseAdam(te.parameters(), lr=0.1)
    for rows in _LOOKUPS[:3]:
        _step(torch, te, to, rows)
    with hookgrad.no_grad():
        he.weight.copy_(hookgrad.tensor(arr(te.weight)))
    ho.load_state_dict(to.state_dict())
    for rows in _LOOKUPS[3:]:
        _step(hookgrad, he, ho, rows)
        _step(torch, te, to, rows)
    _close(he.weight, te.weight)
    te2 = _embedding(torch)
    with torch.no_grad():
        te2.weight.copy_(torch.tensor(arr(he.weight)))
    to2 = torch.optim.SparseAdam(te2.parameters(), lr=0.1)
    to2.load_state_dict(to_torch_state_dict(ho.state_dict()))
    for rows in _LOOKUPS[:2]:
        _step(hookgrad, he, ho, rows)
        _step(torch, te2, to2, rows)
    _close(he.weight, te2.weight)


def test_sparse_adam_leaves_untouched_rows_and_their_moments():
    p = leaf(_W)
    opt = optim.SparseAdam([p], lr=0.1, betas=(0.9, 0.999))
    g = np.zeros_like(_W)
    g[2], g[4] = [1.0, 1.0, -2.0], [0.5, 0.5, 0.5]
    p.grad = hookgrad.tensor(g)
    opt.step()
    assert np.any(arr(p) != _W, axis=1).tolist() == [0, 0, 1, 0, 1, 0, 0]
    m1, p1 = arr(opt.state[p]["exp_avg"]).copy(), arr(p).copy()
    g[2], g[4] = [1.0, 0.0, -2.0], 0.0  # row 2 touched (a zero inside it), row 4 not
    p.grad = hookgrad.tensor(g)
    opt.step()
    m2 = arr(opt.state[p]["exp_avg"])
    np.testing.assert_array_equal(m2[4], m1[4])  # Adam would decay it
    np.testing.assert_allclose(m2[2, 1], 0.9 * m1[2, 1], rtol=1e-6)
    assert np.any(arr(p) != p1, axis=1).tolist() == [0, 0, 1, 0, 0, 0, 0]
    assert arr(p)[2, 1] != p1[2, 1]
    p.grad = hookgrad.zeros(7, 3)  # PyTorch's empty sparse gradient: the step still counts
    before = arr(p).copy()
    opt.step()
    np.testing.assert_array_equal(arr(p), before)
    assert opt.state[p]["step"] == 3


@torch_test
@pytest.mark.parametrize("kwargs,match", [
    ({"lr": 0.0}, "Invalid learning rate: 0.0"),
    ({"eps": 0.0}, "Invalid epsilon value: 0.0"),
    ({"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0: 1.0"),
    ({"betas": (0.9, -0.1)}, "Invalid beta parameter at index 1: -0.1"),
])
def test_sparse_adam_argument_errors_match_torch(kwargs, match):
    for lib in (hookgrad, torch):
        p = leaf(INIT[0]) if lib is hookgrad else torch.nn.Parameter(torch.zeros(3))
        with pytest.raises(ValueError, match=match):
            lib.optim.SparseAdam([p], **kwargs)
    with pytest.raises(TypeError, match="unexpected keyword argument 'weight_decay'"):
        optim.SparseAdam([leaf(INIT[0])], weight_decay=0.1)


def test_sparse_adam_inside_compile():
    emb, ref = _embedding(hookgrad), _embedding(hookgrad)
    opt, ref_opt = optim.SparseAdam(emb.parameters(), lr=0.1), \
        optim.SparseAdam(ref.parameters(), lr=0.1)
    rows = hookgrad.tensor([1, 2, 2, 5])
    compiled = hookgrad.compile(lambda: _step(hookgrad, emb, opt, rows))
    for _ in range(3):
        compiled()
        _step(hookgrad, ref, ref_opt, rows)
    _close(emb.weight, ref.weight)
    _close(opt.state[emb.weight]["exp_avg_sq"], ref_opt.state[ref.weight]["exp_avg_sq"])
    assert opt.state[emb.weight]["step"] == 3


# ---------------------------------------------------------------- swap_in_optimizer_params...

def _swap_in_run(L, opt, params, swap_lr):
    """Swap copies of ``params`` and of the optimizer's state in, step once on ones as the
    gradient; returns the copies, the swapped state dict, and the lr seen inside."""
    sd = opt.state_dict()
    sd = {"state": {k: {n: L.tensor(arr(v)) for n, v in s.items()}
                    for k, s in sd["state"].items()},
          "param_groups": copy.deepcopy(sd["param_groups"])}
    sd["param_groups"][0]["lr"] = swap_lr
    shadow = {f"p{i}": L.nn.Parameter(L.tensor(arr(p))) for i, p in enumerate(params)}
    for p in shadow.values():
        p.grad = L.ones(*p.shape)
    with L.optim.swap_in_optimizer_params_and_state(opt, shadow, sd):
        inside = opt.param_groups[0]["lr"]
        assert opt.param_groups[0]["params"][0] is shadow["p0"]
        opt.step()
    return shadow, sd, inside


@torch_test
@pytest.mark.parametrize("name", ["Adam", "SGD", "ASGD"])
def test_swap_in_steps_the_given_params_and_state_as_torch(name):
    kwargs = {"lr": 0.1, "momentum": 0.9} if name == "SGD" else {"lr": 0.1}
    pair = Pair(name, kwargs)
    pair.step(2)
    live = [arr(p).copy() for p in pair.h]
    live_state = {k: arr(v).copy() for k, v in pair.ho.state[pair.h[0]].items()}
    hs, hsd, hlr = _swap_in_run(hookgrad, pair.ho, pair.h, 0.5)
    ts, tsd, tlr = _swap_in_run(torch, pair.to, pair.t, 0.5)
    assert hlr == tlr == 0.5
    for h, t in zip(hs.values(), ts.values()):
        _close(h, t)
    for k in tsd["state"]:  # the step's new state reached the given dict's Tensors
        for n in tsd["state"][k]:
            _close(hsd["state"][k][n], tsd["state"][k][n])
    # the live optimizer is back: its parameters, options and state are as they were
    assert pair.ho.param_groups[0]["lr"] == 0.1 and pair.ho.param_groups[0]["params"][0] is \
        pair.h[0]
    for p, before in zip(pair.h, live):
        np.testing.assert_array_equal(arr(p), before)
    for n, v in pair.ho.state[pair.h[0]].items():
        np.testing.assert_array_equal(arr(v), live_state[n])
    pair.step(1)
    pair.assert_close()


@torch_test
def test_swap_in_errors_match_torch():
    for lib in (hookgrad, torch):
        p = leaf(INIT[0]) if lib is hookgrad else torch.nn.Parameter(torch.zeros(3))
        opt = lib.optim.Adam([p], lr=0.1)
        swap = lib.optim.swap_in_optimizer_params_and_state
        with pytest.raises(RuntimeError, match="requires initialized optimizer state"):
            with swap(opt, {"p": p}, opt.state_dict()):
                pass
        p.grad = lib.ones(3)
        opt.step()
        sd = opt.state_dict()
        bad_keys = copy.deepcopy(sd)
        bad_keys["param_groups"][0]["extra"] = 1
        bad_extra = dict(sd, state={**sd["state"], 5: {}})
        for bad, match in (
                ([], "requires a DCP-style optimizer state_dict"),
                (dict(sd, state=[]), r"to be a dict mapping packed parameter ids"),
                (dict(sd, param_groups=[]), "different number of parameter groups"),
                (bad_keys, r"Keys only in swap-in: \['extra'\]\. Keys only in live: \[\]"),
                (bad_extra, r"got extra keys \[5\]")):
            with pytest.raises(RuntimeError, match=match):
                with swap(opt, {"p": p}, bad):
                    pass
        with pytest.raises(RuntimeError, match="match optimizer.param_groups ordering"):
            with swap(opt, {}, sd):
                pass


def _momentum_sgd(L):
    """A user's optimizer on ``Optimizer``: state edited in place, as PyTorch's tutorials
    write them."""

    class MomentumSGD(L.optim.Optimizer):
        def __init__(self, params, lr):
            super().__init__(params, {"lr": lr})

        def step(self, closure=None):
            with L.no_grad():
                for group in self.param_groups:
                    for p in group["params"]:
                        state = self.state[p]
                        if "buf" not in state:
                            state["buf"] = L.zeros_like(p)
                        state["buf"].mul_(0.9).add_(p.grad)
                        p.add_(state["buf"], alpha=-group["lr"])

    return MomentumSGD


@torch_test
def test_swap_in_with_a_user_optimizer_matches_torch():
    results = []
    for L in (hookgrad, torch):
        ps = [L.nn.Parameter(L.tensor(a)) for a in INIT]
        opt = _momentum_sgd(L)(ps, lr=0.1)
        for p in ps:
            p.grad = L.ones(*p.shape)
        opt.step()
        live_buf = opt.state[ps[0]]["buf"]
        shadow, sd, lr = _swap_in_run(L, opt, ps, 0.3)
        assert lr == 0.3 and opt.state[ps[0]]["buf"] is live_buf
        results.append((shadow, sd, [arr(p) for p in ps]))
    (hs, hsd, hlive), (ts, tsd, tlive) = results
    for h, t in zip(list(hs.values()) + hlive, list(ts.values()) + tlive):
        _close(h, t)
    _close(hsd["state"][1]["buf"], tsd["state"][1]["buf"])
