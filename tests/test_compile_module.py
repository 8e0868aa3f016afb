"""``hookgrad.compile(model)`` / ``model.compile()``: a compiled forward in an eager loop."""
import contextlib
import copy

import numpy as np
import pytest

import hookgrad as hg
import hookgrad.nn.functional as F
from hookgrad import nn
from hookgrad.utils.mod_tracker import ModTracker

from .differential import needs_torch, torch


def _arr(t):
    return np.asarray(t._data, dtype=np.float64)


def _mlp(dropout=0.0):
    hg.manual_seed(0)
    layers = [nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU()]
    if dropout:
        layers.append(nn.Dropout(dropout))
    return nn.Sequential(*layers, nn.Linear(4, 2))


def _train(model, x, y, steps=3, seed=10):
    opt = hg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for i in range(steps):
        hg.manual_seed(seed + i)
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    return losses


def _assert_same_state(a, b, tol=1e-5):
    sa, sb = a.state_dict(), b.state_dict()
    assert list(sa) == list(sb)
    for k in sa:
        np.testing.assert_allclose(_arr(sa[k]), _arr(sb[k]), rtol=tol, atol=tol, err_msg=k)


def test_training_loop_equals_eager_with_batchnorm_and_dropout():
    model = _mlp(dropout=0.5)
    eager = copy.deepcopy(model)
    cmodel = hg.compile(model)
    x, y = hg.randn(5, 3), hg.randn(5, 2)
    v0 = (model[1].num_batches_tracked._version, eager[1].num_batches_tracked._version)
    got, want = _train(cmodel, x, y), _train(eager, x, y)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    _assert_same_state(model, eager)   # weights, running stats, num_batches_tracked
    assert cmodel.trace_count == 1     # new parameter values do not retrace
    assert model[1].num_batches_tracked._version - v0[0] == \
        eager[1].num_batches_tracked._version - v0[1] == 3


@needs_torch
def test_training_loop_equals_torch_eager():
    model = _mlp()
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                                 torch.nn.ReLU(), torch.nn.Linear(4, 2))
    tmodel.load_state_dict({k: torch.tensor(_arr(v)).to(getattr(torch, v.dtype.name))
                            for k, v in model.state_dict().items()})
    x, y = np.random.RandomState(0).randn(2, 5, 3).astype(np.float32)[0], \
        np.random.RandomState(1).randn(5, 2).astype(np.float32)
    got = _train(hg.compile(model), hg.tensor(x), hg.tensor(y))
    topt = torch.optim.SGD(tmodel.parameters(), lr=0.1, momentum=0.9)
    want = []
    for _ in range(3):
        loss = torch.nn.functional.mse_loss(tmodel(torch.tensor(x)), torch.tensor(y))
        loss.backward()
        topt.step()
        topt.zero_grad()
        want.append(loss.item())
    np.testing.assert_allclose(got, want, rtol=1e-5)
    for k, v in tmodel.state_dict().items():
        np.testing.assert_allclose(_arr(model.state_dict()[k]), v.double().numpy(),
                                   rtol=1e-5, atol=1e-6, err_msg=k)


def test_one_node_reaching_parameters_and_input_graph():
    model = _mlp()
    cmodel = hg.compile(model)
    a = hg.randn(5, 3, requires_grad=True)
    x = a * 2
    out = cmodel(x)
    node = out.grad_fn
    assert node.name() == "CompiledFunctionBackward"
    nxt = [n for n, _ in node.next_functions]
    params = list(model.parameters())
    assert [n.variable for n in nxt[:len(params)]] == params
    assert nxt[-1] is x.grad_fn
    out.sum().backward()
    eager = copy.deepcopy(model)
    a2 = hg.tensor(a._data, requires_grad=True)
    eager(a2 * 2).sum().backward()
    np.testing.assert_allclose(_arr(a.grad), _arr(a2.grad), rtol=1e-5, atol=1e-6)
    for p, q in zip(model.parameters(), eager.parameters()):
        np.testing.assert_allclose(_arr(p.grad), _arr(q.grad), rtol=1e-5, atol=1e-6)


def test_retraces_on_shape_mode_and_grad_mode_only():
    model = _mlp()
    cmodel = hg.compile(model)
    cmodel(hg.randn(5, 3))
    with hg.no_grad():
        for p in model.parameters():
            p.add_(1.0)          # new values: same program
    cmodel(hg.randn(5, 3))
    assert cmodel.trace_count == 1
    cmodel(hg.randn(6, 3))
    assert cmodel.trace_count == 2
    cmodel.eval()
    assert not model.training and not model[1].training
    cmodel(hg.randn(6, 3))
    assert cmodel.trace_count == 3
    with hg.no_grad():
        out = cmodel(hg.randn(6, 3))
    assert out.grad_fn is None and not out.requires_grad
    assert cmodel.trace_count == 4


def test_state_dict_parameters_attributes_and_repr():
    model = _mlp()
    cmodel = hg.compile(model)
    assert isinstance(cmodel, nn.Module) and type(cmodel).__name__ == "OptimizedModule"
    assert cmodel._orig_mod is model
    assert list(cmodel.parameters()) == list(model.parameters())
    assert [n for n, _ in cmodel.named_parameters()] == \
        ["_orig_mod." + n for n, _ in model.named_parameters()]
    assert list(cmodel.state_dict()) == ["_orig_mod." + k for k in model.state_dict()]
    assert len(cmodel) == len(model)
    model.note = "x"
    assert cmodel.note == "x"
    cmodel.other = 3                  # written to the original, as in PyTorch
    assert model.other == 3
    cmodel.train(False)
    assert not model.training and not cmodel.training
    assert repr(cmodel).startswith("OptimizedModule(\n  (_orig_mod): Sequential(")
    twin = copy.deepcopy(cmodel)
    assert type(twin) is type(cmodel) and twin._orig_mod is not model
    assert [n for n, _ in twin.named_parameters()] == [n for n, _ in cmodel.named_parameters()]
    x = hg.randn(5, 3)
    np.testing.assert_allclose(_arr(twin(x)), _arr(cmodel(x)), rtol=1e-6)
    assert twin.trace_count == 1 and twin(x).grad_fn.name() == "CompiledFunctionBackward"
    with pytest.raises(TypeError, match="Linear does not support len()"):
        len(hg.compile(nn.Linear(2, 2)))


@needs_torch
def test_state_dict_keys_and_repr_as_torch():
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU())
    tc = torch.compile(tm)   # lazy: nothing is compiled before a call
    cm = hg.compile(nn.Sequential(nn.Linear(3, 4), nn.ReLU()))
    assert list(cm.state_dict()) == list(tc.state_dict())
    assert [n for n, _ in cm.named_parameters()] == [n for n, _ in tc.named_parameters()]
    assert repr(cm) == repr(tc)


def _hooked_run(call, model, x, kind):
    """Events of hooks of ``kind`` on ``model`` while ``call(x).sum()`` is differentiated."""
    events, handles = [], []
    if kind == "module":
        handles.append(model[0].register_forward_hook(
            lambda m, i, o: events.append(("fwd", round(float(o.sum()), 4)))))
        handles.append(model[3].register_full_backward_hook(
            lambda m, gi, go: events.append(("bwd", round(float(go[0].sum()), 4)))))
    elif kind == "global":
        handles.append(nn.modules.module.register_module_forward_pre_hook(
            lambda m, i: events.append(("pre", type(m).__name__))))
    ctx = contextlib.nullcontext()
    if kind == "saved":
        ctx = hg.autograd.graph.saved_tensors_hooks(
            lambda t: events.append("pack") or t, lambda t: events.append("unpack") or t)
    elif kind == "tracker":
        ctx = ModTracker()
        ctx.register_user_hooks(pre_fw_hook=lambda m, i: events.append(
            ("mt", ctx.get_known_fqn(m))))
    try:
        with ctx:
            out = call(x)
            out.sum().backward()
    finally:
        for h in handles:
            h.remove()
    return events, out


@pytest.mark.parametrize("kind", ["module", "global", "saved", "tracker"])
def test_module_and_saved_tensor_hooks_fire_as_eagerly(kind):
    model = _mlp()
    eager = copy.deepcopy(model)
    cmodel = hg.compile(model)
    x = hg.randn(5, 3)
    warns = pytest.warns(UserWarning, match="will cause the hooks to fire an extra time") \
        if kind in ("global", "tracker") else contextlib.nullcontext()
    with warns:   # PyTorch's warning about global hooks and torch.compile(module)
        got, out = _hooked_run(cmodel, model, x, kind)
    want, _ = _hooked_run(eager, eager, x, kind)
    if kind == "tracker":   # the OptimizedModule is one more module the tracker sees
        want = [("mt", "OptimizedModule")] + [
            ("mt", "OptimizedModule._orig_mod" + n[len("Sequential"):]) for _, n in want]
    elif kind == "global":  # as in PyTorch, global hooks also fire for the wrapper
        want = [("pre", "OptimizedModule")] + want
    assert got == want and got
    assert out.grad_fn.name() != "CompiledFunctionBackward"   # the call graph-broke
    assert cmodel.trace_count == 0
    for p, q in zip(model.parameters(), eager.parameters()):
        np.testing.assert_allclose(_arr(p.grad), _arr(q.grad), rtol=1e-5, atol=1e-6)


def test_tensor_hooks_outside_the_node():
    model = _mlp()
    eager = copy.deepcopy(model)
    x = hg.randn(5, 3)
    seen = {}
    for tag, m in (("c", hg.compile(model)), ("e", eager)):
        log = seen[tag] = []
        inner = m._orig_mod if tag == "c" else m
        inner[0].weight.register_hook(lambda g: g * 2)
        inner[3].bias.register_post_accumulate_grad_hook(
            lambda p, log=log: log.append(("acc", float(p.grad.sum()))))
        out = m(x)
        out.register_hook(lambda g, log=log: log.append(("out", float(g.sum()))))
        out.sum().backward()
        if tag == "c":
            assert out.grad_fn.name() == "CompiledFunctionBackward"
    assert seen["c"] == seen["e"] and len(seen["c"]) == 2
    for p, q in zip(model.parameters(), eager.parameters()):
        np.testing.assert_allclose(_arr(p.grad), _arr(q.grad), rtol=1e-5, atol=1e-6)


def test_frozen_parameters_get_no_grad():
    model = _mlp()
    model[0].weight.requires_grad_(False)
    cmodel = hg.compile(model)
    cmodel(hg.randn(5, 3)).sum().backward()
    assert model[0].weight.grad is None and model[0].bias.grad is not None
    assert len(cmodel(hg.randn(5, 3)).grad_fn.next_functions) == len(
        [p for p in model.parameters() if p.requires_grad])


def test_module_compile_in_place():
    model = _mlp()
    eager = copy.deepcopy(model)
    assert model.compile() is None
    x, y = hg.randn(5, 3), hg.randn(5, 2)
    assert model(x).grad_fn.name() == "CompiledFunctionBackward"
    assert list(model.state_dict()) == list(eager.state_dict())   # no prefix
    np.testing.assert_allclose(_train(model, x, y), _train(eager, x, y), rtol=1e-5)
    calls = []
    h = model.register_forward_hook(lambda m, i, o: calls.append(1))
    out = model(x)
    h.remove()
    assert calls == [1] and out.grad_fn.name() != "CompiledFunctionBackward"
    model.compile(disable=True)
    assert model._compiled_call_impl is None
    with pytest.raises(TypeError, match="takes no positional arguments"):
        model.compile(model)


class _HostRead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        if float(x.sum()) > 0:     # data-dependent Python control flow
            return self.fc(x)
        return -self.fc(x)


def test_host_read_graph_breaks_unless_fullgraph():
    hg.manual_seed(0)
    m = _HostRead()
    x = hg.ones(2, 3)
    out = hg.compile(m)(x)
    np.testing.assert_allclose(_arr(out), _arr(m(x)))
    assert out.grad_fn.name() != "CompiledFunctionBackward"
    with pytest.raises(hg.compile.TracedValueError, match="needs the concrete value"):
        hg.compile(m, fullgraph=True)(x)


class _InPlace(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        x.mul_(2)          # writes into the caller's Tensor
        return self.fc(x)


def test_in_place_write_to_an_argument_graph_breaks():
    hg.manual_seed(0)
    m = _InPlace()
    a, b = hg.ones(2, 3), hg.ones(2, 3)
    out = hg.compile(m)(a)
    np.testing.assert_allclose(_arr(out), _arr(m(b)))
    np.testing.assert_allclose(_arr(a), _arr(b))     # the write reached the argument
    assert a._version == b._version == 1
    with pytest.raises(RuntimeError, match="writes into a Tensor argument in place"):
        hg.compile(m, fullgraph=True)(a)


class _HookInside(nn.Module):
    def __init__(self, log):
        super().__init__()
        self.fc, self.log = nn.Linear(3, 2), log

    def forward(self, x):
        h = self.fc(x)
        h.register_hook(lambda g: self.log.append(1) or g * 2)
        return h.tanh()


def test_hook_registered_in_forward_graph_breaks():
    hg.manual_seed(0)
    got, want = [], []
    m = _HookInside(got)
    e = copy.deepcopy(m)
    e.log = want
    c = hg.compile(m)
    for _ in range(3):
        c(hg.ones(2, 3)).sum().backward()
        e(hg.ones(2, 3)).sum().backward()
    assert got == want == [1, 1, 1]     # the hook ran on every backward
    np.testing.assert_allclose(_arr(m.fc.weight.grad), _arr(e.fc.weight.grad), rtol=1e-6)
    with pytest.raises(RuntimeError, match="registers a gradient hook on a Tensor"):
        hg.compile(m, fullgraph=True)(hg.ones(2, 3))


def test_backward_twice_and_double_backward_raise():
    cmodel = hg.compile(_mlp())
    out = cmodel(hg.randn(5, 3)).sum()
    out.backward(retain_graph=True)
    out.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
        out.backward()
    x = hg.randn(5, 3, requires_grad=True)
    y = cmodel(x).sum()
    with pytest.raises(RuntimeError, match="does not currently support double backward"):
        hg.autograd.grad(y, x, create_graph=True)


def test_bad_input_raises_as_eagerly():
    model = _mlp()
    with pytest.raises(Exception) as eager_err:
        model(hg.randn(5, 7))
    with pytest.raises(type(eager_err.value)):
        hg.compile(model)(hg.randn(5, 7))
    with pytest.raises(RuntimeError, match="expects a callable"):
        hg.compile(3)


def test_inside_a_compiled_step_and_functional_call():
    model = _mlp()
    eager = copy.deepcopy(model)
    cmodel = hg.compile(model)
    x, y = hg.randn(5, 3), hg.randn(5, 2)
    results = []

    def make_step(m):
        opt = hg.optim.SGD(m.parameters(), lr=0.1)

        def step(x, y):
            loss = F.mse_loss(m(x), y)   # the OptimizedModule is inlined into the step
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss
        return step

    for step in (hg.compile(make_step(cmodel)), make_step(eager)):
        results.append([float(step(x, y)) for _ in range(2)])
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5)
    _assert_same_state(model, eager)
    assert cmodel.trace_count == 0
    params = {"_orig_mod." + k: v for k, v in hg.func.state(model).items()}
    out_f = hg.func.functional_call(cmodel, params, (x._data,))
    np.testing.assert_allclose(np.asarray(out_f), _arr(eager(x)), rtol=1e-5, atol=1e-6)
