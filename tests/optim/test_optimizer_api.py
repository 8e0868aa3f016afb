"""The Optimizer base class: step and state-dict hooks, argument errors (as PyTorch's),
required defaults, and a torch-style custom subclass."""
import re
import types

import numpy as np
import pytest

import hookgrad
from hookgrad import optim
from tests.optim._common import INIT, arr, leaf, torch, torch_test


# ------------------------------------------------------------------ hooks

def test_step_hooks():
    p = leaf(INIT[0])
    p.grad = hookgrad.tensor(np.ones(3, np.float32))
    opt = optim.SGD([p], lr=0.1)
    log = []
    h1 = optim.register_optimizer_step_pre_hook(lambda o, a, k: log.append(("gpre", a[0] is o)))
    h2 = opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", len(a), dict(k))))
    h3 = opt.register_step_post_hook(lambda o, a, k: log.append(("post", p._version)))
    h4 = optim.register_optimizer_step_post_hook(lambda o, a, k: log.append(("gpost",)))
    try:
        opt.step()
        assert log == [("gpre", True), ("pre", 1, {}), ("post", 1), ("gpost",)]
        log.clear()
        h1.remove()
        h4.remove()
        # a pre-hook can replace the arguments: here it supplies a closure
        opt.register_step_pre_hook(lambda o, a, k: (a, {"closure": lambda: 42.0}))
        assert opt.step() == 42.0
        assert log == [("pre", 1, {}), ("post", 2)]
        opt.register_step_pre_hook(lambda o, a, k: "bad")
        with pytest.raises(RuntimeError, match="must return None or a tuple"):
            opt.step()
    finally:
        for h in (h1, h2, h3, h4):
            h.remove()


def test_state_dict_hooks():
    p = leaf(INIT[0])
    opt = optim.SGD([p], lr=0.1)
    calls = []
    opt.register_state_dict_pre_hook(lambda o: calls.append("pre"))
    opt.register_state_dict_post_hook(lambda o, sd: dict(sd, extra=1))
    opt.register_load_state_dict_pre_hook(lambda o, sd: calls.append("lpre"))
    opt.register_load_state_dict_post_hook(lambda o: calls.append("lpost"))
    opt.register_state_dict_pre_hook(lambda o: calls.append("first"), prepend=True)
    sd = opt.state_dict()
    assert sd["extra"] == 1 and calls == ["first", "pre"]
    opt.load_state_dict(sd)
    assert calls[2:] == ["lpre", "lpost"]


# ------------------------------------------------------------------ argument errors

ERRORS = [
    (lambda p: optim.SGD(p, lr=-1), ValueError, "Invalid learning rate: -1"),
    (lambda p: optim.SGD(p, lr=0.1, momentum=-0.5), ValueError, "Invalid momentum value: -0.5"),
    (lambda p: optim.SGD(p, weight_decay=-1), ValueError, "Invalid weight_decay value: -1"),
    (lambda p: optim.SGD(p, nesterov=True), ValueError,
     "Nesterov momentum requires a momentum and zero dampening"),
    (lambda p: optim.SGD(p, momentum=0.9, dampening=0.1, nesterov=True), ValueError,
     "Nesterov momentum requires a momentum and zero dampening"),
    (lambda p: optim.Adam(p, lr=-0.1), ValueError, "Invalid learning rate: -0.1"),
    (lambda p: optim.Adam(p, eps=-1e-8), ValueError, "Invalid epsilon value: -1e-08"),
    (lambda p: optim.Adam(p, betas=(1.0, 0.9)), ValueError,
     "Invalid beta parameter at index 0: 1.0"),
    (lambda p: optim.Adam(p, betas=(0.9, -0.1)), ValueError,
     "Invalid beta parameter at index 1: -0.1"),
    (lambda p: optim.Adam(p, betas=(0.9, 0)), ValueError,
     "betas must be either both floats or both Tensors"),
    (lambda p: optim.AdamW(p, weight_decay=-0.1), ValueError, "Invalid weight_decay value: -0.1"),
    (lambda p: optim.RMSprop(p, alpha=-0.1), ValueError, "Invalid alpha value: -0.1"),
    (lambda p: optim.RMSprop(p, momentum=-1), ValueError, "Invalid momentum value: -1"),
    (lambda p: optim.RMSprop(p, eps=-1), ValueError, "Invalid epsilon value: -1"),
    (lambda p: optim.Adagrad(p, lr_decay=-1), ValueError, "Invalid lr_decay value: -1"),
    (lambda p: optim.Adagrad(p, initial_accumulator_value=-1), ValueError,
     "Invalid initial_accumulator_value value: -1"),
    (lambda p: optim.Adagrad(p, eps=-1), ValueError, "Invalid epsilon value: -1"),
    (lambda p: optim.SGD(p, lr=hookgrad.tensor([0.1, 0.2])), ValueError,
     "Tensor lr must be 1-element"),
    (lambda p: optim.SGD([], lr=0.1), ValueError, "optimizer got an empty parameter list"),
    (lambda p: optim.SGD(p[0], lr=0.1), TypeError,
     "params argument given to the optimizer should be an iterable of Tensors or dicts, but "
     "got hookgrad.FloatTensor"),
    (lambda p: optim.SGD([1.0], lr=0.1), TypeError,
     "optimizer can only optimize Tensors, but one of the params is float"),
    (lambda p: optim.SGD([p[0] * 2], lr=0.1), ValueError, "can't optimize a non-leaf Tensor"),
    (lambda p: optim.SGD([{"params": [p[0]]}, {"params": [p[0]]}], lr=0.1), ValueError,
     "some parameters appear in more than one parameter group"),
    (lambda p: optim.SGD([{"params": {p[0]}}], lr=0.1), TypeError,
     "optimizer parameters need to be organized in ordered collections"),
    (lambda p: optim.SGD(p, lr=0.1).add_param_group([p[0]]), TypeError,
     "param_group must be a dict, but got <class 'list'>"),
    (lambda p: optim.from_optax(p, "adam"), TypeError,
     "from_optax expects an optax.GradientTransformation, but got str"),
]


@pytest.mark.parametrize("make,exc,match", ERRORS, ids=[m[:40] for _, _, m in ERRORS])
def test_invalid_arguments(make, exc, match):
    ps = [leaf(a) for a in INIT]
    with pytest.raises(exc, match=_escape(match)):
        make(ps)


def _escape(s):
    return re.escape(s)


@torch_test
@pytest.mark.parametrize("make,exc,match", ERRORS[:-1], ids=[m[:40] for _, _, m in ERRORS[:-1]])
def test_invalid_arguments_torch_agrees(make, exc, match):
    # the same constructor calls, with the names bound to torch instead of hookgrad
    as_torch = types.FunctionType(make.__code__, dict(make.__globals__, optim=torch.optim,
                                                      hookgrad=torch))
    ps = [torch.nn.Parameter(torch.tensor(a)) for a in INIT]
    with pytest.raises(exc) as info:
        as_torch(ps)
    assert type(info.value) is exc
    # torch names its own tensor types; the rest of the text is the same
    assert str(info.value).replace("torch.", "hookgrad.").startswith(match)


def test_required_default_and_duplicates():
    class Custom(optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": optim.optimizer.required})

        def step(self, closure=None):
            return None

    p = leaf(INIT[0])
    with pytest.raises(ValueError, match="didn't specify a value of required optimization "
                                         "parameter lr"):
        Custom([p])
    assert repr(optim.optimizer.required) == "<required parameter>"
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([p, p], lr=0.1)


def test_generic_subclass_keeps_state_like_torch():
    class SignSGD(optim.Optimizer):
        def __init__(self, params, lr=0.1):
            super().__init__(params, {"lr": lr})

        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    st = self.state[p]
                    st["n"] = st.get("n", 0) + 1
                    p.add_(p.grad.sign(), alpha=-group["lr"])

    p = leaf(INIT[0])
    opt = SignSGD([p])
    p.grad = hookgrad.tensor(np.array([1.0, -2.0, 0.5], np.float32))
    with hookgrad.no_grad():
        opt.step()
        opt.step()
    np.testing.assert_allclose(arr(p), INIT[0] - 0.2 * np.array([1, -1, 1]), rtol=1e-6)
    assert opt.state_dict()["state"] == {0: {"n": 2}}


def test_a_groups_params_list_counts_its_changes_and_pickles_as_a_list():
    # a compiled step's re-run checks one counter for it (hookgrad._watch), not its items
    import copy
    import pickle
    from hookgrad import _watch
    w = [leaf([1.0, 2.0]), leaf([3.0])]
    opt = optim.SGD(w, lr=0.1)
    params = opt.param_groups[0]["params"]
    assert isinstance(params, list) and params == w and params is not w
    for change in (lambda p: p.append(leaf([4.0])), lambda p: p.pop(),
                   lambda p: p.__setitem__(0, w[0]), lambda p: p.reverse(),
                   lambda p: p.extend([]), lambda p: p.__iadd__([]), lambda p: p.clear()):
        before = _watch.epoch()
        change(params)
        assert _watch.epoch() == before + 1
    back = pickle.loads(pickle.dumps(type(params)([1, 2])))
    assert back == [1, 2] and type(back) is type(params)
    assert copy.deepcopy(type(params)([3])) == [3]
