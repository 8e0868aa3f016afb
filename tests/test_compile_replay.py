"""A compiled step re-runs its last program (hookgrad._compile.replay) when the counters of
hookgrad._watch moved for a change the program was not keyed on (another Module, an
eager step's hooks, ``ModTracker``, a write that changes nothing), and still sees every
change it was keyed on and every write to its state (Tensors, params lists, options)."""
import numpy as np
import pytest

import hookgrad as hg
import hookgrad.nn.functional as F
from hookgrad import nn
from hookgrad._compile import replay
from hookgrad.compile import CompiledFunction
from hookgrad.utils.mod_tracker import ModTracker
from hookgrad.autograd.graph import saved_tensors_hooks
from tests.test_compile import Tiny, _arr


def _model():
    hg.manual_seed(0)
    m = Tiny()
    return m, hg.optim.Adam(m.parameters(), lr=0.05)


def _train(opt, loss_of):
    """A training step: the loss ``loss_of(*args)``, backward, the optimizer's step."""
    def step(*args):
        loss = loss_of(*args)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return step


def _loop(m, opt, x, y):
    return _train(opt, lambda: F.mse_loss(m(x), y))


def _same(me, mc, what):
    for (k, pe), (_, pc) in zip(me.named_parameters(), mc.named_parameters()):
        np.testing.assert_allclose(_arr(pc), _arr(pe), rtol=1e-5, atol=1e-7,
                                   err_msg=f"{k} {what}")


@pytest.fixture
def plans(monkeypatch):
    """The calls that planned (``CompiledFunction._plan``) instead of re-running."""
    out = []
    real = CompiledFunction._plan
    monkeypatch.setattr(CompiledFunction, "_plan",
                        lambda self, a, k: out.append(1) or real(self, a, k))
    return out


def _eager_hooks(other, x):
    def hook(mod, args, out):
        out.register_hook(lambda g: g * 2)

    h = other.fc1.register_forward_hook(hook)
    other(x).sum().backward()
    h.remove()


def _tracked(other, x):
    with ModTracker():
        other(x).sum().backward()


def _saved_hooks(other, x):
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        other(x).sum().backward()


_ELSEWHERE = {
    # changes the counter counts that the program was not keyed on
    "other_module_attribute": lambda m, other, x: setattr(other, "note", 1.0),
    "other_module_hook": lambda m, other, x: other.fc1.register_forward_hook(print),
    "eager_step_with_hooks": lambda m, other, x: _eager_hooks(other, x),
    "eager_mod_tracker": lambda m, other, x: _tracked(other, x),
    "eager_saved_tensors_hooks": lambda m, other, x: _saved_hooks(other, x),   # counts none
    # a hook registered and removed again: the hook dict's keys are as keyed
    "state_module_hook_removed": lambda m, other, x: m.fc1.register_forward_hook(print).remove(),
}


@pytest.mark.parametrize("change", sorted(_ELSEWHERE))
def test_a_change_elsewhere_does_not_plan_the_next_call_again(change, plans):
    x, y = hg.randn(6, 3), hg.randn(6, 2)
    (me, oe), (mc, oc) = _model(), _model()
    eager, compiled = _loop(me, oe, x, y), hg.compile(_loop(mc, oc, x, y))
    other = Tiny()
    for _ in range(3):
        eager()
        compiled()
    plans.clear()
    _ELSEWHERE[change](mc, other, x)
    for i in range(2):
        np.testing.assert_allclose(_arr(compiled()), _arr(eager()), rtol=1e-5)
        _same(me, mc, f"after call {i}")
    assert plans == [] and compiled.trace_count == 1


def _acc_node(p):
    return p.view_as(p).grad_fn.next_functions[0][0]


_NODES = {}   # a primed model's AccumulateGrad node of ``fc2.bias`` (a view made later
#               to reach it would change the Tensor's attributes)


def _prime(m):
    """No-op hooks of each kind on the state Tensors: a hook added later goes into a dict
    that exists (the Tensor's attributes stay as the last call left them)."""
    m.fc1.weight.register_hook(lambda g: None)
    m.fc1.bias.register_post_accumulate_grad_hook(lambda p: None)
    node = _NODES[id(m)] = _acc_node(m.fc2.bias)
    node.register_prehook(lambda go: None)


def _triple_grad(p):
    p.grad.mul_(3.0)


def _replaced_fc2(m):
    hg.manual_seed(1)
    m.fc2 = nn.Linear(4, 2)


_KEYED = {
    # changes the counter counts that the program was keyed on: the next call sees them
    "forward_hook": lambda m: m.fc1.register_forward_hook(lambda mod, a, out: out * 2),
    "forward_pre_hook": lambda m: m.fc2.register_forward_pre_hook(lambda mod, a: (a[0] * 3,)),
    "full_backward_hook": lambda m: m.fc2.register_full_backward_hook(
        lambda mod, gi, go: (gi[0] * 0.5,)),
    "module_replaced": _replaced_fc2,
    "parameter_replaced": lambda m: setattr(m.fc2, "bias", nn.Parameter(hg.ones(2))),
    "tensor_hook": lambda m: m.fc1.weight.register_hook(lambda g: g * 0.5),
    "accumulate_grad_prehook": lambda m: _NODES[id(m)].register_prehook(
        lambda go: (go[0] * 3,)),
    "post_accumulate_grad_hook": lambda m: m.fc1.bias.register_post_accumulate_grad_hook(
        _triple_grad),
}
# a new Parameter (not the optimizer's) gets its ``.grad`` by the next call: one more key
_TRACES = {"module_replaced": 3, "parameter_replaced": 3}


@pytest.mark.parametrize("change", sorted(_KEYED))
def test_a_keyed_change_is_seen_where_the_counter_moved(change):
    x, y = hg.randn(6, 3), hg.randn(6, 2)
    (me, oe), (mc, oc) = _model(), _model()
    _prime(me)
    _prime(mc)
    eager, compiled = _loop(me, oe, x, y), hg.compile(_loop(mc, oc, x, y))
    for i in range(6):
        if i == 3:   # the calls before re-ran their program
            assert compiled._replay is not None
            _KEYED[change](me)
            _KEYED[change](mc)
        np.testing.assert_allclose(_arr(compiled()), _arr(eager()), rtol=1e-5,
                                   err_msg=f"call {i}")
        _same(me, mc, f"after call {i}")
    assert compiled.trace_count == _TRACES.get(change, 2) and compiled._replay is not None


def test_train_and_eval_are_seen_where_the_counter_moved():
    m, opt = _model()
    x, y = hg.randn(6, 3), hg.randn(6, 2)
    compiled = hg.compile(_loop(m, opt, x, y))
    for _ in range(3):
        compiled()
    m.eval()
    compiled()
    assert compiled.trace_count == 2
    m.train()
    compiled()
    compiled()
    assert compiled.trace_count == 2 and compiled._replay is not None


def test_a_global_module_hook_is_seen_where_the_counter_moved():
    m, opt = _model()
    x, y = hg.randn(6, 3), hg.randn(6, 2)
    compiled = hg.compile(_loop(m, opt, x, y))
    for _ in range(3):
        compiled()
    seen = []
    handle = nn.modules.module.register_module_forward_hook(
        hg.compile.host_hook(lambda mod, a, out: seen.append(type(mod).__name__)))
    try:
        compiled()
    finally:
        handle.remove()
    assert compiled.trace_count == 2 and seen == ["Linear", "Linear", "Tiny"]


def _record_on_module(mod, args, out):
    mod.last_mean = float(out.mean().item())   # the host's record of an activation


def test_a_host_hook_setting_a_module_attribute_does_not_plan_again(plans):
    # a Module's attributes other than ``training``, its slots, hooks and sharding are not
    # read by the walk: setting one each call (through Module.__setattr__) keeps it
    x, y = hg.randn(6, 3), hg.randn(6, 2)
    (me, oe), (mc, oc) = _model(), _model()
    me.fc1.register_forward_hook(_record_on_module)
    mc.fc1.register_forward_hook(hg.compile.host_hook(_record_on_module))
    eager, compiled = _loop(me, oe, x, y), hg.compile(_loop(mc, oc, x, y))
    for i in range(5):
        if i == 3:
            plans.clear()
        np.testing.assert_allclose(_arr(compiled()), _arr(eager()), rtol=1e-5)
        np.testing.assert_allclose(mc.fc1.last_mean, me.fc1.last_mean, rtol=1e-5)
    assert plans == [] and compiled.trace_count == 1


def test_a_hook_dict_replaced_on_a_module_is_seen():
    # clearing a Module's hooks by rebinding its dict (``m._forward_hooks = OrderedDict()``)
    # leaves the old dict as it was: the walk compares which dict the Module holds
    from collections import OrderedDict
    x, y = hg.randn(6, 3), hg.randn(6, 2)
    (me, oe), (mc, oc) = _model(), _model()
    for m in (me, mc):
        m.fc1.register_forward_hook(lambda mod, a, out: out * 2)
    eager, compiled = _loop(me, oe, x, y), hg.compile(_loop(mc, oc, x, y))
    for i in range(6):
        if i == 3:
            me.fc1._forward_hooks = OrderedDict()
            mc.fc1._forward_hooks = OrderedDict()
        np.testing.assert_allclose(_arr(compiled()), _arr(eager()), rtol=1e-5,
                                   err_msg=f"call {i}")
        _same(me, mc, f"after call {i}")
    assert compiled.trace_count == 2


_STATE = {}
step = None   # the compiled step below, as a global its own code names (``opt.step()``)


def _global_step(x, y):
    m, opt = _STATE["m"], _STATE["opt"]
    loss = F.mse_loss(m(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss


def test_a_compiled_step_named_step_is_not_walked_as_its_own_state(plans):
    # ``opt.step()`` names ``step`` as an attribute, not as a global: the compiled step
    # bound to the global ``step`` (whose attributes change every call) is no root
    global step
    x, y = hg.randn(6, 3), hg.randn(6, 2)
    (me, oe), (mc, oc) = _model(), _model()
    _STATE.update(m=mc, opt=oc)
    eager, step = _loop(me, oe, x, y), hg.compile(_global_step)
    try:
        for i in range(5):
            if i == 3:
                plans.clear()
            np.testing.assert_allclose(_arr(step(x, y)), _arr(eager()), rtol=1e-5)
            _same(me, mc, f"after call {i}")
        assert plans == [] and step.trace_count == 1
        assert [name for _, name, _ in step._roots.globals] == ["F", "_STATE"]
    finally:
        step = None
        _STATE.clear()


def _no_grad(write):
    def run(m, opt):
        with hg.no_grad():
            write(m)
    return run


_EXTRA = {}   # a Parameter per model, outside it: the optimizer steps it without .grad


def _extra(m):
    return _EXTRA.setdefault(id(m), nn.Parameter(hg.ones(2)))


def _params_rebound(m, opt, more=()):
    group = opt.param_groups[0]
    group["params"] = list(group["params"]) + list(more)


def _no_first_param(m, opt):
    group = opt.param_groups[0]
    group["params"] = list(group["params"][1:])


_STATE_WRITES = {
    # writes to the state between calls (``hookgrad._watch`` counts each): the next call
    # sees them, and the calls after it re-run again
    "data_assigned": lambda m, opt: setattr(m.fc1.weight, "data", hg.full((4, 3), 0.1)),
    "in_place_under_no_grad": _no_grad(lambda m: m.fc2.bias.mul_(0.5)),
    "copy_under_no_grad": _no_grad(lambda m: m.fc1.bias.copy_(hg.ones(4))),
    "grad_assigned": lambda m, opt: setattr(m.fc2.weight, "grad", hg.ones(2, 4)),
    "requires_grad_off": lambda m, opt: m.fc1.bias.requires_grad_(False),
    "attribute_set": lambda m, opt: setattr(m.fc1.weight, "note", 1.0),
    "params_list_appended": lambda m, opt: opt.param_groups[0]["params"].append(_extra(m)),
    "params_list_shortened": lambda m, opt: opt.param_groups[0]["params"].pop(),
    "params_list_first_removed": lambda m, opt: opt.param_groups[0]["params"].pop(0),
    "params_list_reversed": lambda m, opt: opt.param_groups[0]["params"].reverse(),
    "params_list_rebound": lambda m, opt: _params_rebound(m, opt, [_extra(m)]),
    "params_list_rebound_equal": _params_rebound,
    "params_list_rebound_shorter": _no_first_param,
}


@pytest.mark.parametrize("change", sorted(_STATE_WRITES))
def test_a_write_to_the_state_between_calls_is_seen(change):
    x, y = hg.randn(6, 3), hg.randn(6, 2)
    (me, oe), (mc, oc) = _model(), _model()
    eager, compiled = _loop(me, oe, x, y), hg.compile(_loop(mc, oc, x, y))
    for i in range(6):
        if i == 3:
            assert compiled._replay is not None
            _STATE_WRITES[change](me, oe)
            _STATE_WRITES[change](mc, oc)
        np.testing.assert_allclose(_arr(compiled()), _arr(eager()), rtol=1e-5,
                                   err_msg=f"call {i}")
        _same(me, mc, f"after call {i}")
    assert compiled._replay is not None


def test_a_tensor_learning_rate_written_in_place_is_seen():
    x, y = hg.randn(6, 3), hg.randn(6, 2)
    runs = []
    for compile_ in (False, True):
        hg.manual_seed(0)
        m, lr = Tiny(), hg.tensor(0.1)
        step = _loop(m, hg.optim.SGD(m.parameters(), lr=lr), x, y)
        step = hg.compile(step) if compile_ else step
        for i in range(6):
            if i == 3:
                lr.fill_(0.0)   # the same Tensor: its option's identity does not change
            step()
        runs.append(m)
    _same(*runs, "after a learning rate of 0")
    assert step.trace_count == 1 and step._replay is not None


def test_a_re_run_compares_the_state_tensors_only_after_a_write(monkeypatch):
    compared = []
    real = replay._state_as_left
    monkeypatch.setattr(replay, "_state_as_left",
                        lambda tensors, r: compared.append(1) or real(tensors, r))
    m, opt = _model()
    x, y = hg.randn(6, 3), hg.randn(6, 2)
    compiled = hg.compile(_loop(m, opt, x, y))
    for _ in range(4):
        compiled()
        float(compiled().detach().sum())   # reading an output writes no state
    assert compared == []
    m.fc1.weight.requires_grad_(True)   # a write, changing nothing
    compiled()
    assert compared == [1] and compiled._replay is not None


def _weighted_loop(m, opt):
    return _train(opt, lambda x, y, w: F.mse_loss(m(x) * w, y))


def _run_weighted(plans, w, changed):
    """Five calls of a weighted step, eager and compiled; the fourth with the arguments
    ``changed(me, mc)`` gives (a call keyed differently from the re-run calls before)."""
    x, y = hg.randn(6, 3), hg.randn(6, 2)
    (me, oe), (mc, oc) = _model(), _model()
    eager, compiled = _weighted_loop(me, oe), hg.compile(_weighted_loop(mc, oc))
    for i in range(5):
        args_e = args_c = (x, y, w)
        if i == 3:
            plans.clear()
            args_e, args_c = changed(me, x, y), changed(mc, x, y)
        np.testing.assert_allclose(_arr(compiled(*args_c)), _arr(eager(*args_e)), rtol=1e-5,
                                   err_msg=f"call {i}")
        _same(me, mc, f"after call {i}")
        if i == 3:
            assert plans == [1]


def test_one_tensor_passed_twice_is_keyed_again(plans):
    _run_weighted(plans, hg.randn(6, 2), lambda m, x, y: (x, y, y))


def test_a_state_tensor_passed_as_an_argument_is_keyed_again(plans):
    _run_weighted(plans, hg.randn(2), lambda m, x, y: (x, y, m.fc2.bias))
