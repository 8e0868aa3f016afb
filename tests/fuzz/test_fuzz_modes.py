"""Differential fuzzing in hookgrad's other modes (tests/fuzz/_modes.py).

Hypothesis draws programs of the fuzz generator (tests/fuzz/_programs.py, with op-table
rows except in ``jnp``, whose reference module covers the generator's own steps only); each
runs inside ``hookgrad.compile`` (``compiled``), under ``jax.grad`` of
``hookgrad.func.functional_call`` (``functional``) and, its pure-op part, as the same
program in ``jax.numpy`` under ``jax.grad`` (``jnp``), and must observe what eager hookgrad
observes. None of them needs PyTorch. Examples are derandomized and bounded:
``EXAMPLES`` per mode in CI, ``SLOW_EXAMPLES`` in the slow tier (``HOOKGRAD_SLOW=1``),
``HOOKGRAD_FUZZ_EXAMPLES=N`` runs N. A program a mode does not take is skipped by a named
rule citing its docs/differences.md row; a difference fails with the shrunk program as PyTorch code.
"""
import re

import jax
import pytest
from hypothesis import given, strategies as st

import hookgrad
from tests.fuzz import _harness as H
from tests.fuzz import _modes as M
from tests.fuzz._mode_run import Outputs, checked_before, passed
from tests.fuzz._programs import Program, generate, programs

MODES = ("compiled", "functional", "jnp")
EXAMPLES = M.fuzz_examples(40)
SLOW_EXAMPLES = M.fuzz_examples(200)


def _check(mode, data):
    program = data.draw(programs(table=mode != "jnp"), label="program")
    if checked_before(mode, program):
        return
    res = M.check(None, hookgrad, mode, shrink=H.final_example(), program=program)
    assert res.status != "differs", res.report()
    passed(mode, program)


@pytest.mark.fuzz
@pytest.mark.parametrize("mode", MODES)
@M.fuzz_settings(EXAMPLES)
@given(data=st.data())
def test_fuzz_modes(mode, data):
    _check(mode, data)


@pytest.mark.fuzz
@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
@M.fuzz_settings(SLOW_EXAMPLES)
@given(data=st.data())
def test_fuzz_modes_slow(mode, data):
    _check(mode, data)


# --- the mode harness itself -----------------------------------------------------------
def test_rules_cite_rows():
    rules = [r for rs in M.QUALIFY.values() for r in rs] + \
        [r for rs in M.REWRITE.values() for r, _ in rs]
    assert rules and all(r.row for r in rules)
    assert {r.name for r in M.QUALIFY["compiled"]} == {"compiled_mask"}  # indices are checked


def _prog(*lines):
    return Program(0, [(t, s) for t, s in lines], ())


def test_compiled_source_puts_all_but_setup_in_one_step():
    p = _prog(("leaf", "a1 = L.tensor([1.0, 2.0], requires_grad=True)"),
              ("tanh", "y2 = a1.tanh()"), ("tanh", "obs('y2', y2)"),
              ("loss", "loss = y2.sum()"), ("backward", "loss.backward()"),
              ("grad", "obs('a1.grad', a1.grad, False)"))
    src = M.compiled_source(p)
    assert src.index("a1 = L.tensor") < src.index("@L.compile\ndef step():") < \
        src.index("    y2 = a1.tanh()") < src.index("    loss.backward()")
    out = M.run(p, hookgrad, "compiled")
    assert out == M._eager_calls(p, hookgrad)  # the last of three calls
    assert [lab for _, lab, _ in out] == ["y2", "a1.grad"]
    g = 1 - __import__("math").tanh(1.0) ** 2
    assert abs(out[1][2]["value"][0] - M.CALLS * g) < 1e-5  # .grad accumulated thrice


def test_compiled_errors_are_the_observation():
    p = _prog(("leaf", "a1 = L.tensor([1.0, 2.0], requires_grad=True)"),
              ("tanh", "y2 = a1.tanh()"), ("tanh", "obs('y2', y2)"),
              ("mul_", "a1.mul_(2)"))
    out = M.run(p, hookgrad, "compiled")
    assert out[-1] == (3, "raises", ["RuntimeError", "a leaf Variable that requires grad is "
                                     "being used in an in-place operation."])
    # the trace raised the user's error: the step ran eagerly, as far as eager gets
    assert out[0][2]["value"] == [0.7615941762924194, 0.9640275835990906]
    assert M.differ(p, hookgrad, "compiled")[0] is None


_HOOKED_SQUARE = (("leaf", "a1 = L.tensor([1.0, -2.0], requires_grad=True)"),
                  ("leaf", "a2 = L.tensor([3.0], requires_grad=True)"),
                  ("tensor_hook", "a1.register_hook(th('t1', 2.0))"),
                  ("pow", "y3 = a1.pow(2)"), ("loss", "loss = y3.sum()"),
                  ("backward", "loss.backward()"),
                  ("grad", "obs('a1.grad', a1.grad, False)"),
                  ("grad", "obs('a2.grad', a2.grad, False)"))


def test_functional_source_is_jax_grad_of_the_loss():
    p = _prog(*_HOOKED_SQUARE)
    assert "W = list(S)" in M.functional_source(p)  # every leaf: loss.backward()
    assert "G = L.func.grad(lambda p: L.func.functional_call(" in M.functional_source(p)
    out = M.run(p, hookgrad, "functional")
    assert [lab for _, lab, _ in out] == ["t1", "a1.grad", "a2.grad"]
    assert out[1][2]["value"] == [4.0, -8.0]  # the hook doubled it
    assert out[2][2]["value"] == [0.0]  # eagerly None: the rule says so
    diff, used = M.differ(p, hookgrad, "functional")
    assert diff is None and used == {"grads_are_values"}


def test_functional_jit_is_the_same_gradient_run_as_one_program(monkeypatch):
    # the CI window's functional mode: jax.jit around the same gradient, one program a run
    p = _prog(*_HOOKED_SQUARE[:4], ("pow", "obs('y3', y3)"), *_HOOKED_SQUARE[4:-1])
    src = M.SOURCES["functional_jit"](p)
    grad = ("G = jax.jit(OUT.backward(L.func.grad(OUT.forward(lambda p: "
            "L.func.functional_call(")
    assert grad in src
    plain = src.replace(grad, "G = L.func.grad(lambda p: L.func.functional_call(")
    plain = plain.replace("), has_aux=True)))({k", ")({k").replace("G = OUT.fill(G)\n", "")
    assert re.sub(r"import jax\n.*\nOUT = .*\n", "", plain) == M.functional_source(p)
    # what it observes (y3 in the forward, the hook's gradient in the backward) leaves the
    # program as outputs: a host callback would keep JAX from caching it, and each seed's
    # gradient would be compiled again on every run
    callbacks = []
    real = jax.debug.callback
    monkeypatch.setattr(jax.debug, "callback", lambda *a, **k: callbacks.append(a[0]) or
                        real(*a, **k))
    with hookgrad.autograd.set_tiered_execution(False):  # eager ops compile at first sight
        want = M.run(p, hookgrad, "functional")
        assert len(callbacks) == 1  # eager jax.grad: y3's by a callback (t1's is concrete)
        M.run(p, hookgrad, "functional_jit")  # its eager setup's programs, made once
        before = hookgrad.compile_count()
        callbacks.clear()
        got = M.run(p, hookgrad, "functional_jit")
        assert got == want and callbacks == []
        assert [lab for _, lab, _ in got] == ["y3", "t1", "a1.grad"]
        assert got[1][2]["value"] == [2.0, -4.0] and got[2][2]["value"] == [4.0, -8.0]
        assert hookgrad.compile_count() - before == 1  # the gradient: forward, hooks, backward
        # a value of a trace opened inside the gradient cannot be an output: it goes
        # through a callback (here every value), with the same values
        monkeypatch.setattr(Outputs, "_leaves", lambda self, v: False)
        assert M.run(p, hookgrad, "functional_jit") == want and len(callbacks) == 2
    assert M.differ(p, hookgrad, "functional_jit")[0] is None


def test_functional_jit_skips_what_a_trace_cannot_do_by_rule():
    p = _prog(("leaf", "a1 = L.tensor([1.0, -2.0], requires_grad=True)"),
              ("table:masked_select", "y2 = a1.masked_select(L.tensor([True, False]))"),
              ("loss", "loss = y2.sum()"), ("backward", "loss.backward()"),
              ("grad", "obs('a1.grad', a1.grad, False)"))
    assert M.check(0, hookgrad, "functional", program=p, shrink=False).status == "same"
    res = M.check(0, hookgrad, "functional_jit", program=p, shrink=False)
    assert (res.status, res.rule) == ("skipped", "functional_jit_data_dependent_shape")
    assert "data-dependent shape" in res.diff.hookgrad[1]
    bce = p.with_lines([p.lines[0], ("bce", "y2 = F.binary_cross_entropy(a1.sigmoid(), "
                                            "L.tensor([1.5, 0.0]))")] + p.lines[2:])
    assert M.check(0, hookgrad, "functional", program=bce, shrink=False).status == "same"
    res = M.check(0, hookgrad, "functional_jit", program=bce, shrink=False)
    assert (res.status, res.rule) == ("skipped", "functional_jit_value_unchecked")
    assert res.diff.torch == ["RuntimeError", "all elements of target should be between 0 and 1"]


def test_a_traced_offsets_error_against_eagers_later_error_is_the_traced_sizes_rule():
    # seed 1307: eager raises in the backward (a saved result written in place); the
    # gradient under jax.jit is one call and raises first at embedding_bag's traced offsets
    p = _prog(("leaf", "a1 = L.tensor([1.0, -2.0], requires_grad=True)"),
              ("reciprocal", "y2 = (a1 * a1 + 1).reciprocal()"),
              ("setitem", "y2[...] = L.tensor([0.5, 0.25])"),
              ("leaf", "a3 = L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)"),
              ("table:embedding_bag mean", "y4 = F.embedding_bag(L.tensor([0, 2, 1]), a3, "
                                           "L.tensor([0, 1]), mode='mean')"),
              ("loss", "loss = y2.tanh().sum() + y4.sum()"), ("backward", "loss.backward()"),
              ("grad", "obs('a1.grad', a1.grad, False)"))
    res = M.check(0, hookgrad, "functional_jit", program=p, shrink=False)
    assert (res.status, res.rule) == ("skipped", "functional_jit_traced_sizes")
    assert res.diff.kind == "error-message"
    assert "modified by an inplace operation" in res.diff.torch[1]
    assert "offsets must have concrete values" in res.diff.hookgrad[1]


def test_functional_rewrites_and_skips_by_rule():
    p = _prog(("leaf", "a1 = L.tensor([1.0, -2.0], requires_grad=True)"),
              ("tanh", "y2 = a1.tanh()"), ("sum", "y3 = y2.sum(dim=0)"),
              ("tensor_hook", "y2.register_hook(th('t1'))"),
              ("loss", "loss = y3.sum()"), ("retain_graph", "loss.backward(retain_graph=True)"))
    kept, skip, _ = M.qualify(p, "functional")
    assert skip.name == "functional_hook_after_use"  # y2 fed y3 before its hook
    q = p.with_lines(p.lines[:3] + p.lines[4:])
    kept, skip, used = M.qualify(q, "functional")
    assert skip is None and used == ["functional_backward_kind"]
    assert kept.lines[-2:] == [("backward", "loss.backward()"),
                               ("grad", "obs('a1.grad', a1.grad, False)")]
    alias = _prog(("leaf", "a1 = L.tensor([1.0], requires_grad=True)"),
                  ("exp", "y2 = a1.exp()"), ("tanh", "y3 = y2.tanh()"),
                  ("contiguous", "y4 = y2.contiguous()"),
                  ("node_prehook", "y4.grad_fn.register_prehook(nph('n1'))"))
    assert M._hooks_after_use(alias)  # y4 is y2, which y3 used


def test_jnp_reference_runs_the_pure_op_part():
    p = generate(6, table=False)
    kept, skip, used = M.qualify(p, "jnp")
    assert skip is None and used == ["jnp_pure_ops"]
    assert not any(t in M._IMPURE for t, _ in kept.lines)
    assert not any(re.search(r"\.register_|saved_tensors_hooks", s) for _, s in kept.lines)
    out = M.run(kept, hookgrad, "jnp")
    assert out and all(lab != "raises" for _, lab, _ in out)
    assert M.differ(kept, hookgrad, "jnp")[0] is None


def test_a_difference_is_shrunk_and_printed_as_pytorch_code(monkeypatch):
    # a wrong jnp tanh stands in for a library bug: the shrunk program keeps the line
    from tests.fuzz import _jnp
    monkeypatch.setattr(_jnp.Tensor, "tanh", lambda self: _jnp.Tensor(self.a * 0 + 1))
    p = _prog(("leaf", "a1 = L.tensor([1.0, -2.0], requires_grad=True)"),
              ("sin", "y2 = a1.sin()"), ("tanh", "y3 = y2.tanh()"),
              ("tanh", "obs('y3', y3)"), ("exp", "y4 = a1.exp()"), ("abs", "y5 = a1.abs()"),
              ("abs", "obs('y5', y5)"), ("loss", "loss = y4.sum()"), ("backward", "loss.backward()"),
              ("grad", "obs('a1.grad', a1.grad, False)"))
    res = M.check(0, hookgrad, "jnp", program=p)
    assert res.status == "differs" and res.cls == "value @ tanh"
    assert ("abs", "y5 = a1.abs()") not in res.program.lines  # shrunk away
    assert "import torch as L" in res.report() and "y3 = y2.tanh()" in res.report()


def _late_prehook(where):
    """Seed 1274: ``exp``'s pre-hook registered after a hooked module ran (``where="late"``)
    or where ``exp`` is made (``"early"``)."""
    hook = [("node_prehook", "y3.grad_fn.register_prehook(nph('n4'))")]
    return _prog(("leaf", "a1 = L.tensor([[0.96, -1.97], [1.37, -0.46]], requires_grad=True)"),
                 ("gelu", "y2 = F.gelu(a1)"), ("exp", "y3 = y2.exp()"),
                 *(hook if where == "early" else []),
                 ("module", "m4 = lin(2, 3)"),
                 ("module_hook", "m4.register_full_backward_hook(bh('b1'))"),
                 ("module", "y5 = m4(y2)"), *(hook if where == "late" else []),
                 ("sum", "y8 = y3.sum(dim=1, keepdim=True)"),
                 ("loss", "loss = y5.sum() + y8.sum()"), ("backward", "loss.backward()"),
                 ("grad", "obs('a1.grad', a1.grad, False)"))


def test_functional_hook_placed_late_is_a_named_rule():
    # docs/modes.md: a hook's custom_vjp boundary is placed where it is registered, so a
    # pre-hook registered after a hooked module's call runs before the module's hooks in
    # JAX's backward; PyTorch's engine runs exp's node (made first) last
    res = M.check(0, hookgrad, "functional", shrink=False, program=_late_prehook("late"))
    assert res.status == "skipped" and res.rule == "functional_hook_placed_late"
    assert res.diff.hookgrad[0] == "n4" and res.diff.torch[0] == "b1"
    res = M.check(0, hookgrad, "functional", shrink=False, program=_late_prehook("early"))
    assert res.status != "skipped" and res.diff is None


def test_compiled_index_error_belongs_to_its_line():
    p = Program(0, [("leaf", "a1 = L.tensor([1.0], requires_grad=True)"),
                    ("gather", "y2 = a1.gather(0, L.tensor([3]))"),
                    ("tanh", "obs('y2', y2)")], {"bad_index"})
    err = ["RuntimeError", "index 3 is out of bounds for dimension 0 with size 1"]
    want = [(1, "raises", err)]
    used = set()
    got = M._raised_after_run(p, [(2, "y2", {}), (2, "raises", err)], want, used)
    assert got == want and used == {"compiled_index_error_after_run"}
    later = [(2, "y2", {}), (2, "raises", ["RuntimeError", "shape mismatch"])]
    assert M._raised_after_run(p, later, want, used) == want
    assert "compiled_trace_error_first" in used
    same_line = [(1, "raises", ["TypeError", "other"])]
    assert M._raised_after_run(p, same_line, want, set()) == same_line  # a real difference



def test_jnp_reference_checks_traced_values_after_the_run():
    # under jax.grad the loss's input is traced: the reference raises binary_cross_entropy's
    # range error after the run, on its line, as eager hookgrad (and PyTorch) raise there
    p = _prog(("leaf", "a1 = L.tensor([-1.0, 2.0], requires_grad=True)"),
              ("log", "y2 = a1.log()"), ("log", "obs('y2', y2)"),
              ("binary_cross_entropy", "y3 = F.binary_cross_entropy(y2.sigmoid(), "
               "L.tensor([0.5, 0.25]), reduction='none')"),
              ("tanh", "y4 = a1.tanh()"), ("tanh", "obs('y4', y4)"),
              ("loss", "loss = y3.sum()"), ("backward", "loss.backward()"),
              ("grad", "obs('a1.grad', a1.grad, False)"))
    out = M.run(p, hookgrad, "jnp")
    assert [(line, lab) for line, lab, _ in out] == [(2, "y2"), (3, "raises")]
    assert out[-1][2] == ["RuntimeError", "all elements of input should be between 0 and 1"]
    assert M.differ(p, hookgrad, "jnp")[0] is None


def test_functional_grad_of_a_leaf_alias_is_the_leafs():
    # a1.contiguous() is a1 itself: eagerly y2.grad is a1.grad (functional seed 836)
    p = _prog(("leaf", "a1 = L.tensor([0.5, -0.25], requires_grad=True)"),
              ("contiguous", "y2 = a1.contiguous()"), ("tanh", "y3 = a1.tanh()"),
              ("loss", "loss = (y2 * y3).sum()"), ("backward", "loss.backward()"),
              ("grad", "obs('y2.grad', y2.grad, False)"),
              ("grad", "obs('y3.grad', y3.grad, False)"))
    out = M.run(p, hookgrad, "functional")
    assert [lab for _, lab, _ in out] == ["y2.grad", "y3.grad"]
    assert out[0][2]["shape"] == [2] and out[1][2] is None  # y3 is no leaf: None
    assert M.differ(p, hookgrad, "functional")[0] is None
