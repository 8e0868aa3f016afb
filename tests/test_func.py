"""``hookgrad.func``: Modules as pure functions for ``jax.grad``/``jit``/``vmap``, with
hooks as ``custom_vjp`` boundaries."""
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import hookgrad as hg
import hookgrad.nn.functional as F
from hookgrad import nn
from hookgrad.autograd.graph import register_multi_grad_hook, saved_tensors_hooks
from hookgrad.compile import TracedValueError
from hookgrad.func import functional_call
from tests.test_compile import Tiny, _arr


def _model():
    hg.manual_seed(0)
    return Tiny(), hg.randn(5, 3)


def _eager_grads(m, x, loss=lambda out: out.sum()):
    m.zero_grad()
    loss(m(x)).backward()
    return {k: _arr(p.grad) for k, p in m.named_parameters()}


def _func_grads(m, x, transform=lambda f: f):
    def f(params, x):
        return functional_call(m, params, (x,)).sum()
    g = transform(jax.grad(f))(hg.func.state(m), x._data)
    return {k: np.asarray(v) for k, v in g.items()}


def _close(a, b, rtol=1e-5, atol=1e-6):
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_allclose(a[k], b[k], rtol=rtol, atol=atol, err_msg=k)


# --------------------------------------------------------------------------- the call


def test_functional_call_substitutes_and_restores():
    m, x = _model()
    before = {k: _arr(v).copy() for k, v in m.named_parameters()}
    params = {k: jnp.zeros_like(v) for k, v in hg.func.state(m).items()}
    params["fc2.bias"] = jnp.array([1.0, 2.0])
    out = functional_call(m, params, (x._data,))
    assert isinstance(out, jax.Array)           # arrays in, arrays out
    np.testing.assert_allclose(np.asarray(out), np.tile([1.0, 2.0], (5, 1)))
    for k, v in m.named_parameters():            # the module is untouched
        np.testing.assert_array_equal(_arr(v), before[k])
        assert isinstance(v, nn.Parameter)
    # names left out keep the module's values; a tuple of dicts is merged
    out2 = functional_call(m, ({"fc2.bias": jnp.zeros(2)}, {"fc2.weight": jnp.zeros((2, 4))}),
                           x._data)
    np.testing.assert_allclose(np.asarray(out2), 0.0)


def test_functional_call_with_tensors_is_an_eager_call():
    m, x = _model()
    w = hg.zeros(2, 4, requires_grad=True)
    out = functional_call(m, {"fc2.weight": w}, (x,))
    assert isinstance(out, hg.Tensor) and out.grad_fn is not None
    out.sum().backward()                       # gradients reach the given Tensor
    assert w.grad is not None and m.fc2.weight.grad is None
    h = F.relu(m.fc1(x))
    np.testing.assert_allclose(_arr(w.grad), np.tile(_arr(h.sum(0)), (2, 1)), rtol=1e-5)


def test_functional_call_errors_match_pytorch():
    m, x = _model()
    state = hg.func.state(m)
    with pytest.raises(RuntimeError, match=r"Error\(s\) in reparametrizing for Tiny:\n\t"
                       r"Unexpected key\(s\): 'extra'\.\n\tMissing key\(s\): 'fc1.bias'"):
        functional_call(m, {**{k: v for k, v in state.items() if k != "fc1.bias"},
                            "extra": jnp.ones(1)}, (x._data,), strict=True)
    with pytest.raises(ValueError, match=r"\['fc1.bias'\] appeared in multiple dictionaries"):
        functional_call(m, ({"fc1.bias": state["fc1.bias"]}, {"fc1.bias": state["fc1.bias"]}),
                        (x._data,))
    with pytest.raises(ValueError, match="Expected parameter_and_buffer_dicts to be a dict"):
        functional_call(m, 42, (x._data,))
    with pytest.raises(ValueError, match="Expected all elements of parameter_and_buffer_dicts"):
        functional_call(m, [1, 2], (x._data,))
    tied = nn.Module()
    tied.a = nn.Linear(2, 2)
    tied.b = nn.Linear(2, 2)
    tied.b.weight = tied.a.weight
    tied.forward = lambda x: tied.b(tied.a(x))
    with pytest.raises(ValueError, match=r"functional_call got multiple values for keys "
                       r"\['a.weight', 'b.weight'\], which are tied"):
        functional_call(tied, {"a.weight": jnp.ones((2, 2)), "b.weight": jnp.zeros((2, 2))},
                        (jnp.ones((1, 2)),))
    # tie_weights: one value reaches both names; tie_weights=False: only the given one
    eye = jnp.eye(2)
    both = functional_call(tied, {"a.weight": eye, "a.bias": jnp.zeros(2),
                                  "b.bias": jnp.zeros(2)}, (jnp.ones((1, 2)),))
    np.testing.assert_allclose(np.asarray(both), [[1.0, 1.0]])
    one = functional_call(tied, {"a.weight": eye, "a.bias": jnp.zeros(2), "b.bias": jnp.zeros(2)},
                          (jnp.ones((1, 2)),), tie_weights=False)
    expect = np.ones((1, 2)) @ np.asarray(tied.a.weight._data).T
    np.testing.assert_allclose(np.asarray(one), expect, rtol=1e-6)


def test_errors_match_pytorch_differentially():
    torch = pytest.importorskip("torch")
    tm = torch.nn.Linear(3, 2)
    with pytest.raises(RuntimeError) as te:
        torch.func.functional_call(tm, {"weight": torch.ones(2, 3), "extra": torch.ones(1)},
                                   (torch.ones(1, 3),), strict=True)
    hm = nn.Linear(3, 2)
    with pytest.raises(RuntimeError) as he:
        functional_call(hm, {"weight": jnp.ones((2, 3)), "extra": jnp.ones(1)},
                        (jnp.ones((1, 3)),), strict=True)
    assert str(he.value) == str(te.value)


def test_inplace_buffer_writes_reach_the_callers_dict():
    class Count(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("n", hg.zeros(()))

        def forward(self, x):
            with hg.no_grad():
                self.n.add_(1)
            return x * 2

    m = Count()
    d = {"n": jnp.array(5.0)}
    functional_call(m, d, (jnp.ones(2),))
    assert float(d["n"]) == 6.0 and m.n.item() == 0.0


# --------------------------------------------------------------------------- JAX transforms


@pytest.mark.parametrize("transform", ["grad", "jit", "checkpoint"])
def test_gradients_equal_eager(transform):
    m, x = _model()
    wrap = {"grad": lambda f: f, "jit": jax.jit,
            "checkpoint": lambda f: f}[transform]
    if transform == "checkpoint":
        def f(params, x):
            return jax.checkpoint(lambda p: functional_call(m, p, (x,)).sum())(params)
        got = {k: np.asarray(v) for k, v in jax.grad(f)(hg.func.state(m), x._data).items()}
    else:
        got = _func_grads(m, x, wrap)
    _close(got, _eager_grads(m, x))


def test_gradients_equal_pytorch():
    torch = pytest.importorskip("torch")
    m, x = _model()
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    names = {"0.weight": "fc1.weight", "0.bias": "fc1.bias", "2.weight": "fc2.weight",
             "2.bias": "fc2.bias"}
    with torch.no_grad():
        for k, p in tm.named_parameters():
            p.copy_(torch.tensor(_arr(m.get_parameter(names[k]))))
    tm(torch.tensor(_arr(x))).sum().backward()
    got = _func_grads(m, x)
    for k, p in tm.named_parameters():
        np.testing.assert_allclose(got[names[k]], p.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_wrappers_grad_vjp_vmap():
    m, x = _model()
    params = hg.func.state(m)

    def loss(p, x):
        return functional_call(m, p, (x,)).sum()

    g1 = hg.func.grad(loss)(params, x._data)
    g2, v = hg.func.grad_and_value(loss)(params, x._data)
    _close({k: np.asarray(a) for k, a in g1.items()}, {k: np.asarray(a) for k, a in g2.items()})
    np.testing.assert_allclose(float(v), _arr(m(x).sum()), rtol=1e-5)
    out, pull = hg.func.vjp(lambda p: functional_call(m, p, (x._data,)), params)
    (gp,) = pull(jnp.ones_like(out))
    _close({k: np.asarray(a) for k, a in gp.items()}, {k: np.asarray(a) for k, a in g1.items()})
    per = hg.func.vmap(lambda xi: functional_call(m, params, (xi[None],))[0])(x._data)
    np.testing.assert_allclose(np.asarray(per), _arr(m(x)), rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------- hooks


def test_parameter_hook_registered_eagerly_fires_in_functional_mode():
    m, x = _model()
    calls = []

    def hook(g):
        calls.append(g.shape)
        return g * 3

    h = m.fc1.weight.register_hook(hook)
    e = _eager_grads(m, x)
    for wrap in (lambda f: f, jax.jit):
        _close(_func_grads(m, x, wrap), e)
    assert calls == [hg.Size([4, 3])] * 3
    h.remove()
    assert not _func_grads(m, x)["fc1.weight"].tolist() == e["fc1.weight"].tolist()
    assert len(calls) == 3
    # the Parameter is left as it was: eager hooks registered later still fire
    m.fc1.weight.register_hook(lambda g: g * 0)
    assert not _eager_grads(m, x)["fc1.weight"].any()


def test_hooks_registered_inside_the_call():
    m, x = _model()
    seen = {}

    def fwd(mod, args, out):
        out.register_hook(lambda g: g * 2)                 # tensor hook (identity vjp)
        out.grad_fn.register_prehook(lambda go: (go[0] - 0.25,))
        out.grad_fn.register_hook(lambda gi, go: seen.setdefault("post", len(gi)) and None)

    m.fc1.register_forward_hook(fwd)
    e = _eager_grads(m, x)
    eager_post = seen.pop("post")
    _close(_func_grads(m, x), e)
    assert seen["post"] == eager_post
    _close(_func_grads(m, x, jax.jit), e)


def test_module_backward_hooks_replace_grad_output_and_grad_input():
    m, x = _model()
    m.fc2.register_full_backward_pre_hook(lambda mod, go: (go[0] * 10,))
    m.fc2.register_full_backward_hook(lambda mod, gi, go: (gi[0].clamp(-0.5, 0.5),))
    m.fc1.register_full_backward_hook(lambda mod, gi, go: None)   # input needs no grad
    with pytest.warns(UserWarning, match="no inputs require gradients"):
        e = _eager_grads(m, x)
    with pytest.warns(UserWarning, match="no inputs require gradients"):
        got = _func_grads(m, x)
    _close(got, e)
    m.fc2.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="Backward hook returned an invalid number of "
                       "grad_input, got 2, but expected 1"):
        _func_grads(m, x)


def test_multi_grad_hooks():
    hg.manual_seed(0)

    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(3, 3)
            self.b = nn.Linear(3, 3)

        def forward(self, x):
            ya, yb = self.a(x), self.b(x)
            register_multi_grad_hook((ya, yb), lambda gs: seen.append(
                ("all", [None if g is None else round(g.sum().item(), 4) for g in gs])))
            register_multi_grad_hook((ya, yb), lambda g: seen.append(("any", g.shape)),
                                     mode="any")
            return (ya * 2 + yb).sum()

    m = Two()
    x = hg.randn(2, 3)
    seen = []
    m(x).backward()
    eager = list(seen)
    seen.clear()
    jax.grad(lambda p: functional_call(m, p, (x._data,)))(hg.func.state(m))
    assert sorted(map(str, seen)) == sorted(map(str, eager)) and len(seen) == 2


def test_saved_tensor_hooks_pack_in_forward_and_unpack_in_backward():
    m, x = _model()
    log = []

    def pack(t):
        log.append("pack")
        return (t.shape, t * 2)

    def unpack(p):
        log.append("unpack")
        return p[1] / 2

    m.zero_grad()
    with saved_tensors_hooks(pack, unpack):
        loss = m(x).sum()
    loss.backward()
    eager = {k: _arr(p.grad) for k, p in m.named_parameters()}
    eager_log = list(log)
    log.clear()

    def f(params):
        with saved_tensors_hooks(pack, unpack):
            return functional_call(m, params, (x._data,)).sum()
    got = jax.grad(f)(hg.func.state(m))
    _close({k: np.asarray(v) for k, v in got.items()}, eager)
    assert sorted(log) == sorted(eager_log) and "unpack" in log
    assert log.index("unpack") > max(i for i, e in enumerate(log) if e == "pack")

    def bad(params):
        with saved_tensors_hooks(lambda t: t, lambda p: 1.0):
            return functional_call(m, params, (x._data,)).sum()
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor"):
        jax.grad(bad)(hg.func.state(m))


def test_a_second_gradient_under_saved_tensor_hooks_lowers_no_program():
    # each op's backward under saved-tensor hooks is its vjp, jitted: traced and lowered
    # for the first call of a signature only, as eager backwards are
    m, x = _model()
    lowered = []

    def listen(event, duration_secs=0.0, **kw):
        if event.endswith("jaxpr_to_mlir_module_duration"):
            lowered.append(event)

    def f(params):
        with saved_tensors_hooks(lambda t: t * 1, lambda t: t):
            return functional_call(m, params, (x._data,)).sum()
    first = jax.grad(f)(hg.func.state(m))
    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        again = jax.grad(f)(hg.func.state(m))
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    assert lowered == []
    _close({k: np.asarray(v) for k, v in again.items()},
           {k: np.asarray(v) for k, v in first.items()})


def test_vmap_per_sample_gradients_with_a_clipping_hook():
    m, x = _model()
    y = hg.randn(5, 2)

    def clip(g):   # per-example gradient clipping on the first layer's output
        n = (g * g).sum().sqrt()
        return g * (0.1 / n).clamp(max=1.0)

    m.fc1.register_forward_hook(lambda mod, a, out: [out.register_hook(clip)] and None)

    def loss(params, xi, yi):
        out = functional_call(m, params, (xi[None],))
        return jnp.sum((out[0] - yi) ** 2)

    per = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(hg.func.state(m), x._data, y._data)
    per_jit = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))(
        hg.func.state(m), x._data, y._data)
    for i in range(5):
        m.zero_grad()
        ((m(x[i:i + 1])[0] - y[i]) ** 2).sum().backward()
        for k, p in m.named_parameters():
            np.testing.assert_allclose(np.asarray(per[k][i]), _arr(p.grad), rtol=1e-5,
                                       atol=1e-6, err_msg=f"{k}[{i}]")
            np.testing.assert_allclose(np.asarray(per_jit[k][i]), _arr(p.grad), rtol=1e-5,
                                       atol=1e-6)


def test_detach_and_no_grad_stop_gradients():
    class Stop(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(hg.tensor([2.0, 3.0]))

        def forward(self, x):
            with hg.no_grad():
                c = self.w * 10
            return (self.w * x + self.w.detach() * c + self.w.data).sum()

    m = Stop()
    m(hg.ones(2)).backward()
    g = jax.grad(lambda p: functional_call(m, p, (jnp.ones(2),)))(hg.func.state(m))
    np.testing.assert_allclose(np.asarray(g["w"]), _arr(m.w.grad))
    np.testing.assert_allclose(np.asarray(g["w"]), [1.0, 1.0])


def test_inplace_on_a_view_is_checked_as_eagerly():
    # found by tests/fuzz (functional mode): a write into one of split's views raised
    # eagerly and in PyTorch but not under jax.grad
    class Split(nn.Module):
        def __init__(self, view):
            super().__init__()
            self.w = nn.Parameter(hg.tensor([1.5, -0.5]))
            self.view = view

        def forward(self):
            y = self.w * 1
            v = y.split(1)[0] if self.view == "split" else y[0]
            v.clamp_(-1, 1)
            return (y * y).sum()

    m = Split("split")
    msg = "Output 0 of Split is a view and is being modified inplace"
    with pytest.raises(RuntimeError, match=msg):
        m()
    with pytest.raises(RuntimeError, match=msg):
        jax.grad(lambda p: functional_call(m, p, ()))(hg.func.state(m))
    m = Split("select")  # a single view may be written: the write reaches its base
    g = jax.grad(lambda p: functional_call(m, p, ()))(hg.func.state(m))
    m().backward()
    np.testing.assert_allclose(np.asarray(g["w"]), _arr(m.w.grad))
    np.testing.assert_allclose(np.asarray(g["w"]), [0.0, -1.0])


def test_a_hooked_module_output_is_not_written_in_place_as_eagerly():
    # found by tests/fuzz (functional mode, seed 96): outputs under full backward hooks are
    # views made inside a custom Function eagerly and in PyTorch; under jax.grad too
    class Hooked(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 2)
            self.lin.register_full_backward_hook(lambda mod, gi, go: None)

        def forward(self, x):
            y = self.lin(x)
            y.add_(1)
            return y.sum()

    m, x = Hooked(), hg.ones(2, 3)
    msg = "Output 0 of BackwardHookFunction is a view and is being modified inplace"
    with pytest.raises(RuntimeError, match=msg):
        m(x)
    with pytest.raises(RuntimeError, match=msg):
        jax.grad(lambda p: functional_call(m, p, (x,)))(hg.func.state(m))


def test_hooks_off_the_path_to_the_differentiated_inputs_do_not_run():
    # found by tests/fuzz (functional mode, seed 203): under jax.grad of one parameter, a
    # module and a parameter the loss reaches by other ways took JAX's backward through
    # the hooks' identities; PyTorch's engine never reaches them
    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 2)
            self.a = nn.Parameter(hg.tensor([1.0, -2.0]))
            self.x = hg.ones(3)

        def forward(self):
            return self.lin(self.x).sum() + (self.a * self.a).sum()

    m, seen = Two(), []
    m.lin.register_full_backward_pre_hook(lambda mod, g: seen.append("pre"))
    m.lin.weight.register_hook(lambda g: seen.append("weight"))
    state = hg.func.state(m)
    g = jax.grad(lambda p: functional_call(m, ({**state, **p}), ()))({"a": state["a"]})
    np.testing.assert_allclose(np.asarray(g["a"]), [2.0, -4.0])
    assert seen == []
    jax.grad(lambda p: functional_call(m, ({**state, **p}), ()))(state)
    assert seen == ["pre", "weight"]


def test_backward_inside_functional_mode_and_traced_reads_raise():
    class Bad(nn.Module):
        def __init__(self, what):
            super().__init__()
            self.w = nn.Parameter(hg.ones(2))
            self.what = what

        def forward(self, x):
            y = (self.w * x).sum()
            if self.what == "backward":
                y.backward()
            else:
                y.item()
            return y

    with pytest.raises(RuntimeError, match="differentiate with jax.grad"):
        jax.grad(lambda p: functional_call(Bad("backward"), p, (jnp.ones(2),)))(
            {"w": jnp.ones(2)})
    with pytest.raises(TracedValueError, match="host_hook"):
        jax.jit(lambda p: functional_call(Bad("item"), p, (jnp.ones(2),)))({"w": jnp.ones(2)})


def test_host_hook_in_functional_mode_runs_with_values_each_call():
    m, x = _model()
    seen = []
    m.fc1.register_forward_hook(hg.compile.host_hook(
        lambda mod, a, out: seen.append(round(out.sum().item(), 4))))
    ref = round(m.fc1(x).sum().item(), 4)
    seen.clear()
    f = jax.jit(lambda p, x: functional_call(m, p, (x,)).sum())
    f(hg.func.state(m), x._data)
    f(hg.func.state(m), x._data)
    assert seen == [ref, ref]


# --------------------------------------------------------------------------- state


def test_state_load_state_and_an_optax_loop():
    m, x = _model()
    y = hg.randn(5, 2)
    params = hg.func.state(m)
    tx = optax.sgd(0.1)
    opt_state = tx.init(params)

    @jax.jit
    def step(params, opt_state):
        loss, g = jax.value_and_grad(
            lambda p: jnp.mean((functional_call(m, p, (x._data,)) - y._data) ** 2))(params)
        updates, opt_state = tx.update(g, opt_state)
        return optax.apply_updates(params, updates), opt_state, loss

    losses = []
    for _ in range(5):
        params, opt_state, loss = step(params, opt_state)
        losses.append(float(loss))
    assert losses[-1] < losses[0]
    hg.func.load_state(m, params)
    np.testing.assert_allclose(_arr(F.mse_loss(m(x), y)),
                               float(jnp.mean((functional_call(m, params, (x._data,))
                                               - y._data) ** 2)), rtol=1e-5)
    assert m.fc1.weight._version == 1
    with pytest.raises(RuntimeError, match="Unexpected key"):
        hg.func.load_state(m, {"nope": jnp.ones(1)})


def test_rng_key_feeds_random_ops_under_jit():
    class Drop(nn.Module):
        def forward(self, x):
            return F.dropout(x, 0.5, training=True)

    m = Drop()

    @jax.jit
    def f(x, key):
        with hg.func.rng_key(key):
            return functional_call(m, {}, (x,))

    a = np.asarray(f(jnp.ones(32), jax.random.key(1)))
    b = np.asarray(f(jnp.ones(32), jax.random.key(2)))
    again = np.asarray(f(jnp.ones(32), jax.random.key(1)))
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(a, again)
    assert set(np.unique(a)) <= {0.0, 2.0}
    # without rng_key no tracer is left in the global state
    jax.jit(lambda x: functional_call(m, {}, (x,)))(jnp.ones(4))
    assert not isinstance(hg.random._state["key"], jax.core.Tracer)


def test_hook_outside_a_begun_backward_gets_a_graph_task_of_its_own():
    # a hook that JAX's backward runs outside functional_call's begin/end marks (here the
    # functional mode entered directly) sees a running graph task while it runs, and none
    # is left running afterwards
    from hookgrad import _mode
    seen = []

    def f(a):
        with _mode.functional_mode():
            t = hg.Tensor._wrap(a)
            t._requires_grad = True
            t.register_hook(lambda g: seen.append(hg._C._current_graph_task_id()))
            return (t * t).sum()._data

    g = jax.grad(f)(jnp.ones(2))
    np.testing.assert_allclose(np.asarray(g), [2.0, 2.0])
    assert len(seen) == 1 and seen[0] >= 0
    assert hg._C._current_graph_task_id() == -1
