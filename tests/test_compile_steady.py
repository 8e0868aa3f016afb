"""A training loop's compiled step re-runs steadily (hookgrad._compile.steady): where
nothing but the batch changed since the last call, the call makes no plan and no replay
check, and its results are the eager loop's; a change of anything the program depends
on is seen, and the calls after it re-run steadily again."""
import contextlib
import threading

import numpy as np
import pytest

import hookgrad as hg
from hookgrad import _mode
import hookgrad.nn.functional as F
from hookgrad import nn
from hookgrad._compile import replay, steady
from hookgrad._tensor import Pending
from hookgrad.compile import CompiledFunction
from tests.test_compile import _arr

SCALE = 1.0   # read by the loss: a guarded global


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 2)
        self.temperature = 1.0   # read by forward: a guarded attribute

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x))) / self.temperature


def _model(hooks):
    hg.manual_seed(0)
    m = Scaled()
    if hooks:
        for lin in (m.fc1, m.fc2):
            lin.register_full_backward_hook(lambda mod, gi, go: None)
    return m, hg.optim.AdamW(m.parameters(), lr=0.05, weight_decay=0.01)


def _loop(m, opt):
    def step(x, y):
        loss = F.mse_loss(m(x), y) * SCALE
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return step


@pytest.fixture
def checks(monkeypatch):
    """The calls that planned (``CompiledFunction._plan``) or ran ``replay.check``."""
    out = []
    plan, check = CompiledFunction._plan, replay.check
    monkeypatch.setattr(CompiledFunction, "_plan",
                        lambda self, a, k: out.append("plan") or plan(self, a, k))
    monkeypatch.setattr(replay, "check", lambda *a: out.append("check") or check(*a))
    return out


def _same(me, mc, what):
    for (k, pe), (_, pc) in zip(me.named_parameters(), mc.named_parameters()):
        np.testing.assert_allclose(_arr(pc), _arr(pe), rtol=1e-5, atol=1e-7,
                                   err_msg=f"{k} {what}")


def _same_state(oe, oc, what):
    """The optimizers' states (``state_dict()``) equal, entry by entry."""
    se, sc = oe.state_dict()["state"], oc.state_dict()["state"]
    assert se.keys() == sc.keys(), what
    for i in se:
        for k, v in se[i].items():
            np.testing.assert_allclose(np.asarray(sc[i][k]), np.asarray(v), rtol=1e-5,
                                       atol=1e-7, err_msg=f"param {i} {k} {what}")


def _batches(n, rows=6):
    rng = np.random.default_rng(0)
    return [(hg.tensor(rng.standard_normal((rows, 3), np.float32)),
             hg.tensor(rng.standard_normal((rows, 2), np.float32))) for _ in range(n)]


@pytest.mark.filterwarnings("ignore:Full backward hook is firing")
@pytest.mark.parametrize("hooks", [False, True], ids=["no_hooks", "noop_hooks"])
def test_a_loop_over_new_batches_re_runs_with_no_plan_or_check(checks, hooks):
    # the eager loop first: its backward hooks change hook dicts (counted) as they run
    (me, oe), (mc, oc) = _model(hooks), _model(hooks)
    eager, compiled = _loop(me, oe), hg.compile(_loop(mc, oc))
    batches = _batches(6)
    losses = [_arr(eager(x, y)) for x, y in batches]
    for i, (x, y) in enumerate(batches):
        if i == 2:
            checks.clear()
        np.testing.assert_allclose(_arr(compiled(x, y)), losses[i], rtol=1e-5,
                                   err_msg=f"call {i}")
    _same(me, mc, "after the loops")
    assert checks == [] and compiled.trace_count == 1


def _set_scale(m, opt):
    global SCALE
    SCALE = 0.5


def _zero_grad_input(m, opt):
    m.fc2.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0,))


def _in_place(m, opt):
    with hg.no_grad():
        m.fc1.bias.mul_(0.5)


_CHANGES = {
    # what the program depends on, changed between two calls
    "global_value": _set_scale,
    "module_attribute": lambda m, opt: setattr(m, "temperature", 2.0),
    # past ``Module.__setattr__`` (which counts its writes): still a guarded value
    "module_dict_written": lambda m, opt: m.__dict__.__setitem__("temperature", 2.0),
    "module_object_setattr": lambda m, opt: object.__setattr__(m, "temperature", 2.0),
    "learning_rate": lambda m, opt: opt.param_groups[0].__setitem__("lr", 0.01),
    "hook_added": _zero_grad_input,
    "parameter_written": _in_place,
    "optimizer_state_read": lambda m, opt: opt.state_dict(),
}


def _run(m, opt, step, change, checks):
    """Seven calls of ``step``, ``change`` made before the fourth: the losses, and whether
    the call before the change and the last call re-ran steadily."""
    global SCALE
    losses, steady = [], []
    try:
        for i, (x, y) in enumerate(_batches(7)):
            if i in (2, 6):
                checks.clear()
            if i == 3:
                steady.append(checks == [])
                _CHANGES[change](m, opt)
            losses.append(_arr(step(x, y)))
        steady.append(checks == [])
    finally:
        SCALE = 1.0
    return losses, steady


@pytest.mark.parametrize("change", sorted(_CHANGES))
def test_a_change_between_steady_calls_is_seen(checks, change):
    # each loop alone: an eager step's hooks change hook dicts (counted) as they run
    (me, oe), (mc, oc) = _model(False), _model(False)
    eager, _ = _run(me, oe, _loop(me, oe), change, checks)
    compiled = hg.compile(_loop(mc, oc))
    losses, steady = _run(mc, oc, compiled, change, checks)
    for i, (c, e) in enumerate(zip(losses, eager)):
        np.testing.assert_allclose(c, e, rtol=1e-5, err_msg=f"call {i}")
    _same(me, mc, "after the loops")
    # read after the steady calls that followed the change (a state read ends the flat
    # state a steady call writes its leaves into)
    _same_state(oe, oc, "after the loops")
    assert steady == [True, True]   # before the change, and again after it


def test_a_batch_of_another_shape_is_seen_and_the_old_shape_re_runs_again(checks):
    (me, oe), (mc, oc) = _model(False), _model(False)
    eager, compiled = _loop(me, oe), hg.compile(_loop(mc, oc))
    batches = _batches(3) + _batches(2, rows=5) + _batches(3)
    for i, (x, y) in enumerate(batches):
        if i == 7:
            checks.clear()
        np.testing.assert_allclose(_arr(compiled(x, y)), _arr(eager(x, y)), rtol=1e-5,
                                   err_msg=f"call {i}")
        _same(me, mc, f"after call {i}")
    assert checks == [] and compiled.trace_count == 2


def test_steady_calls_bump_the_versions_the_eager_loop_bumps(checks):
    (me, oe), (mc, oc) = _model(False), _model(False)
    eager, compiled = _loop(me, oe), hg.compile(_loop(mc, oc))
    # an eager graph that saved a parameter before the steps
    saved = (mc.fc1.weight * mc.fc1.weight).sum()
    for i, (x, y) in enumerate(_batches(5)):
        if i == 2:
            checks.clear()
        eager(x, y)
        compiled(x, y)
    assert checks == []
    assert [p._version for p in mc.parameters()] == [p._version for p in me.parameters()]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        saved.backward()


@pytest.mark.parametrize("kind", ["views", "deferred"])
def test_batches_that_are_views_or_deferred_re_run_steadily(checks, kind):
    # a view carries attributes of its own (its base): compared by its full key; an eager
    # op's output may be deferred (``_ops/lazy.py``): computed when the call reads it
    (me, oe), (mc, oc) = _model(False), _model(False)
    eager, compiled = _loop(me, oe), hg.compile(_loop(mc, oc))
    rng = np.random.default_rng(1)
    xs = hg.tensor(rng.standard_normal((30, 3), np.float32))
    ys = hg.tensor(rng.standard_normal((30, 2), np.float32))
    deferred = []
    for i in range(5):
        if i == 2:
            checks.clear()
        x, y = xs[6 * i:6 * i + 6], ys[6 * i:6 * i + 6]
        if kind == "deferred":
            x, y = x.sin(), y.sin()
            deferred.append(type(x._arr) is Pending)
        np.testing.assert_allclose(_arr(compiled(x, y)), _arr(eager(x, y)), rtol=1e-5,
                                   err_msg=f"call {i}")
    _same(me, mc, "after the loops")
    assert checks == [] and compiled.trace_count == 1
    assert kind != "deferred" or any(deferred[2:])


def _versions(m):
    return [p._version for p in m.parameters()]


def test_versions_move_with_steady_calls_between_other_writes(checks):
    # steady calls move one shared counter (``hookgrad._tensor.Moving``); an in-place write,
    # another program's calls and a trace in between each read and write the versions
    (me, oe), (mc, oc) = _model(False), _model(False)
    eager, compiled = _loop(me, oe), hg.compile(_loop(mc, oc))
    batches = _batches(4) + _batches(3, rows=5) + _batches(4)
    for i, (x, y) in enumerate(batches):
        for m, opt in ((me, oe), (mc, oc)):
            if i == 3:   # the state as the last call left it, but for a version
                w = m.fc1.weight
                hg._C._autograd._unsafe_set_version_counter((w,), (w._version + 5,))
            if i == 9:
                _in_place(m, opt)
        checks.clear()
        eager(x, y)
        compiled(x, y)
        assert _versions(mc) == _versions(me), f"after call {i}"
        assert i not in (3, 10) or checks == [], f"call {i} re-ran steadily"
    assert all(type(v) is int for v in _versions(mc))


def test_an_eager_graph_sees_the_versions_of_steady_calls(checks):
    (me, oe), (mc, oc) = _model(False), _model(False)
    compiled = hg.compile(_loop(mc, oc))
    batches = _batches(6)
    for x, y in batches[:3]:
        compiled(x, y)
    # saved while the versions move with the steady calls: a later call modifies it
    before = (mc.fc1.weight * mc.fc1.weight).sum()
    for x, y in batches[3:5]:
        compiled(x, y)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        before.backward()
    after = (mc.fc1.weight * mc.fc1.weight).sum()   # nothing written since: it works
    after.backward()
    np.testing.assert_allclose(_arr(mc.fc1.weight.grad), 2 * _arr(mc.fc1.weight))


def _steady_pair(n):
    """Two models, the eager loop and the compiled one over ``n`` batches, the compiled
    one re-running steadily from the batches' fourth: ``(me, mc, eager, compiled,
    batches)``."""
    (me, oe), (mc, oc) = _model(False), _model(False)
    eager, compiled = _loop(me, oe), hg.compile(_loop(mc, oc))
    batches = _batches(n)
    for x, y in batches[:3]:
        eager(x, y)
        compiled(x, y)
    return me, mc, eager, compiled, batches


def test_a_steady_call_that_raises_leaves_the_state_as_it_was(checks):
    me, mc, eager, compiled, batches = _steady_pair(6)
    entry = compiled._replay.basis.entry
    exes = entry.exe, entry.exe_plain

    def fails(*args):
        raise RuntimeError("the device ran out of memory")
    # the donating program or, as ``arrays`` holds the parameters' buffers, the other one
    entry.exe = entry.exe_plain = fails
    arrays, versions = [p._data for p in mc.parameters()], _versions(mc)
    checks.clear()
    with pytest.raises(RuntimeError, match="ran out of memory"):
        compiled(*batches[3])
    assert checks == []   # a steady call
    entry.exe, entry.exe_plain = exes
    assert all(p._data is a for p, a in zip(mc.parameters(), arrays))
    assert _versions(mc) == versions
    for x, y in batches[4:]:
        np.testing.assert_allclose(_arr(compiled(x, y)), _arr(eager(x, y)), rtol=1e-5)
        assert _versions(mc) == _versions(me)
    _same(me, mc, "after the loops")


class Loss(hg.Tensor):
    """A Tensor subclass a step returns."""


_RETURNS = {
    # what the step returns, from its loss: a bare Tensor (``steady``'s own path), one of a
    # subclass, and a container (``write_back.outputs``)
    "tensor": lambda loss: loss,
    "subclass": lambda loss: loss.as_subclass(Loss),
    "tuple": lambda loss: (loss, {"half": loss / 2}),
}


@pytest.mark.parametrize("returns", sorted(_RETURNS))
def test_steady_calls_return_what_the_step_returns_each_call_anew(checks, returns):
    (me, oe), (mc, oc) = _model(False), _model(False)
    shape = _RETURNS[returns]

    def wrap(step):
        return lambda x, y: shape(step(x, y))
    eager, compiled = wrap(_loop(me, oe)), hg.compile(wrap(_loop(mc, oc)))
    got, wanted = [], []
    for i, (x, y) in enumerate(_batches(5)):
        if i == 2:
            checks.clear()
        want, out = eager(x, y), compiled(x, y)
        assert type(out) is type(want)
        leaves = [out] if isinstance(out, hg.Tensor) else [out[0], out[1]["half"]]
        wants = [want] if isinstance(want, hg.Tensor) else [want[0], want[1]["half"]]
        for o, w in zip(leaves, wants):
            assert type(o) is type(w) and not o.requires_grad
            np.testing.assert_allclose(_arr(o), _arr(w), rtol=1e-5, err_msg=f"call {i}")
        got.append(leaves[0])
        wanted.append(_arr(wants[0]))
    assert checks == []
    assert len({id(t) for t in got}) == len(got)   # a new Tensor each call
    for i, (o, w) in enumerate(zip(got, wanted)):   # held since: still its call's value
        np.testing.assert_allclose(_arr(o), w, rtol=1e-5, err_msg=f"call {i}, held")
    with pytest.raises(RuntimeError, match="output of a hookgrad.compile step"):
        got[-1].backward()


_CONTEXTS = {
    # what a call runs under, entered between two steady calls (the program's key)
    "anomaly_mode": lambda: hg.autograd.set_detect_anomaly(True),
    "saved_tensor_hooks_disabled":
        lambda: hg.autograd.graph.disable_saved_tensors_hooks("no saving here"),
    "saved_tensor_hooks": lambda: hg.autograd.graph.saved_tensors_hooks(lambda t: t,
                                                                         lambda t: t),
    # anomaly mode off, as before, but without its NaN check: a key of its own
    "anomaly_check_nan_off": lambda: hg.autograd.set_detect_anomaly(False, check_nan=False),
    "mutation_on_saved_tensors": hg.autograd.graph.allow_mutation_on_saved_tensors,
}


def _planned(compiled, eager, context, checks):
    """Nine calls, calls 3 to 5 in ``context``, each equal to ``eager``'s: whether each
    planned."""
    planned = []
    with contextlib.ExitStack() as stack:
        for i, (x, y) in enumerate(_batches(9)):
            if i == 3:
                stack.enter_context(context())
            if i == 6:
                stack.close()
            checks.clear()
            out = compiled(x, y)
            planned.append(checks != [])
            np.testing.assert_allclose(_arr(out), _arr(eager(x, y)), rtol=1e-5,
                                       err_msg=f"call {i}")
    # the call entering the context traces, and the next checks that program's first
    # re-run; the call leaving it finds the old program; the others re-run steadily
    assert planned[2:] == [False, True, True, False, True, False, False]


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")
@pytest.mark.parametrize("context", sorted(_CONTEXTS))
def test_a_context_entered_between_steady_calls_is_seen(checks, context):
    (me, oe), (mc, oc) = _model(False), _model(False)
    _planned(hg.compile(_loop(mc, oc)), _loop(me, oe), _CONTEXTS[context], checks)
    _same(me, mc, "after the loops")


def test_grad_mode_changed_between_steady_calls_is_seen(checks):
    m, _ = _model(False)

    def evaluate(x, y):
        return F.mse_loss(m(x), y)
    _planned(hg.compile(evaluate), evaluate, hg.no_grad, checks)


@pytest.mark.parametrize("n", [2, 3])
def test_one_tensor_passed_as_two_arguments_is_keyed_again(checks, n):
    # two arguments compared by identity, more as a set of ids
    (me, oe), (mc, oc) = _model(False), _model(False)

    def many_loop(m, opt):
        def step(a, *others):
            loss = F.mse_loss(m(a), sum(m(b).detach() for b in others) * 0.5)
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss
        return step
    eager, compiled = many_loop(me, oe), hg.compile(many_loop(mc, oc))
    xs = [x for x, _ in _batches(9)]
    for i in range(6):
        args = tuple(xs[i:i + n])
        if i == 3:   # the first Tensor again as the last
            args = args[:-1] + args[:1]
        checks.clear()
        np.testing.assert_allclose(_arr(compiled(*args)), _arr(eager(*args)), rtol=1e-5,
                                   err_msg=f"call {i}")
        # keyed again, and that program's first re-run checked (as after any trace)
        assert (checks != []) == (i in (0, 1, 3, 4)), f"call {i} planned"
    _same(me, mc, "after the loops")


def test_a_step_with_two_optimizers_re_runs_steadily(checks):
    def model():
        hg.manual_seed(0)
        m = Scaled()
        return m, (hg.optim.SGD(m.fc1.parameters(), lr=0.1, momentum=0.9),
                   hg.optim.AdamW(m.fc2.parameters(), lr=0.05))

    def two_loop(m, opts):
        def step(x, y):
            loss = F.mse_loss(m(x), y)
            loss.backward()
            for opt in opts:
                opt.step()
                opt.zero_grad()
            return loss
        return step
    (me, oe), (mc, oc) = model(), model()
    eager, compiled = two_loop(me, oe), hg.compile(two_loop(mc, oc))
    for i, (x, y) in enumerate(_batches(6)):
        checks.clear()
        np.testing.assert_allclose(_arr(compiled(x, y)), _arr(eager(x, y)), rtol=1e-5,
                                   err_msg=f"call {i}")
        assert (checks != []) == (i < 2), f"call {i} planned"
    _same(me, mc, "after the loops")


def _closure_loop(m, opt):
    def step(x, y):   # ``_loop``'s step of what the cells hold now
        return _loop(m, opt)(x, y)

    def rebind(new_m, new_opt):
        nonlocal m, opt
        m, opt = new_m, new_opt
    return step, rebind


_GLOBAL_MODEL = _GLOBAL_OPT = None   # what ``_global_name_loop``'s step reads


def _global_name_loop():
    def step(x, y):   # ``_loop``'s step of what the globals hold now
        return _loop(_GLOBAL_MODEL, _GLOBAL_OPT)(x, y)
    return step


@pytest.mark.parametrize("where", ["closure_cell", "global_name"])
def test_a_root_rebound_between_steady_calls_is_seen(checks, where):
    # the model the step reads rebound to another one between two steady calls: the calls
    # after it run on the new model's state, as eagerly
    global _GLOBAL_MODEL, _GLOBAL_OPT
    batches = _batches(7)

    def another():   # other weights, the same in both runs
        hg.manual_seed(1)
        return Scaled()

    def run(compiled):
        global _GLOBAL_MODEL, _GLOBAL_OPT
        m, opt = _model(False)
        if where == "closure_cell":
            step, rebind = _closure_loop(m, opt)
        else:
            _GLOBAL_MODEL, _GLOBAL_OPT, step = m, opt, _global_name_loop()
        other = another()
        step = hg.compile(step) if compiled else step
        losses, steady = [], []
        for i, (x, y) in enumerate(batches):
            checks.clear()
            if i == 4:
                new_opt = hg.optim.AdamW(other.parameters(), lr=0.05)
                if where == "closure_cell":
                    rebind(other, new_opt)
                else:
                    _GLOBAL_MODEL, _GLOBAL_OPT = other, new_opt
            losses.append(_arr(step(x, y)))
            steady.append(checks == [])
        return losses, steady, other
    try:
        eager, _, oe = run(False)
        compiled, steady, oc = run(True)
    finally:
        _GLOBAL_MODEL = _GLOBAL_OPT = None
    for i, (c, e) in enumerate(zip(compiled, eager)):
        np.testing.assert_allclose(c, e, rtol=1e-5, err_msg=f"call {i}")
    assert steady[2:4] == [True, True] and not steady[4]
    _same(oe, oc, "the model bound last")


_ARGS = {
    # a batch unlike the one the program was keyed on, though of its shape, each failing
    # one part of a steady call's batch check: keyed again
    "requires_grad": lambda x: hg.tensor(_arr(x), requires_grad=True),
    "non_leaf": lambda x: hg.tensor(_arr(x), requires_grad=True) * 1.0,
    "hooked": lambda x: _hooked(hg.tensor(_arr(x), requires_grad=True)),
    "with_grad": lambda x: _with_grad(hg.tensor(_arr(x))),
    "a_state_tensor": None,   # the model's buffer, of the batch's shape
    "another_class": lambda x: nn.Parameter(hg.tensor(_arr(x)), requires_grad=False),
}


def _with_grad(x):
    x.grad = hg.ones(3, 3)
    return x


def _hooked(x):
    x.register_hook(lambda g: g * 2)
    return x


class Square(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.register_buffer("shift", hg.full((3, 3), 0.5))

    def forward(self, x):
        return self.fc(x + self.shift).square()


@pytest.mark.parametrize("kind", sorted(_ARGS))
def test_an_argument_unlike_the_keyed_batch_is_keyed_again(checks, kind):
    # each flag of a steady call's batch check (a leaf without grad, hooks or node, not
    # state): an argument that fails one is keyed anew, and its gradient is eager's
    def run(compiled):
        hg.manual_seed(0)
        m = Square()
        opt = hg.optim.SGD(m.parameters(), lr=0.1)
        xs = [hg.tensor(np.random.default_rng(i).standard_normal((3, 3), np.float32))
              for i in range(6)]

        def step(x):
            loss = m(x).sum()
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss
        step = hg.compile(step) if compiled else step
        out, steady, grads = [], [], []
        for i, x in enumerate(xs):
            if i == 4:
                x = m.shift if _ARGS[kind] is None else _ARGS[kind](x)
            checks.clear()
            out.append(_arr(step(x)))
            steady.append(checks == [])
            grads.append(_arr(x.grad) if x.is_leaf and x.grad is not None else None)
        return out, steady, grads
    (eager, _, ge), (compiled, steady, gc) = run(False), run(True)
    for i, (c, e) in enumerate(zip(compiled, eager)):
        np.testing.assert_allclose(c, e, rtol=1e-5, err_msg=f"call {i}")
    assert (gc[4] is None) == (ge[4] is None)
    if ge[4] is not None:
        np.testing.assert_allclose(gc[4], ge[4], rtol=1e-5)
    assert steady[2:4] == [True, True] and not steady[4]


def test_a_steady_call_does_not_donate_a_buffer_held_elsewhere(checks):
    me, mc, eager, compiled, batches = _steady_pair(8)
    # the weight's array held (read, not written: the next call re-runs steadily): never
    # donated while held
    held = mc.fc1.weight._data
    before = np.asarray(held).copy()
    for i, (x, y) in enumerate(batches[3:]):
        checks.clear()
        eager(x, y)
        compiled(x, y)
        assert checks == [], f"call {i + 3} re-ran steadily"
        assert not held.is_deleted(), f"call {i + 3}"
    np.testing.assert_array_equal(np.asarray(held), before)
    _same(me, mc, "after the loops")


def test_a_reseed_between_steady_calls_keeps_them_steady(checks):
    # a program that neither reads nor writes the random key (``steady._plain``) does not
    # depend on it: reseeding between calls changes nothing it computes
    (me, oe), (mc, oc) = _model(False), _model(False)
    eager, compiled = _loop(me, oe), hg.compile(_loop(mc, oc))
    for i, (x, y) in enumerate(_batches(6)):
        hg.manual_seed(i)
        hg.rand(2)   # a key drawn, and reseeded again
        hg.manual_seed(i)
        checks.clear()
        np.testing.assert_allclose(_arr(compiled(x, y)), _arr(eager(x, y)), rtol=1e-5,
                                   err_msg=f"call {i}")
        assert i < 2 or checks == [], f"call {i} re-ran steadily"
    _same(me, mc, "after the loops")


def test_a_non_leaf_after_leaves_requiring_grad_is_keyed_again(checks):
    # a step with no backward keeps batches requiring grad plain: a non-leaf one (its flag
    # the same) is told by its node
    hg.manual_seed(0)
    m = Square()

    def evaluate(x):
        return m(x).sum()
    compiled = hg.compile(evaluate)
    steady = []
    for i in range(6):
        x = hg.tensor(np.random.default_rng(i).standard_normal((3, 3), np.float32),
                      requires_grad=True)
        if i == 4:
            x = x * 1.0
        checks.clear()
        out = compiled(x)
        steady.append(checks == [])
        np.testing.assert_allclose(_arr(out), _arr(evaluate(x)), rtol=1e-5, err_msg=f"call {i}")
    assert steady[2:4] == [True, True] and not steady[4]


def _unrolled(compiled, args, fallback):
    """Whether the steady call written for ``compiled``'s program (``_Steady.go``) answers
    ``args`` by its unrolled terms alone: its item-wise check ``fallback`` (a name in its
    globals: ``_same_fixed`` or ``_arguments``) stubbed to refuse, so that a term found
    false returns MISS with nothing changed."""
    r = compiled._replay
    go = r.basis.steady
    asked = []
    real = go.__globals__[fallback]
    go.__globals__[fallback] = lambda *a: asked.append(a) and None
    try:
        out = go(compiled, r, args, {})
    finally:
        go.__globals__[fallback] = real
    assert (out is steady.MISS) == bool(asked)
    return not asked


def test_the_unrolled_check_leaves_a_grown_walk_or_a_new_guard_to_the_item_wise_checks():
    # the steady call's unrolled check compares the places it was written over alone:
    # where the roots are read by another reader (a walk that found more roots), a guard
    # was added since or the record holds other groups, a term is false and the item-wise
    # checks (``steady._same_fixed``) decide
    *_, compiled, batches = _steady_pair(8)
    for x, y in batches[3:5]:
        compiled(x, y)
    args = iter(batches[5:])
    assert _unrolled(compiled, next(args), "_same_fixed")
    roots, guards = compiled._roots, compiled._guards
    reader = roots._reader
    roots._reader = reader[:1] + reader[1:]   # the same places, another reader
    assert roots._reader is not reader and not _unrolled(compiled, batches[5], "_same_fixed")
    roots._reader = reader
    for places, place in ((guards.dicts, {"k": 1}), (guards.cells, (lambda: x).__closure__[0])):
        places.append(place)
        try:
            assert not _unrolled(compiled, batches[5], "_same_fixed")
        finally:
            places.pop()
    # a record of two param groups, the optimizer's first among them
    r = compiled._replay
    groups = r.groups
    r.groups = [(values, objs * 2, tensors) for values, objs, tensors in groups]
    assert not _unrolled(compiled, batches[5], "_same_fixed")
    r.groups = groups
    assert _unrolled(compiled, next(args), "_same_fixed")


def test_a_param_group_added_between_steady_calls_is_seen(checks):
    # the optimizer of fc1 alone, then of fc2 too (``add_param_group``): the steady
    # check compares its one group's options, so a second group must end it
    def run(compiled):
        m, _ = _model(False)
        opt = hg.optim.AdamW(m.fc1.parameters(), lr=0.05, weight_decay=0.01)
        step = _loop(m, opt)
        step = hg.compile(step) if compiled else step
        steady = []
        for i, (x, y) in enumerate(_batches(7)):
            if i == 4:
                opt.add_param_group({"params": list(m.fc2.parameters()), "lr": 0.1})
            checks.clear()
            step(x, y)
            steady.append(checks == [])
        return m, steady
    (me, _), (mc, steady) = run(False), run(True)
    _same(me, mc, "after the loops")
    assert steady[2:4] == [True, True] and not steady[4]


def _builtin_loop(m, opt):
    loop = _loop(m, opt)

    def step(x, y):
        return abs(loop(x, y))   # a builtin: a global name unbound here (None)
    return step


def test_the_unrolled_check_sees_a_builtin_the_step_calls_bound_as_a_global():
    # ``abs`` is no global of this module: the roots read it as None, and the unrolled
    # check looks it up (``get``) rather than subscripting it; bound here, it differs
    compiled = hg.compile(_builtin_loop(*_model(False)))
    batches = _batches(7)
    for x, y in batches[:5]:
        compiled(x, y)
    assert _unrolled(compiled, batches[5], "_same_fixed")
    globals()["abs"] = lambda t: t * 2.0
    try:
        assert not _unrolled(compiled, batches[6], "_same_fixed")
    finally:
        del globals()["abs"]
    assert _unrolled(compiled, batches[6], "_same_fixed")


def test_the_unrolled_batch_check_refuses_an_array_of_another_type():
    # a plain Tensor of the keyed class, flags and shape whose array is neither the
    # state's type nor one computed or copied into it (a meta Tensor's, its aval a
    # ShapeDtypeStruct): the item-wise check decides
    *_, compiled, batches = _steady_pair(7)
    for x, y in batches[3:5]:
        compiled(x, y)
    x, y = batches[5]
    assert not _unrolled(compiled, (hg.empty(tuple(x.shape), device="meta"), y),
                         "_arguments")
    assert _unrolled(compiled, (x, y), "_arguments")


def _grads_kept(m, opt):
    def step(x, y):   # no ``zero_grad``: the ``.grad``s accumulate, read and written
        loss = F.mse_loss(m(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def _argument_written(m, opt):
    loop = _loop(m, opt)

    def step(x, y):   # the batch scaled in place: an argument's array written back
        with hg.no_grad():
            x.mul_(0.5)
        return loop(x, y)
    return step


def _evaluation(m, opt):
    def step(x, y):   # no optimizer and nothing written: the output alone
        with hg.no_grad():
            return F.mse_loss(m(x), y)
    return step


_WRITE_BACKS = {"grads_kept": _grads_kept, "argument_written": _argument_written,
                "evaluation": _evaluation}


@pytest.mark.parametrize("kind", sorted(_WRITE_BACKS))
def test_each_write_back_the_steady_call_is_written_for_matches_eager(checks, kind):
    # the steady call's write-back as written for its program: the state arrays as
    # C-level maps and the ``.grad``s and record after them, or ``write_back.state`` for
    # an argument written, or none
    (me, oe), (mc, oc) = _model(False), _model(False)
    eager, compiled = _WRITE_BACKS[kind](me, oe), hg.compile(_WRITE_BACKS[kind](mc, oc))
    batches, again = _batches(7), _batches(7)
    for i, ((x, y), (xc, yc)) in enumerate(zip(batches, again)):
        checks.clear()
        np.testing.assert_allclose(_arr(compiled(xc, y)), _arr(eager(x, y)), rtol=1e-5,
                                   err_msg=f"call {i}")
        np.testing.assert_allclose(_arr(xc), _arr(x), rtol=1e-6, err_msg=f"batch {i}")
        assert i < 3 or checks == [], f"call {i} re-ran steadily"
        _same(me, mc, f"after call {i}")
        for pe, pc in zip(me.parameters(), mc.parameters()):
            assert (pe.grad is None) == (pc.grad is None)
            if pe.grad is not None:
                np.testing.assert_allclose(_arr(pc.grad), _arr(pe.grad), rtol=1e-5,
                                           atol=1e-7, err_msg=f"grad after call {i}")


def _weighted_loop(m, opt):
    loop = _loop(m, opt)

    def step(x, y, weight=1.0):   # a scalar argument, keyword or positional
        return loop(x, y * weight)
    return step


@pytest.mark.parametrize("passed", ["positional", "keyword"])
def test_an_argument_added_between_steady_calls_is_seen(checks, passed):
    # the batch of two Tensors, then a third argument: by position or by keyword, each
    # keyed anew (the unrolled batch check reads the positional Tensors alone)
    (me, oe), (mc, oc) = _model(False), _model(False)
    eager, compiled = _weighted_loop(me, oe), hg.compile(_weighted_loop(mc, oc))
    steady = []
    for i, (x, y) in enumerate(_batches(6)):
        args, kwargs = ((x, y), {}) if i != 4 else \
            ((x, y, 3.0), {}) if passed == "positional" else ((x, y), {"weight": 3.0})
        checks.clear()
        np.testing.assert_allclose(_arr(compiled(*args, **kwargs)), _arr(eager(*args, **kwargs)),
                                   rtol=1e-5, err_msg=f"call {i}")
        steady.append(checks == [])
    _same(me, mc, "after the loops")
    assert steady[2:4] == [True, True] and not steady[4]


def test_an_option_key_added_or_removed_between_steady_calls_is_seen(checks):
    # Adam reads ``decoupled_weight_decay`` where the group has it (``group.get``): a group
    # without it, then with it, then without it again; the options are compared key by
    # key, so the group's and the record's numbers of keys must be compared too
    def run(compiled):
        hg.manual_seed(0)
        m = Scaled()
        opt = hg.optim.Adam(m.parameters(), lr=0.05, weight_decay=0.5)
        group = opt.param_groups[0]
        del group["decoupled_weight_decay"]
        step = _loop(m, opt)
        step = hg.compile(step) if compiled else step
        losses, steady = [], []
        for i, (x, y) in enumerate(_batches(10)):
            if i == 4:
                group["decoupled_weight_decay"] = True
            if i == 7:
                del group["decoupled_weight_decay"]
            checks.clear()
            losses.append(_arr(step(x, y)))
            steady.append(checks == [])
        return m, losses, steady
    (me, eager, _), (mc, compiled, steady) = run(False), run(True)
    for i, (c, e) in enumerate(zip(compiled, eager)):
        np.testing.assert_allclose(c, e, rtol=1e-5, err_msg=f"call {i}")
    _same(me, mc, "after the loops")
    assert steady[2:4] == [True, True] and not steady[4] and not steady[7]


def test_a_steady_step_runs_inline_in_a_functional_block_of_its_own_thread_alone(checks):
    """A compiled step inlines in a functional block (``_mode.use``) of the calling thread;
    one open in another thread leaves it re-running steadily (the calls skip their
    thread-local reads while no thread has such a block open: ``_mode.OPEN``)."""
    m, _ = _model(False)
    ran = []

    def evaluate(x, y):
        return F.mse_loss(m(x), y)
    compiled = hg.compile(evaluate)
    batches = _batches(5)
    for x, y in batches[:3]:
        compiled(x, y)   # traced, checked, then steady
    # the step's Python, as an inlined call runs it (a steady call runs the program alone)
    compiled._fn = lambda *a: ran.append(1) or evaluate(*a)
    before, opened, release = len(ran), threading.Event(), threading.Event()

    def hold():
        with _mode.functional_mode():
            opened.set()
            release.wait()
    other = threading.Thread(target=hold)
    other.start()
    try:
        opened.wait()
        checks.clear()
        x, y = batches[3]
        out = compiled(x, y)
        assert len(ran) == before and checks == []   # steady: no Python of the step ran
        with _mode.functional_mode():
            inline = compiled(x, y)
        assert len(ran) == before + 1 and checks == []   # inline: the step's Python ran
        np.testing.assert_allclose(_arr(inline), _arr(out), rtol=1e-6)
    finally:
        release.set()
        other.join()
    x, y = batches[4]
    compiled(x, y)
    assert len(ran) == before + 1 and checks == []
