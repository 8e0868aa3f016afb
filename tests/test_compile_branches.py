"""A compiled step whose own Python branches on a value it reads (docs/modes.md, "Side
effects"): a program per branch, each call checked before anything is written back.

``if loss.item() > limit:`` and ``if torch.isnan(loss):`` take, while traced, the branch
the last eager run's values took; the program gives the values, and a call whose values
take another branch runs that branch's program (or, the first time, runs eagerly). Every
call observes what the eager step observes.
"""
import warnings

import jax
import numpy as np
import pytest

import hookgrad as hg
from hookgrad import nn
from hookgrad._compile import speculate
from hookgrad.compile import TracedValueError

# losses that cross 1.0 back and forth: the branch changes between calls
SCALES = [0.3, 3.0, 0.3, 3.0, 0.2, 2.5, 0.4, 2.0, 0.3, 3.0]


def _program(body):
    """A model and a step calling ``body(loss, x)`` between its forward and backward."""
    hg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    opt = hg.optim.SGD(model.parameters(), lr=0.05)

    def step(x):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss, out = body(loss, x)
        loss.backward()
        opt.step()
        return out
    return model, step


def _calls(body, compiled, scales=SCALES, **kw):
    model, step = _program(body)
    f = hg.compile(step, **kw) if compiled else step
    rng = np.random.default_rng(1)
    xs = [hg.tensor(rng.standard_normal((5, 3)).astype(np.float32) * s) for s in scales]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outs = [f(x) for x in xs]
    params = [p.detach().numpy().copy() for p in model.parameters()]
    return outs, params, f, [str(w.message) for w in caught]


def _same_as_eager(body, **kw):
    eager, pe, _, _ = _calls(body, False)
    compiled, pc, f, said = _calls(body, True, **kw)
    assert [type(v) for v in compiled] == [type(v) for v in eager]
    np.testing.assert_allclose(np.array(compiled, float), np.array(eager, float), rtol=1e-5)
    for a, b in zip(pc, pe):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    return f, said


def halve_big_losses(loss, x):
    if loss.item() > 1.0:
        return loss * 0.5, 1
    return loss, 0


def test_a_branch_that_changes_between_calls_has_one_program_per_branch():
    f, said = _same_as_eager(halve_big_losses)
    assert f.trace_count == 2
    split = [w for w in said if "the step is split" in w]
    assert len(split) == 1 and "test_compile_branches.py:" in split[0]
    assert not [w for w in said if "runs eagerly" in w]


def test_a_branch_on_a_tensor_comparison_and_on_nan():
    def body(loss, x):
        if hg.isnan(loss) or not hg.isfinite(loss).all():
            return loss * 0, -1
        return (loss * 2, 1) if loss > 1.0 else (loss, 0)
    f, said = _same_as_eager(body)
    assert f.trace_count == 2 and not [w for w in said if "runs eagerly" in w]


def test_two_reads_compared_with_each_other():
    def body(loss, x):
        first = x[:, 0].abs().mean()
        return (loss, 1) if first.item() < loss.item() else (loss * 0.5, 0)
    f, _ = _same_as_eager(body)
    assert 1 <= f.trace_count <= 2


def test_a_returned_value_is_read_after_the_run_in_one_transfer(monkeypatch):
    def body(loss, x):
        return loss, {"loss": loss.item(), "mean": x.mean().item(), "n": x.shape[0]}
    model, step = _program(body)
    f = hg.compile(step)
    fetched = []
    real = jax.device_get
    monkeypatch.setattr(speculate.jax, "device_get", lambda v: fetched.append(len(v)) or real(v))
    x = hg.ones(5, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # not split, not eager: one program
        outs = [f(x) for _ in range(3)]
    assert f.trace_count == 1 and fetched == [2, 2, 2]
    assert all(type(o["loss"]) is float and o["n"] == 5 for o in outs)
    assert outs[0]["mean"] == 1.0


def test_a_value_read_looks_like_the_number_while_traced():
    def body(loss, x):
        v = loss.item()
        assert isinstance(v, float) and not isinstance(v, int)
        return loss, (1 if v > 1.0 else 0)
    f, _ = _same_as_eager(body)
    assert f.trace_count == 2


@pytest.mark.parametrize("use", ["arithmetic", "float", "format", "swallowed"])
def test_using_the_value_itself_runs_the_step_eagerly_naming_the_read(use):
    def body(loss, x):
        v = loss.item()
        if use == "arithmetic":
            return loss, (1 if v * 2 > 1.0 else 0)
        if use == "float":
            return loss, float(v)
        if use == "format":
            return loss, len(f"{v:.3f}")
        try:   # the step's own except cannot hide that the value was needed
            return loss, round(v, 2)
        except Exception:   # noqa: BLE001
            return loss, 0.0
    f, said = _same_as_eager(body)
    eager = [w for w in said if "runs eagerly" in w]
    assert len(eager) == 1 and "test_compile_branches.py:" in eager[0]


def test_a_branch_taken_differently_on_every_call_runs_eagerly_after_a_few():
    def body(loss, x):
        n = 0
        while x.abs().mean().item() > 0.1 * 2 ** n:   # a branch per doubling of x
            n += 1
        return loss, n
    scales = [0.5 * 3 ** k for k in range(8)]
    eager, pe, _, _ = _calls(body, False, scales)
    compiled, pc, f, said = _calls(body, True, scales)
    assert compiled == eager and len(set(eager)) == len(eager)
    for a, b in zip(pc, pe):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    eager_said = [w for w in said if "runs eagerly" in w]
    assert len(eager_said) == 1 and "calls in a row" in eager_said[0]


def test_fullgraph_raises_at_the_read():
    model, step = _program(halve_big_losses)
    before = [p.detach().clone() for p in model.parameters()]
    with pytest.raises(TracedValueError, match=r"\.item\(\)"):
        hg.compile(step, fullgraph=True)(hg.ones(5, 3))
    for b, p in zip(before, model.parameters()):
        assert hg.equal(b, p)


def test_an_error_in_a_branch_is_eagers_and_leaves_the_state():
    def body(loss, x):
        if loss.item() > 1.0:
            raise ValueError("loss too big")
        return loss, 0
    model, step = _program(body)
    f = hg.compile(step)
    small, big = hg.ones(5, 3) * 0.1, hg.ones(5, 3) * 1000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f(small), f(small), f(small)
        before = [p.detach().clone() for p in model.parameters()]
        with pytest.raises(ValueError, match="loss too big"):
            f(big)
    for b, p in zip(before, model.parameters()):
        assert hg.equal(b, p)


def test_with_a_logging_hook_each_branch_stays_one_program():
    logs = {True: [], False: []}

    def run(compiled):
        model, step = _program(halve_big_losses)
        model[0].weight.register_hook(lambda g: logs[compiled].append(g.norm().item()))
        f = hg.compile(step) if compiled else step
        rng = np.random.default_rng(1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs = [f(hg.tensor(rng.standard_normal((5, 3)).astype(np.float32) * s))
                    for s in SCALES]
        return outs, f
    eager, _ = run(False)
    compiled, f = run(True)
    assert compiled == eager and f.trace_count == 2
    np.testing.assert_allclose(logs[True], logs[False], rtol=1e-5)
