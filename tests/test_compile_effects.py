"""What a compiled step does where its Python cannot be one program: values read on the host,
JAX's tracer errors, kept tracers, ``fullgraph=True`` (docs/modes.md, "Side effects").

No raw JAX exception reaches the user: each read runs the step eagerly (one warning, at
the line that called the step), raises hookgrad's ``TracedValueError`` under
``fullgraph=True``, and a Tensor kept past a trace raises hookgrad's error where it is used.
"""
import os
import traceback
import types
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hookgrad as hg
from hookgrad import nn
from hookgrad._dynamo.exc import Unsupported
from hookgrad.compile import TracedValueError

# each needs the concrete value of a Tensor: hookgrad's reads, then JAX's own errors
READS = {
    "item": lambda t: t.sum().item(),
    "float": lambda t: float(t.sum()),
    "int": lambda t: int(t.sum()),
    "bool": lambda t: bool(t.sum() > 0),
    "if": lambda t: 1 if t.sum() > 0 else 0,
    "tolist": lambda t: t.tolist(),
    "numpy": lambda t: t.detach().numpy(),
    "np.asarray": lambda t: np.asarray(t.detach()),
    "print": lambda t: print(t),
    "ConcretizationTypeError": lambda t: jnp.asarray(t.detach()).sum().item(),
    "TracerBoolConversionError": lambda t: bool(jnp.asarray(t.detach()).sum() > 0),
    "TracerIntegerConversionError": lambda t: [0, 1][(jnp.asarray(t.detach()).sum() > 0)
                                                     .astype(int)],
    "TracerArrayConversionError": lambda t: np.asarray(jnp.asarray(t.detach())),
}
_PACKAGE = os.path.dirname(hg.__file__) + os.sep
JAX_ERRORS = tuple(getattr(jax.errors, n) for n in READS if hasattr(jax.errors, n))


def _program(where, read, fullgraph=False):
    """A model, a step and a list of what was read, with ``read`` at ``where``."""
    hg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    opt = hg.optim.SGD(model.parameters(), lr=0.1)
    got = []
    if where == "tensor hook":
        model[0].weight.register_hook(lambda g: got.append(read(g)) and None)
    elif where == "forward hook":
        model[0].register_forward_hook(lambda m, a, out: got.append(read(out)) and None)
    elif where == "backward hook":
        model[2].register_full_backward_hook(lambda m, gi, go: got.append(read(go[0])) and None)

    def step(x):
        loss = model(x).pow(2).mean()
        if where == "step":   # (an append alone would be replayed: tests/test_compile_after_run.py)
            got.insert(len(got), read(loss))
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return model, step, got


HOOKS = ["tensor hook", "forward hook", "backward hook"]


def _same_as_eager(where, read, capsys, fullgraph=False):
    """Three calls eagerly and compiled: the same losses, reads, prints and parameters;
    the compiled step's warnings and trace count."""
    x = hg.ones(2, 3)
    model_e, step_e, got_e = _program(where, READS[read])
    eager = [step_e(x).item() for _ in range(3)]
    printed_e = capsys.readouterr().out
    model_c, step_c, got_c = _program(where, READS[read])
    compiled = hg.compile(step_c, fullgraph=fullgraph)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        losses = [compiled(x).item() for _ in range(3)]
    assert capsys.readouterr().out == printed_e
    np.testing.assert_allclose(losses, eager, rtol=1e-6)
    assert len(got_c) == len(got_e) == 3 and repr(got_c) == repr(got_e)
    for pe, pc in zip(model_e.parameters(), model_c.parameters()):
        np.testing.assert_allclose(pc.detach().numpy(), pe.detach().numpy(), rtol=1e-6)
    return [w for w in caught if "runs eagerly" in str(w.message)], compiled.trace_count


@pytest.mark.parametrize("read", sorted(READS))
def test_a_value_read_in_the_step_runs_it_eagerly_with_one_warning(read, capsys):
    ran, _ = _same_as_eager("step", read, capsys)
    assert len(ran) == 1 and ran[0].filename == __file__
    if read not in ("bool", "if", "item"):
        assert "test_compile_effects.py:" in str(ran[0].message)   # the line of the read
    else:   # compiled per branch, or returned (test_compile_branches.py): storing the
        assert "changed a list" in str(ran[0].message)   # value is the step's own effect


@pytest.mark.parametrize("fullgraph", [False, True])
@pytest.mark.parametrize("where", HOOKS)
@pytest.mark.parametrize("read", sorted(READS))
def test_a_value_read_in_a_hook_runs_it_on_the_host_after_one_program(read, where, fullgraph,
                                                                      capsys):
    # the hook is a host call, not a graph break: fullgraph=True compiles it too
    ran, traces = _same_as_eager(where, read, capsys, fullgraph)
    assert ran == [] and traces == 1


@pytest.mark.parametrize("read", sorted(READS))
def test_a_value_read_in_the_step_under_fullgraph_raises_hookgrads_error(read):
    model, step, got = _program("step", READS[read])
    before = [p.detach().clone() for p in model.parameters()]
    compiled = hg.compile(step, fullgraph=True)
    with pytest.raises(TracedValueError, match=r"host_hook") as info:
        compiled(hg.ones(2, 3))
    assert not isinstance(info.value, JAX_ERRORS) and isinstance(info.value, Unsupported)
    frames = [f.filename for f in traceback.extract_tb(info.value.__traceback__)]
    # the innermost frames are the user's: the read's line is where it points
    assert frames[-1] == __file__ and sum(f.startswith(_PACKAGE) for f in frames) <= 1
    assert got == []
    for b, p in zip(before, model.parameters()):   # nothing half-updated
        np.testing.assert_array_equal(p.detach().numpy(), b.numpy())
        assert p.grad is None and not isinstance(p._data, jax.core.Tracer)


def test_a_side_effect_under_fullgraph_raises_unsupported_naming_it():
    model, step, _ = _program("none", None)
    losses = []

    def keep(x):
        losses.insert(0, step(x).detach())
    compiled = hg.compile(keep, fullgraph=True)
    with pytest.raises(Unsupported, match=r"changed a list of global 'losses'|changed a list"):
        compiled(hg.ones(2, 3))
    assert losses == []      # undone


def test_a_hook_printing_prints_on_every_call_and_a_warning_once(capsys):
    lin = nn.Linear(2, 2)
    lin.register_forward_hook(lambda m, a, out: warnings.warn("shape checked"))
    step = hg.compile(lambda x: lin(x).sum())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        step(hg.ones(1, 2))
        step(hg.ones(1, 2))
    assert step.trace_count == 1 and not any("runs eagerly" in str(w.message) for w in caught)
    lin.register_forward_hook(lambda m, a, out: print("forward"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        step(hg.ones(1, 2))
        step(hg.ones(1, 2))
    # a warning shows once per place: the trace of the new program showed it
    assert [str(w.message) for w in caught] == ["shape checked"]
    assert capsys.readouterr().out == "forward\nforward\n" and step.trace_count == 2


def test_a_hook_logging_logs_on_every_call(caplog):
    import logging
    log = logging.getLogger("user.training")
    lin = nn.Linear(2, 2)
    lin.register_forward_hook(lambda m, a, out: log.warning("forward ran"))
    step = hg.compile(lambda x: lin(x).sum())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            step(hg.ones(1, 2))
    assert [r.getMessage() for r in caplog.records] == ["forward ran"] * 3
    assert step.trace_count == 1


def test_a_step_logging_runs_eagerly(caplog):
    import logging
    log = logging.getLogger("user.training")
    lin = nn.Linear(2, 2)

    def step(x):
        log.warning("step ran")
        return lin(x).sum()
    compiled = hg.compile(step)
    with pytest.warns(UserWarning, match="runs eagerly: logged 'step ran'"):
        for _ in range(3):
            compiled(hg.ones(1, 2))
    assert [r.getMessage() for r in caplog.records] == ["step ran"] * 3


def test_a_trace_that_only_fills_a_cache_keeps_its_program():
    names = {}
    lin = nn.Linear(2, 2)

    def name_once(m, a, out):
        names.setdefault(id(m), type(m).__name__)   # filled once, then only read
    lin.register_forward_hook(name_once)
    step = hg.compile(lambda x: lin(x).sum())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            step(hg.ones(1, 2))
    assert step.trace_count == 1 and names == {id(lin): "Linear"}


def test_a_state_the_step_makes_is_its_own():
    lin = nn.Linear(2, 2)

    def step(x):
        store = {}
        h = lin.register_forward_hook(lambda m, a, out: store.__setitem__("out", out))
        lin(x)
        h.remove()
        return store["out"].sum()
    compiled = hg.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = [compiled(hg.ones(1, 2)).item() for _ in range(2)]
    assert compiled.trace_count == 1
    np.testing.assert_allclose(got, [step(hg.ones(1, 2)).item()] * 2, rtol=1e-6)


def test_a_tensor_kept_past_the_trace_raises_hookgrads_error_where_it_is_used():
    # deeper than the watch looks: the trace leaves it a tracer
    deep = types.SimpleNamespace(a=types.SimpleNamespace(
        b=types.SimpleNamespace(c=types.SimpleNamespace(d={}))))
    lin = nn.Linear(2, 2)
    lin.register_forward_hook(lambda m, a, out: deep.a.b.c.d.__setitem__("x", out))
    hg.compile(lambda x: lin(x).sum())(hg.ones(1, 2))
    with pytest.raises(RuntimeError, match=r"add got a Tensor kept from inside a "
                                           r"hookgrad\.compile step's trace") as info:
        deep.a.b.c.d["x"] + 1
    assert not isinstance(info.value, JAX_ERRORS)
    assert info.value.__suppress_context__  # JAX's own error is not shown with it


def test_a_python_value_the_step_reads_keys_its_program():
    w = hg.ones(2, requires_grad=True)
    scale = 1.0
    cfg = {"shift": 0.0}

    def step():
        return (w * scale + cfg["shift"]).sum()
    compiled = hg.compile(step)
    got = []
    for s, shift in [(1.0, 0.0), (2.0, 0.0), (2.0, 1.0), (1.0, 0.0)]:
        scale, cfg["shift"] = s, shift
        got.append(compiled().item())
    assert got == [2.0, 4.0, 6.0, 2.0] and compiled.trace_count == 3


def test_what_a_host_hook_writes_does_not_key_the_program():
    counts = {"calls": 0}

    @hg.compile.host_hook
    def count(out):
        counts["calls"] += 1
    lin = nn.Linear(2, 2)
    lin.register_forward_hook(lambda m, a, out: count(out))
    step = hg.compile(lambda x: lin(x).sum())
    for _ in range(4):
        step(hg.ones(1, 2))
    assert counts["calls"] == 4 and step.trace_count == 1


def test_a_user_error_in_a_hook_is_raised_as_eagerly_without_a_warning():
    lin = nn.Linear(2, 2)

    def check(m, a, out):
        raise ValueError("bad activation")
    lin.register_forward_hook(check)
    step = hg.compile(lambda x: lin(x).sum())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="bad activation"):
            step(hg.ones(1, 2))
    with pytest.raises(ValueError, match="bad activation"):
        hg.compile(lambda x: lin(x).sum(), fullgraph=True)(hg.ones(1, 2))


def test_a_step_running_eagerly_has_no_program_to_inspect():
    losses = []
    w = hg.ones(2, requires_grad=True)

    def step():
        losses.insert(0, (w * 2).sum().detach())
    compiled = hg.compile(step)
    with pytest.warns(UserWarning, match="runs eagerly"):
        compiled()
    with pytest.raises(RuntimeError, match="has no program for these arguments: it runs "
                                           "eagerly"):
        compiled.lower()
    assert len(losses) == 1


def test_a_step_past_the_recompile_limit_runs_eagerly_with_one_warning():
    from hookgrad._dynamo import config
    w = hg.ones(2, requires_grad=True)
    compiled = hg.compile(lambda n: (w * n).sum())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = [compiled(n).item() for n in range(10)]   # a new int: a new program
    assert got == [2.0 * n for n in range(10)] and compiled.trace_count == 8
    ran = [w for w in caught if "runs eagerly" in str(w.message)]
    assert len(ran) == 1 and ran[0].filename == __file__
    assert "it has 8 programs, torch._dynamo.config.recompile_limit (8)" in str(ran[0].message)
    assert compiled(3).item() == 6.0 and compiled.trace_count == 8   # a program it has
    with config.patch(recompile_limit=10):
        assert compiled(9).item() == 18.0 and compiled.trace_count == 9


def _reads_counted(monkeypatch):
    """Counters of the transfers of read values and of the reads not served by them."""
    import hookgrad._compile.host_run as host_run
    import hookgrad._tensor as tensor
    count = {"fetch": 0, "read": 0}
    fetch, check = host_run._fetch, tensor._check_concrete

    def counted_fetch(arrays):
        count["fetch"] += 1
        return fetch(arrays)

    def counted_read(t, what):
        count["read"] += 1
        return check(t, what)
    monkeypatch.setattr(host_run, "_fetch", counted_fetch)
    monkeypatch.setattr(tensor, "_check_concrete", counted_read)
    return count


def test_the_values_hooks_read_come_in_one_transfer_per_step(monkeypatch):
    def program():
        hg.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 4), nn.ReLU(),
                              nn.Linear(4, 1))
        opt = hg.optim.SGD(model.parameters(), lr=0.1)
        norms = []
        for m in model[::2]:
            m.weight.register_hook(lambda g: norms.append(g.norm().item()))
            m.register_forward_hook(lambda m, a, out: norms.append(float(out.mean())))

        def step(x):
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss
        return step, norms
    x = hg.ones(2, 3)
    step_e, norms_e = program()
    for _ in range(3):
        step_e(x)
    step_c, norms_c = program()
    compiled = hg.compile(step_c)
    compiled(x)
    count = _reads_counted(monkeypatch)
    compiled(x)
    compiled(x)
    # 6 hooks read a value each call: all of them served by one transfer per call
    assert count == {"fetch": 2, "read": 0} and compiled.trace_count == 1
    np.testing.assert_allclose(norms_c, norms_e, rtol=1e-5)


def test_a_hook_reading_another_tensor_than_traced_reads_it(monkeypatch):
    def program():
        hg.manual_seed(0)
        lin = nn.Linear(3, 2)
        calls, seen = [0], []

        def hook(g):
            calls[0] += 1
            t = g if calls[0] % 2 else g * 2   # Python state picks what is read
            seen.append(t.sum().item())
        lin.weight.register_hook(hook)
        return lambda x: lin(x).sum().backward(), seen
    x = hg.ones(2, 3)
    step_e, seen_e = program()
    for _ in range(5):
        step_e(x)
    step_c, seen_c = program()
    step_c(x)   # eagerly: makes .grad, so that one program runs every compiled call
    compiled = hg.compile(step_c)
    count = _reads_counted(monkeypatch)
    for _ in range(4):
        compiled(x)
    # the trace read g * 2 (its second call): the calls reading g * 2 are served, the
    # two reading g read it
    assert seen_c == pytest.approx(seen_e) and count["read"] == 2
    assert compiled.trace_count == 1


@pytest.mark.parametrize("marked", [False, True])
def test_a_parameter_passed_to_a_host_run_hook_holds_its_grad_of_then(marked):
    def program():
        hg.manual_seed(0)
        lin = nn.Linear(3, 2)
        opt = hg.optim.SGD(lin.parameters(), lr=0.5)
        seen = []
        record = lambda p: seen.append((p.detach().clone(), p.grad.clone()))  # noqa: E731
        lin.bias.register_post_accumulate_grad_hook(
            hg.compile.host_hook(record) if marked else record)

        def step(x):
            lin(x).pow(2).sum().backward()
            opt.step()
            opt.zero_grad()
        return step, seen, lin
    x = hg.ones(2, 3)
    step_e, seen_e, lin_e = program()
    step_c, seen_c, lin_c = program()
    compiled = hg.compile(step_c)
    for _ in range(3):
        step_e(x)
        compiled(x)
    # the bias before the update and its fresh gradient, as eagerly; the bias itself after
    assert len(seen_c) == 3 and compiled.trace_count >= 1
    for (pe, ge), (pc, gc) in zip(seen_e, seen_c):
        np.testing.assert_allclose(pc.numpy(), pe.numpy(), rtol=1e-6)
        np.testing.assert_allclose(gc.numpy(), ge.numpy(), rtol=1e-6)
    np.testing.assert_allclose(lin_c.bias.detach().numpy(), lin_e.bias.detach().numpy(),
                               rtol=1e-6)
    assert lin_c.bias.grad is None


def test_a_hook_the_step_registers_on_a_tensor_it_keeps_makes_it_run_eagerly():
    def program():
        w = hg.ones(2, requires_grad=True)

        def step():
            w.register_hook(lambda g: g * 2)   # one more on every call, as eagerly
            (w * 3).sum().backward()
        return w, step
    w_e, step_e = program()
    w_c, step_c = program()
    compiled = hg.compile(step_c)
    with pytest.warns(UserWarning, match="registered a hook on a Tensor it keeps"):
        compiled()
    for _ in range(2):
        step_e()
        compiled()
    step_e()
    # 3 * (2 + 4 + 8): the trace left no hook behind
    np.testing.assert_allclose(w_c.grad.numpy(), w_e.grad.numpy())
    assert len(w_c._backward_hooks) == len(w_e._backward_hooks) == 3
