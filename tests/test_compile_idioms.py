"""A compiled step observes as the eager step does: the idioms PyTorch users write.

Each idiom is a small training program ``idiom(L, compile)`` written against a library
``L`` (hookgrad or torch) and a ``compile`` to wrap its step with. It runs three calls and
returns everything observable: outputs, parameters, ``.grad``, what hooks kept and counted;
``run`` adds what it printed. Each idiom runs

- eagerly and under ``hookgrad.compile``: the observations are equal;
- eagerly under PyTorch, where installed: equal to hookgrad's eager ones.

``COMPILED`` idioms stay one program (no warning); the others have Python side effects or
read values, run eagerly, and warn once that they do (docs/modes.md, "Side effects").
"""
import contextlib
import io
import warnings

import numpy as np
import pytest

import hookgrad
from tests.differential import close, py, torch

IDIOMS = {}
COMPILED = set()
SPLIT = set()   # compiled per branch the step's Python takes on a value it reads


def idiom(compiled):
    def register(fn):
        IDIOMS[fn.__name__] = fn
        if compiled == "split":
            SPLIT.add(fn.__name__)
        elif compiled:
            COMPILED.add(fn.__name__)
        return fn
    return register


_RNG = np.random.default_rng(0)
_WEIGHTS = [(_RNG.standard_normal((6, 4)) * 0.5, _RNG.standard_normal(6) * 0.1),
            (_RNG.standard_normal((2, 6)) * 0.5, _RNG.standard_normal(2) * 0.1)]
_DATA = [(_RNG.standard_normal((5, 4)), _RNG.standard_normal((5, 2))) for _ in range(3)]


def _mlp(L, norm=False):
    mid = [L.nn.BatchNorm1d(6)] if norm else []
    model = L.nn.Sequential(L.nn.Linear(4, 6), *mid, L.nn.ReLU(), L.nn.Linear(6, 2))
    linears = [model[0], model[-1]]
    with L.no_grad():
        for lin, (w, b) in zip(linears, _WEIGHTS):
            lin.weight.copy_(L.tensor(w, dtype=L.float32))
            lin.bias.copy_(L.tensor(b, dtype=L.float32))
    return model


def _data(L):
    return [(L.tensor(x, dtype=L.float32), L.tensor(y, dtype=L.float32)) for x, y in _DATA]


def _setup(L, **kw):
    model = _mlp(L, **kw)
    return model, L.optim.SGD(model.parameters(), lr=0.1)


def _update(loss, opt):
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss


def _train(L, model, opt):
    def step(x, y):
        loss = L.nn.functional.mse_loss(model(x), y)
        return _update(loss, opt)
    return step


def _state(model):
    return {"params": list(model.parameters()),
            "grads": [p.grad for p in model.parameters()]}


def _loop(L, step):
    return [step(x, y) for x, y in _data(L)]


# --------------------------------------------------------------- hooks that keep or log
@idiom(compiled=True)
def forward_hook_keeps_an_activation(L, compile):
    model, opt = _setup(L)
    acts = {}
    model[0].register_forward_hook(lambda m, a, out: acts.__setitem__("fc1", out.detach()))
    outs = _loop(L, compile(_train(L, model, opt)))
    return {"outs": outs, "acts": acts["fc1"], **_state(model)}


@idiom(compiled=True)
def backward_hook_keeps_a_gradient(L, compile):
    model, opt = _setup(L)
    kept = []

    def keep(m, grad_input, grad_output):
        kept.append(grad_output[0].detach().clone())
    model[-1].register_full_backward_hook(keep)
    outs = _loop(L, compile(_train(L, model, opt)))
    return {"outs": outs, "kept": kept, **_state(model)}


@idiom(compiled=True)
def tensor_hook_logs_an_item(L, compile):
    model, opt = _setup(L)
    norms = []
    model[0].weight.register_hook(lambda g: norms.append(round(g.norm().item(), 5)))
    outs = _loop(L, compile(_train(L, model, opt)))
    return {"outs": outs, "norms": norms, **_state(model)}


@idiom(compiled=True)
def hook_counts_its_calls(L, compile):
    model, opt = _setup(L)
    cnt = [0]

    def count(m, a, out):
        cnt[0] += 1
    model[0].register_forward_hook(count)
    outs = _loop(L, compile(_train(L, model, opt)))
    return {"outs": outs, "count": cnt[0], **_state(model)}


@idiom(compiled=True)
def hook_prints(L, compile):
    model, opt = _setup(L)
    model[0].register_forward_hook(lambda m, a, out: print("fc1 out", tuple(out.shape)))
    return {"outs": _loop(L, compile(_train(L, model, opt))), **_state(model)}


@idiom(compiled=True)
def hook_prints_a_value(L, compile):
    model, opt = _setup(L)
    model[-1].register_forward_hook(lambda m, a, out: print(f"{out.abs().mean().item():.4f}"))
    return {"outs": _loop(L, compile(_train(L, model, opt))), **_state(model)}


@idiom(compiled=True)
def hook_sets_a_module_attribute(L, compile):
    model, opt = _setup(L)

    def record(m, a, out):
        m.last_out = out.detach()
    model[0].register_forward_hook(record)
    outs = _loop(L, compile(_train(L, model, opt)))
    return {"outs": outs, "last": model[0].last_out, **_state(model)}


@idiom(compiled=True)
def post_accumulate_grad_hook_records(L, compile):
    model, opt = _setup(L)
    seen = []
    model[0].bias.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.clone()))
    outs = _loop(L, compile(_train(L, model, opt)))
    return {"outs": outs, "seen": seen, **_state(model)}


@idiom(compiled=False)
def saved_tensor_hooks_record(L, compile):
    model, opt = _setup(L)
    shapes = []

    def pack(t):
        shapes.append(tuple(t.shape))
        return t

    def step(x, y):
        with L.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            loss = L.nn.functional.mse_loss(model(x), y)
        return _update(loss, opt)
    outs = _loop(L, compile(step))
    return {"outs": outs, "shapes": shapes, **_state(model)}


@idiom(compiled=False)
def mod_tracker_in_the_step(L, compile):
    model, opt = _setup(L)
    if L is hookgrad:
        from hookgrad.utils.mod_tracker import ModTracker
    else:
        from torch.distributed._tools.mod_tracker import ModTracker
    seen = []

    def step(x, y):
        with ModTracker() as tracker:
            tracker.register_user_hooks(
                pre_fw_hook=lambda m, i: seen.append(tracker.get_known_fqn(m)))
            loss = L.nn.functional.mse_loss(model(x), y)
            return _update(loss, opt)
    outs = _loop(L, compile(step))
    return {"outs": outs, "seen": seen, **_state(model)}


@idiom(compiled=False)
def hook_stores_a_tensor_read_next_call(L, compile):
    model, opt = _setup(L)
    prev = {}

    def step(x, y):
        out = model(x)
        loss = L.nn.functional.mse_loss(out, y)
        if "out" in prev:
            loss = loss + 0.1 * (out - prev["out"]).pow(2).mean()
        prev["out"] = out.detach()
        return _update(loss, opt)
    outs = _loop(L, compile(step))
    return {"outs": outs, "prev": prev["out"], **_state(model)}


@idiom(compiled=False)
def function_forward_prints(L, compile):
    class Scale(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            print("Scale.forward", tuple(x.shape))
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    model, opt = _setup(L)

    def step(x, y):
        loss = L.nn.functional.mse_loss(Scale.apply(model(x)), y)
        return _update(loss, opt)
    return {"outs": _loop(L, compile(step)), **_state(model)}


@idiom(compiled=True)
def grad_cam_forward_hook_registers_a_tensor_hook(L, compile):
    # the classic Grad-CAM hooks: the forward hook keeps the activation and, on it, a
    # tensor hook (made while the step runs) keeps its gradient, both by layer name
    model, opt = _setup(L)
    acts, grads = {}, {}

    def keep(m, a, out):
        name = type(m).__name__
        acts[name] = out.detach()
        out.register_hook(lambda g: grads.__setitem__(name, g.detach()))
    model[0].register_forward_hook(keep)
    outs = _loop(L, compile(_train(L, model, opt)))
    return {"outs": outs, "acts": acts, "grads": grads, **_state(model)}


@idiom(compiled=False)
def hook_replaces_a_gradient_from_the_second_call(L, compile):
    # compiled, it runs on the host after the program; when it returns a gradient, what
    # that run's host calls did is undone and the call runs eagerly
    model, opt = _setup(L)
    calls = [0]

    def halve_later(g):
        calls[0] += 1
        if calls[0] > 1:
            return g * 0.5
    model[0].weight.register_hook(halve_later)
    outs = _loop(L, compile(_train(L, model, opt)))
    return {"outs": outs, "calls": calls[0], **_state(model)}


@idiom(compiled=True)
def step_uses_an_activation_a_hook_kept(L, compile):
    model, opt = _setup(L)
    acts = {}
    model[0].register_forward_hook(lambda m, a, out: acts.__setitem__("fc1", out))

    def step(x, y):
        loss = L.nn.functional.mse_loss(model(x), y) + 0.01 * acts["fc1"].pow(2).mean()
        return _update(loss, opt)
    outs = _loop(L, compile(step))
    return {"outs": outs, "act": acts["fc1"].detach(), **_state(model)}


@idiom(compiled=False)
def hook_and_step_log_to_one_list(L, compile):
    model, opt = _setup(L)
    log = []
    model[0].register_forward_hook(lambda m, a, out: log.append(("fc1", tuple(out.shape))))
    train = _train(L, model, opt)

    def step(x, y):
        loss = train(x, y)
        log.append("step")
        return loss
    outs = _loop(L, compile(step))
    return {"outs": outs, "log": log, **_state(model)}


# ---------------------------------------------------------------- the step's own Python
def _train_then(L, compile, then):
    """A training step returning ``then(loss)``, run by ``_loop``."""
    model, opt = _setup(L)
    train = _train(L, model, opt)
    return {"outs": _loop(L, compile(lambda x, y: then(train(x, y)))), **_state(model)}


@idiom(compiled=False)
def step_prints_its_loss(L, compile):
    def then(loss):
        print(f"loss {loss.item():.4f}")
        return loss
    return _train_then(L, compile, then)


@idiom(compiled=True)
def losses_kept_in_a_list(L, compile):
    losses = []
    out = _train_then(L, compile, lambda loss: losses.append(loss.detach()) or loss)
    return {"losses": losses, **out}


def _halve_when(L, compile, big):
    """A step taking a smaller step where ``big(loss)``, a branch on the loss's value."""
    model, opt = _setup(L)

    def step(x, y):
        loss = L.nn.functional.mse_loss(model(x), y)
        if big(loss):
            loss = loss * 0.5
        return _update(loss, opt)
    return {"outs": _loop(L, compile(step)), **_state(model)}


@idiom(compiled="split")
def branch_on_a_loss_value(L, compile):
    return _halve_when(L, compile, lambda loss: loss.item() > 0.5)


@idiom(compiled="split")
def branch_on_a_tensor_comparison(L, compile):
    return _halve_when(L, compile, lambda loss: loss > 0.9)   # ``bool()`` of a Tensor


@idiom(compiled="split")
def step_skipped_on_a_nan_loss(L, compile):
    model, opt = _setup(L)
    skipped = []

    def step(x, y):
        loss = L.nn.functional.mse_loss(model(x), y) * (y.sum() > -100).float()
        if L.isnan(loss).any() or not L.isfinite(loss):
            return None
        return _update(loss, opt)
    return {"outs": _loop(L, compile(step)), "skipped": skipped, **_state(model)}


@idiom(compiled=True)
def step_returns_loss_item(L, compile):
    return _train_then(L, compile, lambda loss: {"loss": loss.item(), "half": (loss / 2).item()})


@idiom(compiled=False)
def loss_values_kept_in_a_dict_of_lists(L, compile):
    model, opt = _setup(L)
    history = {"loss": [], "out": []}
    train = _train(L, model, opt)

    def step(x, y):
        out = model(x)
        loss = train(x, y)
        history["loss"].append(loss.item())    # a list held by a dict: not replayed
        return loss, out.detach()
    outs = _loop(L, compile(step))
    return {"history": history, "outs": outs, **_state(model)}


@idiom(compiled=True)
def loss_values_kept_in_a_list(L, compile):
    values, kept = [], []

    def then(loss):
        values.append(loss.item())
        kept.append((loss * 2).detach())
        return loss
    return {"values": values, "kept": kept, **_train_then(L, compile, then)}


@idiom(compiled=False)
def the_step_reads_the_list_it_appends_to(L, compile):
    losses = []

    def then(loss):
        losses.append(loss.detach())
        return loss, len(losses)
    return {"losses": losses, **_train_then(L, compile, then)}


@idiom(compiled=True)
def step_counts_its_calls(L, compile):
    model, opt = _setup(L)
    calls = 0
    train = _train(L, model, opt)

    def step(x, y):
        nonlocal calls
        calls += 1
        return train(x, y)
    outs = _loop(L, compile(step))
    return {"outs": outs, "calls": calls, **_state(model)}


@idiom(compiled=False)
def scheduler_steps_inside(L, compile):
    model, opt = _setup(L)
    sched = L.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    train = _train(L, model, opt)

    def step(x, y):
        loss = train(x, y)
        sched.step()
        return loss
    outs = _loop(L, compile(step))
    return {"outs": outs, "lr": opt.param_groups[0]["lr"], **_state(model)}


# ---------------------------------------------------------- pure steps: one program each
@idiom(compiled=True)
def forward_hook_returns_a_new_output(L, compile):
    model, opt = _setup(L)
    model[0].register_forward_hook(lambda m, a, out: out * 2)
    return {"outs": _loop(L, compile(_train(L, model, opt))), **_state(model)}


@idiom(compiled=True)
def forward_pre_hook_changes_the_input(L, compile):
    model, opt = _setup(L)
    model[-1].register_forward_pre_hook(lambda m, a: (a[0] + 1,))
    return {"outs": _loop(L, compile(_train(L, model, opt))), **_state(model)}


@idiom(compiled=True)
def full_backward_hook_scales_grad_input(L, compile):
    model, opt = _setup(L)
    model[-1].register_full_backward_hook(lambda m, gi, go: (gi[0] * 0.5,))
    return {"outs": _loop(L, compile(_train(L, model, opt))), **_state(model)}


@idiom(compiled=True)
def tensor_hook_clamps_a_gradient(L, compile):
    model, opt = _setup(L)
    model[0].weight.register_hook(lambda g: g.clamp(-0.05, 0.05))
    return {"outs": _loop(L, compile(_train(L, model, opt))), **_state(model)}


@idiom(compiled=True)
def hook_added_between_calls(L, compile):
    model, opt = _setup(L)
    step = compile(_train(L, model, opt))
    outs = []
    for i, (x, y) in enumerate(_data(L)):
        if i == 1:
            model[0].weight.register_hook(lambda g: g * 0.0)
        outs.append(step(x, y))
    return {"outs": outs, **_state(model)}


@idiom(compiled=True)
def counting_hook_removed_after_the_first_call(L, compile):
    model, opt = _setup(L)
    cnt = [0]

    def count(m, a, out):
        cnt[0] += 1
    handle = model[0].register_forward_hook(count)
    step = compile(_train(L, model, opt))
    outs = []
    for i, (x, y) in enumerate(_data(L)):
        outs.append(step(x, y))
        handle.remove()
    return {"outs": outs, "count": cnt[0], **_state(model)}


@idiom(compiled=True)
def train_and_eval_switch(L, compile):
    model, opt = _setup(L, norm=True)
    step = compile(_train(L, model, opt))
    outs = []
    for i, (x, y) in enumerate(_data(L)):
        model.train(i != 1)
        outs.append(step(x, y))
    return {"outs": outs, "running_mean": model[1].running_mean, **_state(model)}


@idiom(compiled=True)
def gradient_accumulation_with_an_int_argument(L, compile):
    model, opt = _setup(L)

    def step(x, y, i):
        loss = L.nn.functional.mse_loss(model(x), y) / 2
        loss.backward()
        if i % 2 == 1:
            opt.step()
            opt.zero_grad()
        return loss
    step = compile(step)
    outs = [step(x, y, i) for i, (x, y) in enumerate(_data(L) * 2)]
    return {"outs": outs, **_state(model)}


@idiom(compiled=True)
def no_grad_evaluation(L, compile):
    model, _ = _setup(L)

    def evaluate(x, y):
        with L.no_grad():
            return L.nn.functional.mse_loss(model(x), y), model(x).requires_grad
    evaluate = compile(evaluate)
    return {"outs": [evaluate(x, y) for x, y in _data(L)], **_state(model)}


@idiom(compiled=True)
def clip_grad_norm_returned(L, compile):
    model, opt = _setup(L)

    def step(x, y):
        L.nn.functional.mse_loss(model(x), y).backward()
        total = L.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        opt.zero_grad()
        return total
    return {"outs": _loop(L, compile(step)), **_state(model)}


@idiom(compiled=True)
def a_dict_returned(L, compile):
    model, opt = _setup(L)

    def step(x, y):
        out = model(x)
        loss = L.nn.functional.mse_loss(out, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return {"loss": loss, "out": out.detach(), "n": 5}
    return {"outs": _loop(L, compile(step)), **_state(model)}


@idiom(compiled=True)
def lr_changed_between_calls(L, compile):
    model, opt = _setup(L)
    step = compile(_train(L, model, opt))
    outs = []
    for i, (x, y) in enumerate(_data(L)):
        opt.param_groups[0]["lr"] = 0.1 / (i + 1)
        outs.append(step(x, y))
    return {"outs": outs, **_state(model)}


@idiom(compiled=True)
def requires_grad_switched_between_calls(L, compile):
    model, opt = _setup(L)
    step = compile(_train(L, model, opt))
    outs = []
    for i, (x, y) in enumerate(_data(L)):
        model[0].weight.requires_grad_(i != 1)
        outs.append(step(x, y))
    return {"outs": outs, **_state(model)}


@idiom(compiled=True)
def a_global_scale_changed_between_calls(L, compile):
    model, opt = _setup(L)
    cfg = {"scale": 1.0}

    def step(x, y):
        loss = L.nn.functional.mse_loss(model(x), y) * cfg["scale"]
        return _update(loss, opt)
    step = compile(step)
    outs = []
    for i, (x, y) in enumerate(_data(L)):
        cfg["scale"] = float(i + 1)
        outs.append(step(x, y))
    return {"outs": outs, **_state(model)}


@idiom(compiled=True)
def a_hook_flag_changed_between_calls(L, compile):
    model, opt = _setup(L)
    flags = {"clip": False}

    def clip(g):
        return g.clamp(-0.01, 0.01) if flags["clip"] else g
    model[0].weight.register_hook(clip)
    step = compile(_train(L, model, opt))
    outs = []
    for i, (x, y) in enumerate(_data(L)):
        flags["clip"] = i == 1
        outs.append(step(x, y))
    return {"outs": outs, **_state(model)}


@idiom(compiled=True)
def a_host_hook_logs_values(L, compile):
    model, opt = _setup(L)
    norms = []

    def log(g):
        norms.append(round(g.norm().item(), 5))
    if L is hookgrad:
        log = hookgrad.compile.host_hook(log)
    model[0].weight.register_hook(log)
    outs = _loop(L, compile(_train(L, model, opt)))
    return {"outs": outs, "norms": norms, **_state(model)}


@idiom(compiled=True)
def hook_raises_on_the_second_call(L, compile):
    model, opt = _setup(L)
    calls = [0]

    def check(m, a, out):
        calls[0] += 1
        if calls[0] == 2:
            raise ValueError("second call")
    model[0].register_forward_hook(check)
    step = compile(_train(L, model, opt))
    outs = []
    for x, y in _data(L):
        try:
            outs.append(step(x, y))
        except ValueError as e:
            outs.append(str(e))
    return {"outs": outs, "calls": calls[0], **_state(model)}


# ----------------------------------------------------------------------------- running
def run(name, L, compiled):
    """(observations, the warnings issued) of idiom ``name`` under ``L``."""
    made = []

    def compile_(fn):
        made.append(hookgrad.compile(fn))
        return made[-1]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = IDIOMS[name](L, compile_ if compiled else (lambda fn: fn))
    said = [str(w.message) for w in caught]
    return {"observed": py(got), "printed": out.getvalue()}, \
        [w for w in said if "runs eagerly" in w], made, \
        [w for w in said if "the step is split" in w]


@pytest.mark.parametrize("name", sorted(IDIOMS))
def test_compiled_step_observes_what_the_eager_step_does(name):
    eager, *_ = run(name, hookgrad, False)
    compiled, warned, made, split = run(name, hookgrad, True)
    assert close(compiled, eager, tol=1e-5), (compiled, eager)
    if name in COMPILED:
        assert not warned and not split and all(cf.trace_count >= 1 for cf in made)
    elif name in SPLIT:   # a program per branch, the read's line said once
        assert not warned and all(cf.trace_count >= 1 for cf in made)
        assert split and all("test_compile_idioms.py:" in w for w in split)
        assert len(split) == len(set(split))
    else:   # eager semantics kept by running eagerly, said once
        assert len(warned) == 1 and f"{made[0].__name__} runs eagerly" in warned[0]


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("name", sorted(IDIOMS))
def test_eager_observations_match_pytorch(name):
    ours, *_ = run(name, hookgrad, False)
    theirs, *_ = run(name, torch, False)
    assert close(ours, theirs, tol=1e-4), (ours, theirs)


@pytest.mark.slow
@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("name", sorted(IDIOMS))
def test_torch_compile_observes_what_eager_pytorch_does(name):
    # docs/modes.md's claim about torch.compile (Dynamo, no inductor: no C++ compiler)
    torch._dynamo.reset()
    theirs, *_ = run(name, torch, False)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = IDIOMS[name](torch, lambda fn: torch.compile(fn, backend="eager"))
    assert close({"observed": py(got), "printed": out.getvalue()}, theirs, tol=1e-4)


def test_there_are_enough_idioms():
    assert len(IDIOMS) >= 25 and len(COMPILED) >= 10 and len(SPLIT) >= 3 and \
        len(IDIOMS) - len(COMPILED) - len(SPLIT) >= 10
