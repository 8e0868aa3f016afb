"""Shared fixtures of the optimizer tests: leaves, a fixed quadratic loss, lockstep runs."""
import numpy as np
import pytest

import hookgrad

try:
    import torch
except ImportError:  # differential tests skip
    torch = None

_RNG = np.random.RandomState(0)
INIT = [_RNG.randn(3).astype(np.float32), _RNG.randn(2, 2).astype(np.float32)]


def _spd(n):
    m = _RNG.randn(n, n).astype(np.float32)
    return (m @ m.T / n + np.eye(n, dtype=np.float32)).astype(np.float32)


# loss_k(x) = 0.5 x'A x + b'x per parameter (flattened): gradient A x + b
_QUAD = [(_spd(3), _RNG.randn(3).astype(np.float32)),
         (_spd(4), _RNG.randn(4).astype(np.float32))]


def quad_grad(k, x):
    a, b = _QUAD[k]
    x = np.asarray(x, np.float32)
    return (a @ x.reshape(-1) + b).reshape(x.shape).astype(np.float32)


def leaf(values):
    """A leaf requiring grad: an ``nn.Parameter`` when hookgrad.nn imports."""
    try:
        from hookgrad.nn import Parameter
    except Exception:  # noqa: BLE001 - nn may be mid-construction; any leaf will do
        return hookgrad.tensor(np.array(values), requires_grad=True)
    return Parameter(hookgrad.tensor(np.array(values)))


def arr(t):
    """A hookgrad or torch Tensor (or a number) as a NumPy array."""
    if isinstance(t, hookgrad.Tensor):
        return np.asarray(t._data)
    if hasattr(t, "detach"):
        return t.detach().numpy()
    return np.asarray(t)


def to_torch_state_dict(sd):
    """A hookgrad optimizer's ``state_dict()`` with its Tensors as torch Tensors."""
    return {"state": {k: {n: torch.tensor(arr(v)) if isinstance(v, hookgrad.Tensor) else v
                          for n, v in s.items()} for k, s in sd["state"].items()},
            "param_groups": sd["param_groups"]}


class Pair:
    """The same optimizer in hookgrad and PyTorch, fed the same gradients."""

    def __init__(self, name, kwargs=None, groups=None, init=INIT):
        kwargs = kwargs or {}
        self.h = [leaf(a) for a in init]
        self.t = [torch.nn.Parameter(torch.tensor(np.array(a))) for a in init]
        if groups is None:
            hp, tp = self.h, self.t
        else:  # groups: list of (indices, options)
            hp = [dict(opts, params=[self.h[i] for i in idx]) for idx, opts in groups]
            tp = [dict(opts, params=[self.t[i] for i in idx]) for idx, opts in groups]
        self.ho = getattr(hookgrad.optim, name)(hp, **kwargs)
        self.to = getattr(torch.optim, name)(tp, **kwargs)

    def set_grads(self, skip=()):
        for k, (h, t) in enumerate(zip(self.h, self.t)):
            if k in skip:
                h.grad = None
                t.grad = None
            else:
                h.grad = hookgrad.tensor(quad_grad(k, arr(h)))
                t.grad = torch.tensor(quad_grad(k, arr(t)))

    def step(self, n=1, skip=()):
        for _ in range(n):
            self.set_grads(skip)
            self.ho.step()
            self.to.step()

    def assert_close(self, tol=1e-5):
        for h, t in zip(self.h, self.t):
            np.testing.assert_allclose(arr(h), arr(t), rtol=tol, atol=tol)

    def assert_state_close(self, tol=1e-5):
        hs, ts = self.ho.state_dict(), self.to.state_dict()
        assert sorted(hs["state"]) == sorted(ts["state"])
        for k, tstate in ts["state"].items():
            assert list(hs["state"][k]) == list(tstate)
            for name, v in tstate.items():
                np.testing.assert_allclose(arr(hs["state"][k][name]), arr(v), rtol=tol,
                                           atol=tol, err_msg=name)
        strip = [{k: v for k, v in g.items()} for g in ts["param_groups"]]
        assert hs["param_groups"] == strip


def assert_matches_torch_step_by_step(name, kwargs, init=INIT, steps=6, tol=1e-5,
                                      state_tol=None):
    """``steps`` steps on the quadratic equal PyTorch's after each one; the states too."""
    pair = Pair(name, kwargs, init=init)
    for _ in range(steps):
        pair.step()
        pair.assert_close(tol)
    pair.assert_state_close(state_tol or tol)


def sweep_ids(sweep):
    """Test ids for ``(name, kwargs, ...)`` rows: the name and the options' keys."""
    return [f"{row[0]}-{'-'.join(row[1])}" for row in sweep]


def assert_state_dict_round_trips(name, kwargs, init=INIT, tol=1e-5):
    """Three steps in both; torch's state loaded into a fresh hookgrad optimizer continues
    as torch does, and that one's state loaded into torch continues alike."""
    pair = Pair(name, kwargs, init=init)
    pair.step(3)
    h = [leaf(arr(p)) for p in pair.t]
    opt = getattr(hookgrad.optim, name)(h, **kwargs)
    opt.load_state_dict(pair.to.state_dict())
    pair.ho, pair.h = opt, h
    pair.step(3)
    pair.assert_close(tol)
    pair.assert_state_close(tol)
    t = [torch.nn.Parameter(torch.tensor(arr(p))) for p in pair.h]
    tor = getattr(torch.optim, name)(t, **kwargs)
    tor.load_state_dict(to_torch_state_dict(pair.ho.state_dict()))
    pair.to, pair.t = tor, t
    pair.step(2)
    pair.assert_close(tol)


def assert_compiled_matches_eager(name, kwargs, bias=True, steps=4, tol=1e-5):
    """A training step of ``nn.Linear(3, 2)`` under ``hookgrad.compile`` gives the eager
    step's losses, parameters and optimizer state."""
    nn = hookgrad.nn
    hookgrad.manual_seed(0)
    model = nn.Linear(3, 2, bias=bias)
    ref = nn.Linear(3, 2, bias=bias)
    ref.load_state_dict(model.state_dict())
    x = hookgrad.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 6)
    opts = [getattr(hookgrad.optim, name)(m.parameters(), **kwargs) for m in (model, ref)]

    def step(m, opt):
        opt.zero_grad()
        loss = (m(x) ** 2).sum()
        loss.backward()
        opt.step()
        return loss

    compiled = hookgrad.compile(lambda: step(model, opts[0]))
    for _ in range(steps):
        np.testing.assert_allclose(arr(compiled()), arr(step(ref, opts[1])), rtol=tol)
    for a, b in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(arr(a), arr(b), rtol=tol, atol=tol / 10)
    sd, rsd = opts[0].state_dict(), opts[1].state_dict()
    assert sd["state"].keys() == rsd["state"].keys()
    for k in rsd["state"]:
        assert list(sd["state"][k]) == list(rsd["state"][k])
        for n in rsd["state"][k]:
            np.testing.assert_allclose(arr(sd["state"][k][n]), arr(rsd["state"][k][n]),
                                       rtol=tol, atol=tol / 10, err_msg=n)


def torch_test(f):
    """Mark a differential test: needs PyTorch."""
    f = pytest.mark.skipif(torch is None, reason="torch is not installed")(f)
    return pytest.mark.torch(f)
