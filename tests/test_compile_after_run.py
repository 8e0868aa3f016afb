"""A compiled step's own ``losses.append(...)`` and ``calls += 1`` done again after each
run (docs/modes.md, "Side effects"): one program, the list and the counter as eagerly.

The step's Python appending detached Tensors or read values to a list, or counting with
``+= k``, where one closure variable or global names the list or the number and nothing
else of the step reads it, stays one program; anything else about it (a read, an alias
of a parameter, a hook writing it) runs the step eagerly, as before.
"""
import warnings

import numpy as np
import pytest

import hookgrad as hg
from hookgrad import nn

APPENDED_LOSSES = []   # appended to by a step below; no other function here names it
STEPS_TAKEN = 0        # counted by a step below


def _setup():
    hg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    return model, hg.optim.SGD(model.parameters(), lr=0.1)


def _train(model, opt, x):
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    return loss


def _xs(n=4):
    rng = np.random.default_rng(0)
    return [hg.tensor(rng.standard_normal((5, 3)).astype(np.float32)) for _ in range(n)]


def _run(make_step, compiled):
    """``make_step(model, opt) -> (step, what to compare)`` called 4 times; the warnings."""
    model, opt = _setup()
    step, kept = make_step(model, opt)
    f = hg.compile(step) if compiled else step
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outs = [f(x) for x in _xs()]
    return kept(), outs, f, [str(w.message) for w in caught if "runs eagerly" in str(w.message)]


def _values(v):
    if isinstance(v, hg.Tensor):
        return ("T", v.requires_grad, type(v.grad_fn).__name__, np.asarray(v.detach()))
    if isinstance(v, (list, tuple)):
        return [_values(u) for u in v]
    return v


def _same(a, b):
    if isinstance(a, list):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v)
    elif isinstance(a, tuple):
        assert a[:3] == b[:3]
        np.testing.assert_allclose(a[3], b[3], rtol=1e-5)
    else:
        assert type(a) is type(b)
        np.testing.assert_allclose(a, b, rtol=1e-5)


def _compare(make_step):
    eager, *_ = _run(make_step, False)
    compiled, _, f, ran = _run(make_step, True)
    _same(_values(compiled), _values(eager))
    return f, ran


def closure_and_global_lists(model, opt):
    del APPENDED_LOSSES[:]
    values = []

    def step(x):
        loss = _train(model, opt, x)
        APPENDED_LOSSES.append(loss.detach())
        values.append(loss.item())
        values.append((loss * 2).item())
        return loss.detach()
    return step, lambda: [list(APPENDED_LOSSES), values]


def test_appends_of_detached_tensors_and_values_stay_one_program():
    f, ran = _compare(closure_and_global_lists)
    assert ran == [] and f.trace_count == 1
    assert len(APPENDED_LOSSES) == 4 and all(type(v) is hg.Tensor for v in APPENDED_LOSSES)


def test_the_list_a_name_holds_now_is_appended_to():
    lists = [[]]
    model, opt = _setup()

    def step(x):
        loss = model(x).sum()
        box.append(loss.detach())
        return loss
    box = lists[0]
    f = hg.compile(step)
    xs = _xs()
    f(xs[0]), f(xs[1])
    box = []   # rebound between calls, as eagerly the next append finds the new list
    lists.append(box)
    f(xs[2])
    assert [len(b) for b in lists] == [2, 1] and f.trace_count == 1


def test_a_name_holding_nothing_to_append_to_raises_as_eagerly():
    model, opt = _setup()

    def step(x):
        out = model(x).sum()
        sink.append(out.detach())
        return out
    sink = []
    f = hg.compile(step)
    f(_xs()[0])
    sink = None
    with pytest.raises(AttributeError, match="'NoneType' object has no attribute 'append'"):
        f(_xs()[1])


@pytest.mark.parametrize("what", ["read", "grad", "parameter", "extend"])
def test_anything_else_about_the_list_runs_the_step_eagerly(what):
    def make(model, opt):
        kept = []

        def step(x):
            loss = _train(model, opt, x)
            if what == "read":
                kept.append(loss.detach())
                return len(kept)
            if what == "grad":   # it requires grad: eagerly it keeps its graph
                kept.append(loss * 1)
            elif what == "parameter":   # aliases the parameter: eagerly it changes with it
                kept.append(model[0].bias.detach())
            else:
                kept.extend([loss.detach()])
            return 0
        return step, lambda: kept
    f, ran = _compare(make)
    assert len(ran) == 1 and "changed a list" in ran[0]


def test_appended_values_and_a_branch_compose():
    def make(model, opt):
        kept = []

        def step(x):
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            if loss.item() < 0.05:   # a program per branch (test_compile_branches.py)
                loss = loss * 2
            opt.step()
            kept.append(loss.item())
            return loss.detach()
        return step, lambda: kept
    f, ran = _compare(make)
    assert ran == [] and f.trace_count >= 1


def test_counters_move_on_every_call_in_one_program():
    global STEPS_TAKEN
    STEPS_TAKEN = 0
    model, opt = _setup()
    calls = 0
    left = 10

    def step(x):
        global STEPS_TAKEN
        nonlocal calls, left
        calls += 1
        left -= 2
        STEPS_TAKEN += 1
        return _train(model, opt, x)
    f = hg.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # one program, no new one per count
        for x in _xs():
            f(x)
    assert (calls, left, STEPS_TAKEN) == (4, 2, 4) and f.trace_count == 1
    calls = 100   # set between calls: counted on from there, as eagerly
    f(_xs()[0])
    assert calls == 101 and f.trace_count == 1


def test_a_counter_the_step_reads_runs_it_eagerly():
    def make(model, opt):
        seen = [0]

        def step(x):
            seen[0] += 1          # an item of a list: the step's own Python
            loss = _train(model, opt, x)
            return loss * (seen[0] % 2)
        return step, lambda: seen

    def make_read(model, opt):
        calls = 0

        def step(x):
            nonlocal calls
            calls += 1
            return _train(model, opt, x) * calls   # the program would bake it in
        return step, lambda: calls
    for m in (make, make_read):
        f, ran = _compare(m)
        assert len(ran) == 1
