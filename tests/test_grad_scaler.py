"""``torch.amp.GradScaler``: scaled losses, unscaled gradients, skipped steps on inf/NaN, the
scale's growth and backoff, its state dict and errors — against PyTorch's on the CPU — and
the same loop inside ``hookgrad.compile``, where a skipped step is a select."""
import pickle
import warnings

import numpy as np
import pytest

import hookgrad
from tests.differential import py, same_as_torch


def _model(L, seed=0):
    rng = np.random.default_rng(seed)
    m = L.nn.Linear(4, 3)
    with L.no_grad():
        m.weight.copy_(L.tensor(rng.standard_normal((3, 4)).astype(np.float32)))
        m.bias.copy_(L.tensor(rng.standard_normal(3).astype(np.float32)))
    return m


def _loop(L, make_opt, steps=6, bad=(2,), compiled=False, autocast=True):
    """A training loop whose loss is multiplied by inf at the ``bad`` steps; returns, per
    step, the scale, the growth tracker, the weights and the optimizer's step count."""
    m = _model(L)
    opt = make_opt(L, m)
    scaler = L.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_interval=2)
    x = L.tensor(np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32))

    def step(x, factor):
        opt.zero_grad()
        with L.autocast("cpu", enabled=autocast):
            loss = (m(x).float() ** 2).mean()
        scaler.scale(loss * factor).backward()
        scaler.step(opt)
        scaler.update()
        return loss.detach()

    if compiled:
        step = L.compile(step)
    log = []
    for i in range(steps):
        step(x, L.tensor(float("inf") if i in bad else 1.0))
        state = opt.state[m.weight]
        log.append({"scale": scaler.get_scale(), "tracker": scaler._get_growth_tracker(),
                    "weight": py(m.weight.detach()),
                    "step": float(state["step"]) if "step" in state else None})
    return log


def _adam(L, m):
    return L.optim.Adam(m.parameters(), lr=0.1)


def _sgd(L, m):
    return L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)


@pytest.mark.parametrize("make_opt", [_adam, _sgd], ids=["Adam", "SGD-momentum"])
def test_a_loop_with_an_overflow_skips_that_step_and_backs_off(make_opt):
    log = same_as_torch(lambda L: _loop(L, make_opt, autocast=False))
    assert [e["scale"] for e in log] == [1024.0, 2048.0, 1024.0, 1024.0, 2048.0, 2048.0]
    assert [e["tracker"] for e in log] == [1, 0, 0, 1, 0, 1]
    assert log[2]["weight"] == log[1]["weight"]  # the overflow step changed nothing


def test_the_loop_under_bfloat16_autocast_follows_pytorch():
    same_as_torch(lambda L: _loop(L, _adam), tol=2e-2)


def test_a_first_step_that_overflows_leaves_no_optimizer_state():
    log = same_as_torch(lambda L: _loop(L, _adam, steps=2, bad=(0,), autocast=False))
    assert log[0]["step"] is None and log[1]["step"] == 1.0


@pytest.mark.parametrize("make_opt", [_adam, _sgd], ids=["Adam", "SGD-momentum"])
def test_the_loop_compiled_equals_eager(make_opt):
    eager = _loop(hookgrad, make_opt, autocast=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # one program: not run eagerly
        compiled = _loop(hookgrad, make_opt, autocast=False, compiled=True)
    for e, c in zip(eager, compiled):
        assert (e["scale"], e["tracker"], e["step"]) == (c["scale"], c["tracker"], c["step"])
        np.testing.assert_allclose(c["weight"], e["weight"], rtol=1e-5, atol=1e-6)


def test_unscale_then_clip_then_step():
    def program(L):
        m = _model(L)
        opt = L.optim.SGD(m.parameters(), lr=0.1)
        scaler = L.amp.GradScaler("cpu", init_scale=256.0)
        loss = m(L.ones(2, 4)).sum()
        scaler.scale(loss).backward()
        scaled = py(m.weight.grad)
        scaler.unscale_(opt)
        norm = L.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        return {"scaled": scaled, "norm": py(norm), "weight": py(m.weight.detach()),
                "scale": scaler.get_scale()}

    got = same_as_torch(program)
    assert got["scale"] == 256.0


def test_misuse_raises_pytorchs_errors():
    def program(L):
        m = _model(L)
        opt = L.optim.SGD(m.parameters(), lr=0.1)
        scaler = L.amp.GradScaler("cpu")
        out = {}
        try:
            scaler.unscale_(opt)
        except Exception as e:  # noqa: BLE001
            out["unscale before scale"] = type(e).__name__
        scaler.scale(m(L.ones(1, 4)).sum()).backward()
        scaler.unscale_(opt)
        for name, call in [("unscale twice", lambda: scaler.unscale_(opt)),
                           ("closure", lambda: scaler.step(opt, closure=lambda: 0))]:
            try:
                call()
            except Exception as e:  # noqa: BLE001
                out[name] = [type(e).__name__, str(e)]
        scaler.step(opt)
        try:
            scaler.step(opt)
        except RuntimeError as e:
            out["step twice"] = str(e)
        try:
            scaler.scale(object())
        except ValueError as e:
            out["scale an object"] = str(e)
        return out

    got = same_as_torch(program)
    assert got["unscale twice"] == ["RuntimeError", "unscale_() has already been called on "
                                    "this optimizer since the last update()."]
    assert got["step twice"] == "step() has already been called since the last update()."
    with pytest.raises(AssertionError, match="The growth factor must be > 1.0."):
        hookgrad.amp.GradScaler("cpu", growth_factor=1.0)


def test_scale_of_nested_outputs_and_disabled_scalers():
    def program(L):
        scaler = L.amp.GradScaler("cpu", init_scale=4.0)
        a, b = L.ones(2), L.full((1,), 2.0)
        nested = scaler.scale([a, (b, a)])
        off = L.amp.GradScaler("cpu", enabled=False)
        return {"nested": py(nested), "type": type(nested[1]).__name__,
                "off": [off.scale(a) is a, off.get_scale(), off.state_dict(), off.is_enabled()]}

    assert same_as_torch(program)["off"] == [True, 1.0, {}, False]


def test_state_dict_round_trip_and_pickle():
    def program(L):
        log = []
        scaler = L.amp.GradScaler("cpu", init_scale=8.0, growth_interval=1)
        m = _model(L)
        opt = L.optim.SGD(m.parameters(), lr=0.1)
        scaler.scale(m(L.ones(1, 4)).sum()).backward()
        scaler.step(opt)
        scaler.update()
        sd = scaler.state_dict()
        other = L.amp.GradScaler("cpu")
        other.load_state_dict(sd)
        log.append([sd, other.get_scale(), other.get_growth_factor()])
        copy = pickle.loads(pickle.dumps(scaler))
        log.append([copy.get_scale(), copy._get_growth_tracker()])
        return log

    got = same_as_torch(program)
    assert got[0][0]["scale"] == 16.0 and got[1] == [16.0, 0]


def test_cuda_scaler_without_a_gpu_disables_itself_with_pytorchs_warning():
    if hookgrad.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.warns(UserWarning, match="CUDA is not available.  Disabling.") as rec:
        scaler = hookgrad.amp.GradScaler()
    assert rec[0].filename == __file__ and not scaler.is_enabled()
    with pytest.warns(FutureWarning, match=r"torch.cuda.amp.GradScaler\(args...\)` is "):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            hookgrad.cuda.amp.GradScaler()


def test_a_python_optimizer_inside_a_compiled_step_says_why_it_cannot_skip():
    class Plain(hookgrad.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.1})

        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    p.data.sub_(group["lr"] * p.grad)

    m = _model(hookgrad)
    opt = Plain(m.parameters())
    scaler = hookgrad.amp.GradScaler("cpu")

    def step(x):
        opt.zero_grad()
        scaler.scale(m(x).sum()).backward()
        scaler.step(opt)
        scaler.update()

    with pytest.raises(RuntimeError, match="cannot skip a step of Plain: it updates in Python"):
        hookgrad.compile(step, fullgraph=True)(hookgrad.ones(2, 4))
    # by default the step runs eagerly, where the scaler skips in Python, and says why
    before = [p.detach().clone() for p in m.parameters()]
    with pytest.warns(UserWarning, match="runs eagerly: tracing it raised RuntimeError: .*"
                                         "cannot skip a step of Plain"):
        hookgrad.compile(step)(hookgrad.ones(2, 4))
    assert all(not hookgrad.equal(b, p) for b, p in zip(before, m.parameters()))
