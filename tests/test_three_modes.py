"""The same program with the same hooks, run eagerly, compiled (``hookgrad.compile``) and
functionally (``hookgrad.func.functional_call`` under ``jax.grad`` and ``jax.jit``): the
gradients and what the hooks recorded agree.

Hooks installed on each model:
- a tensor hook on a Parameter that scales its gradient;
- from a forward hook, a tensor hook on the layer's output (scaling) and a Node pre-hook
  on its ``grad_fn`` (shifting ``grad_outputs``);
- a full backward hook that clips ``grad_input``;
- a forward hook that records an activation statistic (a host hook);
- a saved-tensor pack/unpack pair around the whole forward (counting calls);
- ``ModTracker`` with user hooks recording (event, module name) (host hooks).
"""
import math

import jax
import numpy as np
import pytest

import hookgrad as hg
import hookgrad.nn.functional as F
from hookgrad import nn
from hookgrad.autograd.graph import saved_tensors_hooks
from hookgrad.utils.mod_tracker import ModTracker


class MLP(nn.Module):
    def __init__(self, d=4, h=8, o=3):
        super().__init__()
        self.fc1 = nn.Linear(d, h)
        self.fc2 = nn.Linear(h, h)
        self.fc3 = nn.Linear(h, o)

    def forward(self, x, y):
        return F.mse_loss(self.fc3(F.relu(self.fc2(F.relu(self.fc1(x))))), y)


class LayerNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(hg.ones(d))
        self.bias = nn.Parameter(hg.zeros(d))
        self.d = d

    def forward(self, x):
        return F.layer_norm(x, (self.d,), self.weight, self.bias)


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = LayerNorm(d), LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        B, T, D = x.shape
        hd = D // self.heads
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q, k, v = (t.reshape(B, T, self.heads, hd).transpose(1, 2) for t in (q, k, v))
        att = F.softmax((q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd)), dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(B, T, D))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class Transformer(nn.Module):
    def __init__(self, d=8, heads=2, layers=2, out=3):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.head = nn.Linear(d, out)

    def forward(self, x, y):
        for b in self.blocks:
            x = b(x)
        return F.mse_loss(self.head(x), y)


def _make(kind):
    hg.manual_seed(0)
    if kind == "mlp":
        model = MLP()
        x, y = hg.randn(5, 4), hg.randn(5, 3)
        spots = dict(param=model.fc1.weight, inner=model.fc2, clipped=model.fc2,
                     recorded=model.fc1)
    else:
        model = Transformer()
        x, y = hg.randn(2, 3, 8), hg.randn(2, 3, 3)
        # the clipped module's output feeds an op, not another module: see
        # test_forward_hooks_inside_the_backward_hook_boundary
        spots = dict(param=model.blocks[0].qkv.weight, inner=model.blocks[0].fc1,
                     clipped=model.blocks[1].fc1, recorded=model.blocks[0])
    return model, x, y, spots


def _install(spots, log, tracker, counts):
    spots["param"].register_hook(lambda g: g * 0.5)

    def inner(mod, args, out):
        out.register_hook(lambda g: g * 2.0)
        out.grad_fn.register_prehook(lambda go: (go[0] + 0.01,))
    spots["inner"].register_forward_hook(inner)

    def clip(mod, grad_input, grad_output):
        return tuple(None if g is None else g.clamp(-0.02, 0.02) for g in grad_input)
    spots["clipped"].register_full_backward_hook(clip)

    @hg.compile.host_hook
    def record(mod, args, out):
        log.append(("act", round(out.abs().mean().item(), 4)))
    spots["recorded"].register_forward_hook(record)

    def event(kind):
        @hg.compile.host_hook
        def hook(mod, *rest):
            log.append((kind, tracker.get_known_fqn(mod)))
        return hook
    tracker.register_user_hooks(event("pre_fw"), event("post_fw"), event("pre_bw"),
                                event("post_bw"))


def _run(kind, mode, calls=1):
    """(gradients, hook log, pack/unpack counts) of ``calls`` backward passes."""
    model, x, y, spots = _make(kind)
    log, counts = [], {"pack": 0, "unpack": 0}

    # counted by host hooks: once per saved tensor on every call, compiled or not
    @hg.compile.host_hook
    def count(kind, t):
        counts[kind] += 1

    def pack(t):
        count("pack", t)
        return t * 1.0

    def unpack(p):
        count("unpack", p)
        return p

    with ModTracker() as tracker:
        _install(spots, log, tracker, counts)
        if mode == "eager":
            for _ in range(calls):
                model.zero_grad()
                with saved_tensors_hooks(pack, unpack):
                    loss = model(x, y)
                loss.backward()
            grads = {k: np.asarray(p.grad._data) for k, p in model.named_parameters()}
        elif mode == "compiled":
            @hg.compile
            def step(x, y):
                with saved_tensors_hooks(pack, unpack):
                    loss = model(x, y)
                loss.backward()
                return loss
            for _ in range(calls):
                model.zero_grad()  # outside: .grad present or not is part of the cache key
                step(x, y)
            assert step.trace_count == 1
            grads = {k: np.asarray(p.grad._data) for k, p in model.named_parameters()}
        else:
            def loss_fn(params, x, y):
                with saved_tensors_hooks(pack, unpack):
                    return hg.func.functional_call(model, params, (x, y))
            fn = jax.grad(loss_fn) if mode == "functional" else jax.jit(jax.grad(loss_fn))
            for _ in range(calls):
                g = fn(hg.func.state(model), x._data, y._data)
            grads = {k: np.asarray(v) for k, v in g.items()}
    return grads, log, counts


@pytest.fixture(scope="module", params=["mlp", "transformer"])
def eager_result(request):
    return request.param, _run(request.param, "eager")


@pytest.mark.parametrize("mode", ["compiled", "functional", "functional_jit"])
def test_gradients_and_hook_effects_agree(eager_result, mode):
    kind, (grads_e, log_e, counts_e) = eager_result
    calls = 1 if mode == "functional" else 2
    grads, log, counts = _run(kind, mode, calls)
    assert grads.keys() == grads_e.keys()
    for k in grads:
        np.testing.assert_allclose(grads[k], grads_e[k], rtol=1e-5, atol=1e-6, err_msg=k)
    # host hooks fire on every call with that call's values, in eager's order
    assert log == log_e * calls
    # pack/unpack run once per saved tensor, on every call
    assert counts == {k: n * calls for k, n in counts_e.items()}
    assert counts_e["pack"] > 0 and counts_e["pack"] == counts_e["unpack"]


def test_hooks_change_the_gradients():
    # the matrix above would pass with hooks that do nothing: check they act
    model, x, y, spots = _make("mlp")
    model(x, y).backward()
    plain = {k: np.asarray(p.grad._data) for k, p in model.named_parameters()}
    hooked, _, _ = _run("mlp", "eager")
    for k in ("fc1.weight", "fc1.bias", "fc2.weight"):
        assert not np.allclose(plain[k], hooked[k]), k


def test_eager_matches_pytorch_with_the_same_hooks():
    torch = pytest.importorskip("torch")
    from torch.distributed._tools.mod_tracker import ModTracker as TorchModTracker
    model, x, y, _ = _make("mlp")
    grads_hg, log_hg, counts_hg = _run("mlp", "eager")

    class TMLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(4, 8)
            self.fc2 = torch.nn.Linear(8, 8)
            self.fc3 = torch.nn.Linear(8, 3)

        def forward(self, x, y):
            h = torch.relu(self.fc2(torch.relu(self.fc1(x))))
            return torch.nn.functional.mse_loss(self.fc3(h), y)

    tm = TMLP()
    with torch.no_grad():
        for k, p in tm.named_parameters():
            p.copy_(torch.tensor(np.asarray(model.get_parameter(k)._data)))
    log, counts = [], {"pack": 0, "unpack": 0}

    # counted by host hooks: once per saved tensor on every call, compiled or not
    @hg.compile.host_hook
    def count(kind, t):
        counts[kind] += 1

    def pack(t):
        count("pack", t)
        return t * 1.0

    def unpack(p):
        count("unpack", p)
        return p

    with TorchModTracker() as tracker:
        tm.fc1.weight.register_hook(lambda g: g * 0.5)

        def inner(mod, args, out):
            out.register_hook(lambda g: g * 2.0)
            out.grad_fn.register_prehook(lambda go: (go[0] + 0.01,))
        tm.fc2.register_forward_hook(inner)
        tm.fc2.register_full_backward_hook(
            lambda m, gi, go: tuple(None if g is None else g.clamp(-0.02, 0.02) for g in gi))
        tm.fc1.register_forward_hook(
            lambda m, a, o: log.append(("act", round(o.abs().mean().item(), 4))))

        def event(kind):
            return lambda mod, *rest: log.append((kind, tracker.get_known_fqn(mod)))
        tracker.register_user_hooks(event("pre_fw"), event("post_fw"), event("pre_bw"),
                                    event("post_bw"))
        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            loss = tm(torch.tensor(np.asarray(x._data)), torch.tensor(np.asarray(y._data)))
        loss.backward()
    for k, p in tm.named_parameters():
        np.testing.assert_allclose(grads_hg[k], p.grad.numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=k)
    assert [e for e in log_hg if e[0] != "act"] == [
        (kind, name.replace("TMLP", "MLP")) for kind, name in log if kind != "act"]
    assert [e for e in log_hg if e[0] == "act"] == [e for e in log if e[0] == "act"]


def test_forward_hooks_inside_the_backward_hook_boundary():
    # Eagerly a module's forward hooks see its output before the identity that carries its
    # full backward hooks: ModTracker's backward events of a module whose output feeds
    # another module depend on that.
    def events(mode):
        hg.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 2))
        x = hg.randn(4, 3, requires_grad=True)
        log = []
        with ModTracker() as tracker:
            model[0].register_full_backward_hook(lambda m, gi, go: None)
            tracker.register_user_hooks(
                pre_bw_hook=lambda m, g: log.append(("pre_bw", tracker.get_known_fqn(m))),
                post_bw_hook=lambda m, g: log.append(("post_bw", tracker.get_known_fqn(m))))
            if mode == "eager":
                model(x).sum().backward()
            else:
                def f(p, x):
                    return hg.func.functional_call(model, p, (x,)).sum()
                jax.grad(f, argnums=(0, 1))(hg.func.state(model), x._data)
        return log
    assert events("functional") == events("eager")
