"""``hookgrad.compile``: an eager step (forward, backward, optimizer) as one XLA program."""
import functools

import warnings

import jax
import numpy as np
import pytest

import hookgrad as hg
import hookgrad.nn.functional as F
from hookgrad import nn
from hookgrad.compile import TracedValueError


def _arr(t):
    return np.asarray(t._data)


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def _pair(opt_cls=None, **opt_kw):
    """Two identical models (and optimizers): one for eager, one for compiled."""
    out = []
    for _ in range(2):
        hg.manual_seed(0)
        m = Tiny()
        out.append((m, opt_cls(m.parameters(), **opt_kw) if opt_cls else None))
    return out


def _mse_step(x, y):
    """An eager training step of a model and its optimizer on one batch."""
    def step(m, opt):
        loss = F.mse_loss(m(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return step


# --------------------------------------------------------------------------- equivalence


def test_n_compiled_steps_equal_n_eager_steps_adamw():
    (me, oe), (mc, oc) = _pair(hg.optim.AdamW, lr=0.05, weight_decay=0.1)
    step = _mse_step(hg.randn(6, 3), hg.randn(6, 2))
    compiled = hg.compile(lambda: step(mc, oc))
    losses_e = [step(me, oe).item() for _ in range(4)]
    losses_c = [compiled().item() for _ in range(4)]
    np.testing.assert_allclose(losses_c, losses_e, rtol=1e-5)
    assert losses_c[-1] < losses_c[0]
    # the first step creates the optimizer state: it runs by the program of the next steps
    assert compiled.trace_count == 1
    for (k, pe), (_, pc) in zip(me.named_parameters(), mc.named_parameters()):
        np.testing.assert_allclose(_arr(pc), _arr(pe), rtol=1e-5, atol=1e-7, err_msg=k)
        assert pc._version == pe._version
        assert pc.grad is None
    se, sc = oe.state_dict()["state"], oc.state_dict()["state"]
    assert se.keys() == sc.keys()
    for i in se:
        for name in se[i]:
            np.testing.assert_allclose(_arr(sc[i][name]), _arr(se[i][name]), rtol=1e-5,
                                       atol=1e-8, err_msg=f"{i}.{name}")


def test_grad_accumulates_across_calls_and_none_transitions():
    (me, _), (mc, _) = _pair()
    x = hg.randn(5, 3)

    @hg.compile
    def step(x):
        mc(x).sum().backward()   # no zero_grad: .grad accumulates

    for _ in range(3):
        me(x).sum().backward()
        step(x)
    for pe, pc in zip(me.parameters(), mc.parameters()):
        np.testing.assert_allclose(_arr(pc.grad), _arr(pe.grad), rtol=1e-6)
    grad_obj = mc.fc1.weight.grad
    step(x)   # .grad present: updated in place, same Python object (as the engine does)
    assert mc.fc1.weight.grad is grad_obj
    assert step.trace_count == 2   # None -> Tensor, then Tensor -> Tensor

    @hg.compile
    def clear():
        mc.zero_grad()

    clear()
    assert all(p.grad is None for p in mc.parameters())


def test_version_counters_and_inplace_buffers():
    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("calls", hg.zeros(()))
            self.w = nn.Parameter(hg.ones(2))

        def forward(self, x):
            with hg.no_grad():
                self.calls.add_(1)
            return (self.w * x).sum()

    m = Counter()

    @hg.compile
    def step(x):
        return m(x)

    for i in range(3):
        step(hg.ones(2))
    assert m.calls.item() == 3.0
    assert m.calls._version == 3


def test_closed_over_state_is_found_through_helpers_methods_and_partials():
    (me, oe), (mc, oc) = _pair(hg.optim.SGD, lr=0.1)
    x = hg.randn(4, 3)

    def loss_of(m):   # a helper the step calls: its closure is followed too
        return m(x).pow(2).mean()

    class Trainer:
        def __init__(self, model, opt):
            self.model, self.opt = model, opt

        def step(self, scale):
            loss = loss_of(self.model) * scale
            loss.backward()
            self.opt.step()
            self.opt.zero_grad()
            return loss

    te, tc = Trainer(me, oe), Trainer(mc, oc)
    compiled = hg.compile(tc.step)             # bound method: self is walked
    partial = hg.compile(functools.partial(Trainer.step, tc))
    for _ in range(2):
        te.step(1.0)
        compiled(1.0)
    te.step(1.0)
    partial(1.0)
    for pe, pc in zip(me.parameters(), mc.parameters()):
        np.testing.assert_allclose(_arr(pc), _arr(pe), rtol=1e-5, atol=1e-7)


def _scaled(t):   # a global helper ``_helper_step`` calls; the test rebinds it
    return t


def _helper_step(m, x, y):
    return _scaled(F.mse_loss(m(x), y)) + abs(x).sum() * 0.0


@pytest.mark.parametrize("rebind", ["helper", "helper_same_code", "builtin"])
def test_a_function_the_step_calls_rebound_between_calls_runs_as_eagerly(rebind):
    # the program must follow the code the step calls, as Dynamo guards a frame's
    # functions: a helper or a shadowed builtin rebound after tracing traces anew, while
    # a helper defined again with the same code (a notebook cell re-run) finds its program
    global _scaled
    (me, _), (mc, _) = _pair()
    compiled = hg.compile(lambda x, y: _helper_step(mc, x, y))
    original = _scaled
    try:
        for i in range(6):
            x, y = hg.randn(4, 3), hg.randn(4, 2)
            if i == 3 and rebind == "helper":
                def _scaled(t):
                    return t * 2.0
            elif i == 3 and rebind == "helper_same_code":
                def _scaled(t):   # noqa: F811 - the original's code, defined again
                    return t
                _scaled.__code__ = original.__code__
            elif i == 3:
                globals()["abs"] = lambda t: t * 2.0
            want, got = _helper_step(me, x, y), compiled(x, y)
            np.testing.assert_allclose(_arr(got), _arr(want), rtol=1e-6)
    finally:
        _scaled = original
        globals().pop("abs", None)
    assert compiled.trace_count == (1 if rebind == "helper_same_code" else 2)


def test_state_passed_as_default_arguments_is_found():
    (me, oe), (mc, oc) = _pair(hg.optim.SGD, lr=0.1)
    x = hg.randn(4, 3)

    def step(x, model, opt, *, scale=1.0):
        loss = model(x).pow(2).mean() * scale
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    def positional(x, model=mc, opt=oc):
        return step(x, model, opt)

    def keyword(x, *, model=mc, opt=oc):
        return step(x, model, opt)

    for compiled in (hg.compile(positional), hg.compile(keyword)):
        for _ in range(2):
            want = step(x, me, oe).item()
            assert compiled(x).item() == pytest.approx(want, rel=1e-5)
    for pe, pc in zip(me.parameters(), mc.parameters()):
        np.testing.assert_allclose(_arr(pc), _arr(pe), rtol=1e-5, atol=1e-7)


def test_module_and_plain_tensor_steps():
    hg.manual_seed(0)
    m = Tiny()
    x = hg.randn(2, 3)
    compiled = hg.compile(m)
    np.testing.assert_allclose(_arr(compiled(x)), _arr(m(x)), rtol=1e-6)
    w = hg.tensor([1.0, 2.0], requires_grad=True)

    @hg.compile
    def sgd(lr):
        (w * w).sum().backward()
        with hg.no_grad():
            w.sub_(w.grad * lr)
        w.grad = None

    sgd(0.25)
    sgd(0.25)   # a new Python float is a new static value: one more trace
    np.testing.assert_allclose(_arr(w), [0.25, 0.5])
    assert w._version == 2 and w.grad is None


# --------------------------------------------------------------------------- recompilation


def test_recompiles_on_shapes_hooks_mode_and_grad_presence():
    hg.manual_seed(0)
    m = Tiny()

    @hg.compile
    def step(x):
        out = m(x).sum()
        out.backward()
        return out

    def run(x):
        m.zero_grad()
        return step(x)

    run(hg.randn(2, 3))
    run(hg.randn(2, 3))
    assert step.trace_count == 1
    run(hg.randn(5, 3))                         # new shape
    assert step.trace_count == 2
    h = m.fc1.weight.register_hook(lambda g: g * 0)
    run(hg.randn(5, 3))                         # a hook added
    assert step.trace_count == 3
    assert np.all(_arr(m.fc1.weight.grad) == 0)
    h.remove()
    run(hg.randn(5, 3))                         # removed: the earlier program again
    assert step.trace_count == 3
    assert np.any(_arr(m.fc1.weight.grad) != 0)
    fh = m.fc2.register_forward_hook(lambda mod, a, out: out * 2)
    run(hg.randn(5, 3))                         # a module hook added
    assert step.trace_count == 4
    fh.remove()
    m.eval()
    run(hg.randn(5, 3))                         # train() / eval()
    assert step.trace_count == 5
    m.train()
    step(hg.randn(5, 3))                        # .grad present this time
    assert step.trace_count == 6
    with hg.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        run(hg.randn(5, 3))                     # saved-tensor hooks active
    assert step.trace_count == 7


def test_new_saved_tensor_hooks_around_a_call_get_their_own_program():
    """Each pair is new (and the last one freed, so it may reuse its address): the program
    traced with the last pair must not run with this one."""
    hg.manual_seed(0)
    m = Tiny()
    x = hg.randn(4, 3)
    step = hg.compile(lambda: m(x).pow(2).sum().backward())

    def unpack(t):
        return t

    def scaled(scale):
        return hg.autograd.graph.saved_tensors_hooks(lambda t: t * scale, unpack)

    for scale in (1.0, 3.0, 5.0):
        m.zero_grad()
        with scaled(scale):
            step()
        got = _arr(m.fc1.weight.grad)
        m.zero_grad()
        with scaled(scale):
            m(x).pow(2).sum().backward()
        np.testing.assert_allclose(got, _arr(m.fc1.weight.grad), rtol=1e-5, err_msg=scale)
    assert step.trace_count == 3


def test_lower_jaxpr_and_cost_analysis():
    w = hg.ones(4, requires_grad=True)

    @hg.compile
    def step(x):
        (w * x).sin().sum().backward()

    x = hg.ones(4)
    text = step.lower(x).as_text()
    assert "stablehlo" in text or "mhlo" in text
    assert "mul" in str(step.jaxpr(x))
    cost = step.cost_analysis(x)
    cost = cost[0] if isinstance(cost, list) else cost
    assert cost.get("flops", 0) > 0
    assert step.trace_count == 1 and w.grad is None   # inspecting does not run the step


# --------------------------------------------------------------------------- hooks


def test_host_hook_fires_every_call_with_concrete_values():
    (me, _), (mc, _) = _pair()
    seen_e, seen_c = [], []

    def make(seen):
        @hg.compile.host_hook
        def log(grad):
            assert not isinstance(grad._data, jax.core.Tracer)
            seen.append(round(grad.abs().sum().item(), 5))
        return log

    me.fc1.weight.register_hook(make(seen_e))
    mc.fc1.weight.register_hook(make(seen_c))
    mc.fc2.register_forward_hook(hg.compile.host_hook(
        lambda mod, args, out: seen_c.append(("out", out.shape[0]))))

    @hg.compile
    def step(x):
        mc.zero_grad()
        mc(x).sum().backward()

    for i in range(3):
        x = hg.randn(2, 3)
        me.zero_grad()
        me(x).sum().backward()
        step(x)
    assert step.trace_count == 2   # .grad absent on the first call only
    assert [v for v in seen_c if not isinstance(v, tuple)] == seen_e
    assert seen_c.count(("out", 2)) == 3
    assert len(set(seen_e)) == 3   # fresh values each call


def test_host_hook_must_return_none():
    hook = hg.compile.host_hook(lambda g: g * 2)
    with pytest.raises(RuntimeError, match="must return None"):
        hook(hg.ones(2))
    assert hg.compile.is_host_hook(hook) and not hg.compile.is_host_hook(print)


@pytest.mark.parametrize("read", [lambda g: g.sum().item(), lambda g: float(g.sum()),
                                  lambda g: g.tolist(), lambda g: bool(g.sum() > 0),
                                  lambda g: print(g), lambda g: g.numpy()])
def test_reading_a_traced_value_in_the_step_raises_a_clear_error_under_fullgraph(read):
    w = hg.ones(3, requires_grad=True)

    @hg.compile(fullgraph=True)
    def step():
        y = w * 2
        read(y.detach())
        y.sum().backward()

    with pytest.raises(TracedValueError, match=r"hookgrad\.compile\.host_hook"):
        step()
    # nothing half-updated: the tensor holds its value again and eager still works
    assert w.grad is None and not isinstance(w._data, jax.core.Tracer)
    (w * 2).sum().backward()
    np.testing.assert_allclose(_arr(w.grad), [2.0, 2.0, 2.0])


def _times_ten(p):
    p.grad.mul_(10)


def test_hooks_that_compute_are_traced_into_the_program():
    (me, _), (mc, _) = _pair()
    for m in (me, mc):
        m.fc1.weight.register_hook(lambda g: g.clamp(-0.1, 0.1))
        m.fc2.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 3,))
        m.fc1.register_forward_hook(
            lambda mod, a, out: [out.grad_fn.register_prehook(lambda go: (go[0] * 0.5,))]
            and None)
        m.fc2.bias.register_post_accumulate_grad_hook(_times_ten)
    x = hg.randn(3, 3)

    @hg.compile
    def step():
        mc(x).sum().backward()

    me(x).sum().backward()
    step()
    for (k, pe), (_, pc) in zip(me.named_parameters(), mc.named_parameters()):
        np.testing.assert_allclose(_arr(pc.grad), _arr(pe.grad), rtol=1e-5, err_msg=k)


def test_autograd_function_inside_a_compiled_step():
    class Cube(hg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2 + 1   # deliberately not the true derivative

    w = hg.tensor([1.0, -2.0], requires_grad=True)

    @hg.compile
    def step():
        Cube.apply(w).sum().backward()

    step()
    np.testing.assert_allclose(_arr(w.grad), [4.0, 13.0])


# --------------------------------------------------------------------------- randomness


def test_dropout_masks_are_fresh_each_call_and_match_eager():
    def masks(compiled):
        hg.manual_seed(123)
        x = hg.ones(64)

        def f(x):
            return F.dropout(x, p=0.5, training=True)
        fn = hg.compile(f) if compiled else f
        out = [_arr(fn(x)) for _ in range(3)]
        return out, np.asarray(hg.random.get_rng_state())

    (eager, key_e), (comp, key_c) = masks(False), masks(True)
    assert not np.array_equal(comp[0], comp[1])
    for e, c in zip(eager, comp):
        np.testing.assert_array_equal(c, e)
    np.testing.assert_array_equal(key_c, key_e)   # the global key advanced as eagerly


def test_donation_keeps_aliases_readable():
    (me, oe), (mc, oc) = _pair(hg.optim.SGD, lr=0.5)
    x = hg.randn(4, 3)

    def step(m, opt):
        m(x).sum().backward()
        opt.step()
        opt.zero_grad()

    compiled = hg.compile(lambda: step(mc, oc), donate=True)
    for _ in range(2):
        step(me, oe)
        compiled()
    alias = mc.fc1.weight.detach()      # holds the current buffer: this call cannot donate it
    before = _arr(alias).copy()
    step(me, oe)
    compiled()
    np.testing.assert_array_equal(_arr(alias), before)
    entry = compiled._cache[compiled._plan((), {}).key]
    assert entry.donated and entry.exe_plain is not None  # the aliased call: undonated
    for pe, pc in zip(me.parameters(), mc.parameters()):
        np.testing.assert_allclose(_arr(pc), _arr(pe), rtol=1e-5, atol=1e-7)


def test_exception_in_step_is_raised_after_what_eager_did_before_it():
    def run(compiled):
        hg.manual_seed(0)
        m = Tiny()
        opt = hg.optim.SGD(m.parameters(), lr=0.1)

        def step(x):
            m(x).sum().backward()
            opt.step()
            raise ValueError("boom")

        step = hg.compile(step) if compiled else step
        with warnings.catch_warnings():
            warnings.simplefilter("error")   # raised as eagerly: no "runs eagerly" warning
            with pytest.raises(ValueError, match="boom"):
                step(hg.ones(2, 3))
        return m, opt

    (me, _), (mc, opt) = run(False), run(True)
    for pe, pc in zip(me.parameters(), mc.parameters()):
        np.testing.assert_array_equal(_arr(pc), _arr(pe))
        np.testing.assert_array_equal(_arr(pc.grad), _arr(pe.grad))
        assert not isinstance(pc._data, jax.core.Tracer)
    mc(hg.randn(2, 3)).sum().backward()   # eager still works on the state left
    opt.step()


def test_nested_compiled_functions_inline():
    w = hg.ones(2, requires_grad=True)
    inner = hg.compile(lambda x: (w * x).sum())

    @hg.compile
    def outer(x):
        inner(x).backward()

    outer(hg.ones(2))
    assert inner.trace_count == 0 and outer.trace_count == 1
    np.testing.assert_allclose(_arr(w.grad), [1.0, 1.0])


# --------------------------------------------------------------------------- the cached walk
# The state a step closes over is found by a walk that later calls reuse while nothing it
# saw has changed; every change below must still reach the program.


def _sgd_step(models, opt):
    def step(x):
        loss = sum(m(x).sum() for m in models)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return step


def _lifted(step, x, module):
    """Whether ``module``'s parameters are inputs of the program: a compiled step updates
    them (and the eager reference, rerun from the same values, agrees)."""
    before = [_arr(p).copy() for p in module.parameters()]
    step(x)
    return any(np.any(_arr(p) != b) for p, b in zip(module.parameters(), before))


def test_the_walk_is_reused_until_something_it_saw_changes(monkeypatch):
    from hookgrad._compile import state as _compile_state
    hg.manual_seed(0)
    m = Tiny()
    opt = hg.optim.SGD(m.parameters(), lr=0.1)
    step = hg.compile(_sgd_step([m], opt))
    x = hg.randn(2, 3)
    step(x)
    step(x)
    traces = step.trace_count    # (the optimizer's state appears on the first call)
    walks = []
    real = _compile_state._State.walk
    monkeypatch.setattr(_compile_state._State, "walk",
                        lambda self, *a, **k: walks.append(1) or real(self, *a, **k))
    for _ in range(3):
        step(x)
    assert walks == []                    # three calls, no walk
    opt.param_groups[0]["lr"] = 0.05      # a hyper-parameter is read per call: no walk
    step(x)
    assert walks == [] and step.trace_count == traces
    m.eval()                              # an attribute of a Module rebound: walked again
    step(x)
    assert walks and step.trace_count == traces + 1


@pytest.mark.parametrize("change", ["setattr", "modules_dict", "container", "holder",
                                    "param_group"])
def test_state_added_after_the_first_call_is_lifted(change):
    hg.manual_seed(0)
    m, new = Tiny(), Tiny()
    models = [m]
    holder = type("Trainer", (), {})()
    holder.model = m
    opt = hg.optim.SGD(m.parameters(), lr=0.1)
    if change == "holder":
        def step(x):
            loss = holder.model(x).sum()
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss
    else:
        step = _sgd_step(models, opt)
    step = hg.compile(step)
    x = hg.randn(2, 3)
    step(x)
    step(x)
    if change == "setattr":
        m.fc2 = new.fc2
        opt.add_param_group({"params": list(new.fc2.parameters())})
        target = new.fc2
    elif change == "modules_dict":   # module surgery through the private dict
        m._modules["fc2"] = new.fc2
        opt.add_param_group({"params": list(new.fc2.parameters())})
        target = new.fc2
    elif change == "container":
        models.append(new)
        opt.add_param_group({"params": list(new.parameters())})
        target = new
    elif change == "holder":
        holder.model = new
        opt.add_param_group({"params": list(new.parameters())})
        target = new
    else:
        opt.add_param_group({"params": list(new.parameters())})
        models.append(new)
        target = new
    assert _lifted(step, x, target)


def test_hooks_changed_behind_the_handles_back_reach_the_program():
    hg.manual_seed(0)
    m = Tiny()
    seen = []

    @hg.compile
    def step(x):
        out = m(x)
        out.sum().backward()
        return out

    x = hg.randn(2, 3)
    m.fc1.register_forward_hook(lambda mod, a, out: out * 0)
    assert np.all(_arr(step(x)) == _arr(m.fc2.bias)[None])   # fc1's output zeroed
    step(x)
    m.fc1._forward_hooks.clear()                 # PyTorch code does this
    assert not np.all(_arr(step(x)) == _arr(m.fc2.bias)[None])
    from collections import OrderedDict
    m.fc1._forward_hooks = OrderedDict()         # a plain dict: compared item by item
    step(x)
    m.fc1._forward_hooks[10 ** 9] = lambda mod, a, out: out * 0
    assert np.all(_arr(step(x)) == _arr(m.fc2.bias)[None])
    del m.fc1._forward_hooks[10 ** 9]
    m.fc1.bias.register_hook(lambda g: seen.append(1))   # a tensor hook, found per call
    step(x)
    assert seen == [1]
    handle = nn.modules.module.register_module_forward_hook(lambda mod, a, out: out * 0)
    try:
        assert np.all(_arr(step(x)) == 0)        # a global hook
    finally:
        handle.remove()
    assert not np.all(_arr(step(x)) == 0)


def test_eager_and_compiled_steps_share_one_optimizer():
    # the compiled step reuses its flattening of the optimizer's state while the state
    # objects are the ones it wrote: an eager step in between replaces them
    (me, oe), (mc, oc) = _pair(hg.optim.Adam, lr=0.05)
    step = _mse_step(hg.randn(6, 3), hg.randn(6, 2))
    compiled = hg.compile(lambda: step(mc, oc))
    for i in range(6):
        step(me, oe)
        compiled() if i % 3 else step(mc, oc)
    for (k, pe), (_, pc) in zip(me.named_parameters(), mc.named_parameters()):
        np.testing.assert_allclose(_arr(pc), _arr(pe), rtol=1e-5, atol=1e-7, err_msg=k)


@pytest.mark.parametrize("change", ["setitem", "delitem", "pop", "popitem", "clear", "update",
                                    "setdefault", "ior", "move_to_end"])
def test_module_dicts_count_their_changes(change):
    from hookgrad import _watch
    m = Tiny()
    d = m._forward_hooks
    d[1] = d[2] = print
    before = _watch.epoch()
    {"setitem": lambda: d.__setitem__(3, print), "delitem": lambda: d.__delitem__(1),
     "pop": lambda: d.pop(1), "popitem": d.popitem, "clear": d.clear,
     "update": lambda: d.update({3: print}), "setdefault": lambda: d.setdefault(3, print),
     "ior": lambda: d.__ior__({3: print}), "move_to_end": lambda: d.move_to_end(1)}[change]()
    assert _watch.epoch() > before
    before = _watch.epoch()
    m.training = False                           # any attribute set through the Module
    assert _watch.epoch() > before


# --------------------------------------------------------------------------- re-running
# A call re-runs the last call's program on what it wrote after a few checks (see
# hookgrad._compile.replay); whatever changes between calls must still reach the program.


def _acc_node(p):
    return p.view_as(p).grad_fn.next_functions[0][0]


def _zero_state(m, opt):
    p = m.fc1.weight
    opt.state[p] = {"step": hg.tensor(3.0), "exp_avg": hg.zeros_like(p),
                    "exp_avg_sq": hg.zeros_like(p)}


def _halve_grad(p):
    p.grad.mul_(0.5)


def _with_no_grad(fn):
    with hg.no_grad():
        fn()


_CHANGES = {
    "lr": lambda m, opt: opt.param_groups[0].__setitem__("lr", 0.02),
    "betas": lambda m, opt: opt.param_groups[0].__setitem__("betas", (0.5, 0.9)),
    "amsgrad": lambda m, opt: opt.param_groups[0].__setitem__("amsgrad", True),
    "tensor_hook": lambda m, opt: m.fc1.weight.register_hook(lambda g: g * 0.5),
    "post_accumulate_grad_hook": lambda m, opt: m.fc1.weight.register_post_accumulate_grad_hook(
        _halve_grad),
    "accumulate_grad_prehook": lambda m, opt: _acc_node(m.fc2.bias).register_prehook(
        lambda go: (go[0] * 3,)),
    "requires_grad": lambda m, opt: m.fc1.bias.requires_grad_(False),
    "data": lambda m, opt: setattr(m.fc2.weight, "data", m.fc2.weight.data * 0.5),
    "in_place": lambda m, opt: _with_no_grad(lambda: m.fc1.bias.add_(1.0)),
    "grad": lambda m, opt: setattr(m.fc1.weight, "grad", hg.ones_like(m.fc1.weight)),
    "state_read": lambda m, opt: opt.state[m.fc1.weight]["exp_avg"].sum(),
    "state_write": _zero_state,
}


@pytest.mark.parametrize("change", sorted(_CHANGES))
def test_a_change_between_calls_reaches_the_next_call(change):
    (me, oe), (mc, oc) = _pair(hg.optim.Adam, lr=0.05)
    xs, y = [hg.randn(6, 3) for _ in range(6)], hg.randn(6, 2)

    def step(m, opt, x):
        loss = F.mse_loss(m(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    compiled = hg.compile(lambda x: step(mc, oc, x))
    for i, x in enumerate(xs):
        if i == 3:   # the calls before re-ran their program: the change comes in between
            _CHANGES[change](me, oe)
            _CHANGES[change](mc, oc)
        np.testing.assert_allclose(_arr(compiled(x)), _arr(step(me, oe, x)), rtol=1e-5)
        for (k, pe), (_, pc) in zip(me.named_parameters(), mc.named_parameters()):
            np.testing.assert_allclose(_arr(pc), _arr(pe), rtol=1e-5, atol=1e-7,
                                       err_msg=f"{k} after call {i}")


def test_a_training_loop_reruns_its_program_without_planning_it_again(monkeypatch):
    from hookgrad.compile import CompiledFunction
    hg.manual_seed(0)
    m = Tiny()
    opt = hg.optim.AdamW(m.parameters(), lr=0.01)
    step = hg.compile(_sgd_step([m], opt))
    for _ in range(3):   # the first call creates the state and runs the steady program
        step(hg.randn(2, 3))
    plans = []
    real = CompiledFunction._plan
    monkeypatch.setattr(CompiledFunction, "_plan",
                        lambda self, a, k: plans.append(1) or real(self, a, k))
    for i in range(4):   # a new batch each call
        step(hg.randn(2, 3))
        opt.param_groups[0]["lr"] = 0.01 / (i + 2)   # an LR schedule
    assert plans == [] and step.trace_count == 1
    m.fc1.weight.register_hook(lambda g: g)          # what the program was keyed on
    step(hg.randn(2, 3))
    assert plans == [1] and step.trace_count == 2
    for _ in range(3):
        step(hg.randn(2, 3))
    assert len(plans) <= 2                           # re-runs the new program


def test_arguments_are_checked_on_every_call():
    hg.manual_seed(0)
    m = Tiny()

    def f(a, b, scale=1.0):
        return (m(a) * b.sum() * scale).sum()

    compiled = hg.compile(f)
    x, y = hg.randn(2, 3), hg.randn(4, 3)
    calls = [(x, y), (x, y), (y, x), (x, x), (x, m.fc1.weight), (x, y), (x, y, 2.0),
             (x, y, 2.0), (x, y, 3), (x, y.half()), (x[:1], y), (x, y)]
    for args in calls:
        np.testing.assert_allclose(_arr(compiled(*args)), _arr(f(*args)), rtol=1e-5,
                                   err_msg=str([getattr(a, "shape", a) for a in args]))


def test_arguments_written_in_place_are_told_apart_from_state_and_each_other():
    def make():
        w = hg.ones(4, 3)         # state the step closes over

        def f(a, b):
            a.add_(1.0)
            b.mul_(2.0)
            return (w * 3.0).sum() + a.sum() + b.sum()
        return f, w

    (f, w_eager), (compiled, w) = make(), make()
    compiled = hg.compile(compiled)
    for args in ["xy", "xy", "xx", "xy", "xw", "xy", "xw"]:   # an alias, a state Tensor
        eager = {"x": hg.ones(4, 3), "y": hg.ones(4, 3) * 2, "w": w_eager}
        comp = {"x": hg.ones(4, 3), "y": hg.ones(4, 3) * 2, "w": w}
        want = f(*(eager[c] for c in args))
        np.testing.assert_allclose(_arr(compiled(*(comp[c] for c in args))), _arr(want),
                                   err_msg=args)
        for c in "xyw":
            np.testing.assert_allclose(_arr(comp[c]), _arr(eager[c]), err_msg=args)


def test_a_program_that_changes_its_own_key_is_not_rerun():
    # .grad goes from None to present in the first call: the next call has another key
    (me, _), (mc, _) = _pair()
    x = hg.randn(2, 3)
    for m in (me, mc):   # the AccumulateGrad nodes exist before the first compiled call
        m(x).sum().backward()
        m.zero_grad()

    def step(m):
        loss = m(x).sum()
        loss.backward()
        return loss

    compiled = hg.compile(lambda: step(mc))
    for i in range(6):
        if i == 3:   # .grad None again: the first program, not traced anew this time
            me.zero_grad()
            mc.zero_grad()
        step(me)
        compiled()
        for (k, pe), (_, pc) in zip(me.named_parameters(), mc.named_parameters()):
            np.testing.assert_allclose(_arr(pc.grad), _arr(pe.grad), rtol=1e-6,
                                       err_msg=f"{k} after call {i}")


def _adam_loop(m, opt, x):
    def step():
        loss = m(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return step


def test_a_rerun_call_keeps_aliases_of_parameters_and_optimizer_state_readable():
    # a re-run call donates the optimizer state only it holds without counting its
    # references: reading the state ends that (the next call plans again)
    (me, oe), (mc, oc) = _pair(hg.optim.Adam, lr=0.05)
    x = hg.randn(4, 3)
    eager, compiled = _adam_loop(me, oe, x), hg.compile(_adam_loop(mc, oc, x), donate=True)
    for _ in range(3):
        eager()
        compiled()
    assert compiled._replay is not None and next(iter(compiled._cache.values())).donated
    array = mc.fc2.bias._data   # held alone (no alias Tensor): the next call re-runs
    before = np.asarray(array).copy()
    eager()
    compiled()
    assert compiled._replay is not None and not array.is_deleted()
    np.testing.assert_array_equal(np.asarray(array), before)
    p = mc.fc1.weight
    held = {"alias": p.detach(), "exp_avg": oc.state[p]["exp_avg"]}
    before = {k: _arr(v).copy() for k, v in held.items()}
    for _ in range(3):
        eager()
        compiled()
    for k, v in held.items():
        np.testing.assert_array_equal(_arr(v), before[k], err_msg=k)
    for pe, pc in zip(me.parameters(), mc.parameters()):
        np.testing.assert_allclose(_arr(pc), _arr(pe), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(_arr(oc.state[p]["exp_avg"]),
                               _arr(oe.state[me.fc1.weight]["exp_avg"]), rtol=1e-5, atol=1e-7)


_ATTR_CHANGES = {
    # what a re-run call compares in a state Tensor's attributes (``replay._META``)
    "unkeyed_attribute": lambda p: setattr(p, "tag", "w"),
    "retain_grad": lambda p: p.retain_grad(),
    "empty_hook_dict": lambda p: p.register_hook(lambda g: g).remove(),
    "grad": lambda p: setattr(p, "grad", hg.zeros_like(p)),
    "requires_grad": lambda p: p.requires_grad_(False),
}


@pytest.mark.parametrize("change", sorted(_ATTR_CHANGES))
def test_a_state_tensors_attributes_changed_between_calls_reach_the_next_call(change):
    (me, oe), (mc, oc) = _pair(hg.optim.Adam, lr=0.05)
    x = hg.randn(4, 3)
    eager, compiled = _adam_loop(me, oe, x), hg.compile(_adam_loop(mc, oc, x))
    for i in range(6):
        if i == 3:
            _ATTR_CHANGES[change](me.fc2.bias)
            _ATTR_CHANGES[change](mc.fc2.bias)
        np.testing.assert_allclose(_arr(compiled()), _arr(eager()), rtol=1e-5)
        for (k, pe), (_, pc) in zip(me.named_parameters(), mc.named_parameters()):
            np.testing.assert_allclose(_arr(pc), _arr(pe), rtol=1e-5, atol=1e-7,
                                       err_msg=f"{k} after call {i}")
            g_e, g_c = pe._grad, pc._grad
            assert (g_e is None) == (g_c is None), k
    assert compiled._replay is not None   # the calls after the change re-run again


def test_a_rerun_call_keys_a_tensor_argument_that_is_no_longer_plain():
    # a plain batch Tensor is compared by its flag and aval; anything else by its full key
    hg.manual_seed(0)
    m = Tiny()
    f = hg.compile(lambda a: m(a).sum())
    x = hg.randn(2, 3)
    for _ in range(3):
        f(x)
    assert f.trace_count == 1
    changed = [hg.randn(2, 3, requires_grad=True), hg.randn(2, 3), hg.randn(2, 3),
               hg.randn(2, 3).double()]
    changed[1].grad = hg.ones(2, 3)
    changed[2].requires_grad_().register_hook(lambda g: g)
    for i, a in enumerate(changed):
        np.testing.assert_allclose(_arr(f(a)), _arr(m(a).sum()), rtol=1e-6)
        assert f.trace_count == 2 + i, i
        f(x)   # the plain one again: its program re-runs
        assert f.trace_count == 2 + i, i
