"""Differential fuzzing: random programs under hookgrad and PyTorch must observe the same.

Hypothesis draws the programs (tests/fuzz/_programs.py's generator, its own steps and rows
of the op table) and shrinks a failing one; the harness then drops lines while the
difference keeps its class and the failure prints that program as plain PyTorch code.
Examples are derandomized (the same programs on every run) and bounded: ``EXAMPLES`` in
CI, ``SLOW_EXAMPLES`` more in the slow tier (``HOOKGRAD_SLOW=1``);
``HOOKGRAD_FUZZ_EXAMPLES=N`` runs N. ``python tools/fuzz.py --seeds 0:300`` runs seeded
programs of the same generator and prints a summary.

The CI tests run hookgrad with tiered execution on, as users run it (the suite turns it
off, tests/conftest.py; values are compared to a tolerance): a program new to a signature
runs in NumPy, from its second call XLA compiles it in the background, and an interpreter
error raises. Off, the eager run compiles every op signature it meets (an empty XLA cache:
``test_fuzz`` ~64 s of CPU against ~28 s). The slow tier's programs run with it off, every
op compiled at first sight.
"""
import contextlib
import io
import random

import pytest
from hypothesis import given

import hookgrad
from tests.differential import needs_torch, torch
from tests.fuzz import _harness as H
from tests.fuzz import _programs, _table
from tests.fuzz._mode_run import checked_before, fuzz_examples, fuzz_settings, passed
from tests.fuzz._programs import generate, programs

EXAMPLES = fuzz_examples(300)
SLOW_EXAMPLES = fuzz_examples(600)
MATMUL_EXAMPLES = fuzz_examples(150)


def _check(program, tiered=True):
    kind = "eager-tiered" if tiered else "eager"
    if checked_before(kind, program):
        return
    with hookgrad.autograd.set_tiered_execution(tiered), _strict():
        res = H.check(None, hookgrad, torch, shrink=H.final_example(), program=program)
    assert res.status != "differs", res.report()
    passed(kind, program)


@contextlib.contextmanager
def _strict():
    """An error of the first tier's interpreter raises (users' runs fall back to XLA)."""
    from hookgrad._ops import tiered
    saved, tiered.STRICT = tiered.STRICT, True
    try:
        yield
    finally:
        tiered.STRICT = saved


@needs_torch
@pytest.mark.fuzz
@fuzz_settings(EXAMPLES)
@given(programs())
def test_fuzz(program):
    """Through the first tier: programs new to a signature run in NumPy, from their second
    call XLA compiles them in the background; nothing PyTorch could observe differs."""
    _check(program)


@needs_torch
@pytest.mark.fuzz
@pytest.mark.slow
@fuzz_settings(SLOW_EXAMPLES)
@given(programs())
def test_fuzz_slow(program):
    """Every op compiled at first sight (tiered execution off)."""
    _check(program, tiered=False)


@needs_torch
@pytest.mark.fuzz
@fuzz_settings(MATMUL_EXAMPLES)
@given(programs(family="matmul"))
def test_fuzz_matmul_of_every_rank(program):
    """1-D, 2-D and batched operands on either side, batch dims broadcasting, requiring
    grad or not: PyTorch's matmul folds, squeezes or batches by these, and records so."""
    _check(program)


# --- the generator and the harness (no torch needed) -------------------------------------
def test_a_redrawn_program_that_passed_is_not_checked_again():
    p = generate(5)
    assert not checked_before("test-kind", p)
    passed("test-kind", p)
    assert checked_before("test-kind", p) and not checked_before("other-kind", p)
    assert checked_before("test-kind", _programs.Program(None, list(p.lines), p.flags))
    assert not checked_before("test-kind", p.with_lines(p.lines[:-1]))
    assert not checked_before("test-kind", _programs.Program(5, p.lines, p.flags | {"x"}))


def test_programs_are_deterministic():
    assert generate(7).lines == generate(7).lines
    assert generate(7).lines != generate(8).lines


def test_a_tensor_index_out_of_range_of_dim_0_is_flagged_a_bad_index():
    # seed 2419: the index reads dim 0 and was drawn for a longer dim, so both PyTorch and
    # hookgrad raise, and the mode rules for a bad index must know it
    program = generate(2419)
    assert "a1[L.tensor([2, 2, 0])]" in program.source() and "bad_index" in program.flags


def test_program_source_is_runnable_code():
    prog = generate(3)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            exec(prog.source("hookgrad", prelude=True), {})  # noqa: S102
        except Exception:  # noqa: BLE001 - a program may end in an error both raise
            pass
    seen = H.run(prog, hookgrad)
    assert len(out.getvalue().splitlines()) == len([o for o in seen if o[1] != "raises"])


def test_every_row_of_the_op_table_is_drawn_but_those_named():
    # a row the symbols cannot render is left out with its reason; none drops silently
    drawable, left_out = _table.catalog()
    # factorizations and solves are not unique on the fuzzer's rank-deficient inputs
    assert {k: v for k, v in left_out.items() if v != _table._NOT_UNIQUE_REASON} == {
        "rnn_layer gru": "reads __name__", "rnn_layer lstm": "reads __name__",
        # ``z.real = v`` is a statement; a program step is an expression
        "real.set": "assigns real: a statement", "imag.set": "assigns imag: a statement"}
    assert all(_table._not_unique(k) for k, v in left_out.items()
               if v == _table._NOT_UNIQUE_REASON)
    assert len(drawable) + len(left_out) == len(_table.T.ROWS)
    assert _table.summary().startswith(f"op table: {len(drawable)} of {len(_table.T.ROWS)}")


def test_rows_render_as_pytorch_source():
    rows = {d.id: d for d in _table.catalog()[0]}
    assert rows["sin"].expr(["a1"]) == "L.sin(a1)"
    assert rows["add.scalar"].expr(["a1"]) == "(a1 + 2.5)"
    assert rows["round.decimals"].expr(["a1"]) == "L.round(a1, decimals=2)"
    assert rows["gather.method"].expr(["a1", "L.tensor([[0, 1]])"]) == \
        "a1.gather(0, L.tensor([[0, 1]]))"
    assert rows["getitem slice2"].expr(["a1"]) == "a1[:, 1:3]"
    assert rows["norm.inf"].expr(["a1"]) == "a1.norm(float('inf'))"
    assert rows["max.dim"].expr(["a1"], (0,)) == "L.max(a1, 1)[0]"
    assert rows["compare ops"].expr(["a1", "a2"], (3,)) == "(a1 <= 0.5)"
    assert rows["conj"].expr(["a1"]) == "L.view_as_real((L.view_as_complex(a1).conj() + 1j))"
    assert rows["getitem mask"].outputs == [((), None, True)]  # its shape follows the values


class _Picks(random.Random):
    """A seeded draw that takes the op-table row ``rid`` whenever rows are drawn."""

    def __init__(self, rid):
        super().__init__(0)
        self.rid = rid

    def choice(self, seq):
        hit = [d for d in seq if getattr(d, "id", None) == self.rid]
        return hit[0] if hit else super().choice(seq)


@needs_torch
def test_a_row_added_to_the_op_table_is_fuzzed(monkeypatch):
    T = _table.T
    rows = T.ROWS + [T.Row("fuzz new_row", lambda L, x, i: L.sin(x).gather(1, i) * 2.0, None,
                           (T.F(3, 4), T.I([[0, 3], [1, 1], [2, 0]])), frozenset())]
    monkeypatch.setattr(T, "ROWS", rows)
    _table.catalog.cache_clear()
    try:
        g = _programs._Gen(0, _Picks("fuzz new_row"))
        g.leaf((3, 4))
        g.table_op()
        g.backward()
        program = _programs.Program(0, g.lines, g.flags)
    finally:
        _table.catalog.cache_clear()
    tags = [t for t, _ in program.lines]
    assert "table:fuzz new_row" in tags
    line = program.lines[tags.index("table:fuzz new_row")][1]
    assert "(L.sin(" in line and ".gather(1, L.tensor([[0, 3], [1, 1], [2, 0]])) * 2.0)" in line
    assert H.check(0, hookgrad, torch, program=program).status == "same"


def test_hypothesis_draws_the_same_programs_as_its_choices():
    from hypothesis import settings
    seen = []

    @settings(derandomize=True, max_examples=3, database=None, deadline=None)
    @given(programs())
    def collect(program):
        seen.append(program.lines)

    collect()
    first = list(seen)
    seen.clear()
    collect()
    assert seen == first and any(t.startswith("table:") for p in seen for t, _ in p)


def _obs(value, label="y", line=0):
    return (line, label, {"shape": [len(value)], "dtype": "float32", "value": value})


def test_compare_finds_the_first_difference():
    used = set()
    assert H.compare([_obs([1.0, 2.0])], [_obs([1.0, 2.00001])], used) is None
    # complex entries part by part, to the same tolerance (the first tier's complex sgn)
    assert H.compare([_obs([-0.7088947296 - 0.7053144574j])],
                     [_obs([-0.7088946700 - 0.7053143978j])], used) is None
    d = H.compare([_obs([1.0 + 2.0j])], [_obs([1.0 + 2.5j])], used)
    assert (d.kind, d.path) == ("value", ("value", 0))
    d = H.compare([_obs([1.0]), _obs([1.0], "z", 1)], [_obs([1.0]), _obs([1.5], "z", 1)], used)
    assert (d.kind, d.label, d.line, d.path) == ("value", "z", 1, ("value", 0))
    d = H.compare([_obs([1.0]), _obs([1.0], "h1", 1)], [_obs([1.0]), _obs([1.0], "h2", 1)], used)
    assert d.kind == "hook-log"
    d = H.compare([(2, "raises", ["TypeError", "m"])], [(2, "raises", ["RuntimeError", "m"])], used)
    assert d.kind == "error-type"
    d = H.compare([_obs([1.0])], [(0, "raises", ["RuntimeError", "m"])], used)
    assert d.kind == "raises-only-torch"


def test_documented_differences_are_named_rules():
    used = set()
    a = [(0, "i", {"dtype": "int32", "value": [1]})]
    b = [(0, "i", {"dtype": "int64", "value": [1]})]
    assert H.compare(a, b, used) is None and used == {"int32_default"}
    nf = [("AccumulateGrad", 0), ("AccumulateGrad", 0)]
    assert H.compare([(0, "y.nf", nf)], [(0, "y.nf", [("MmBackward0", 0)])], used) is None
    assert "one_node_per_op" in used
    d = H.compare([(0, "y.nf", nf)], [(0, "y.nf", nf + [(None, 0)])], used)
    assert d.kind == "next_functions"  # a missing None slot is no interior node
    view = [(0, "y", {"grad_fn": "ViewBackward0"})]
    assert H.compare(view, [(0, "y", {"grad_fn": "ReshapeAliasBackward0"})], used) is None
    assert "contiguous_results" in used  # hookgrad's reshaped op result is contiguous
    assert H.compare(view, [(0, "y", {"grad_fn": "UnsafeViewBackward0"})], used) is not None
    assert all(r.row for r in H.SKIP + H.EQUIVALENT + H.SAME_OBSERVATION)


def test_an_inplace_write_to_a_view_as_real_result_is_the_complex_views_row():
    # the table renders complex results through view_as_real: PyTorch's is a view of the
    # complex tensor (an in-place write gives it CopySlices), hookgrad's a new tensor
    lines = [("leaf", "a1 = L.tensor([[1.0, 2.0]], requires_grad=True)"),
             ("table:fft.fft", "y2 = L.view_as_real(L.fft.fft(L.view_as_complex(a1)))"),
             ("clamp_", "y2.clamp_(-1, 1)"),
             ("obs", "obs('y2', y2)")]
    diff = H.Diff(3, "y2", "value", ["grad_fn"], {"grad_fn": "ClampBackward1"},
                  {"grad_fn": "ViewAsRealBackward0"})
    assert H._inplace_on_view_as_real(_programs.Program(0, lines, set()), diff)
    lines[2] = ("clamp_", "a1.clamp_(-1, 1)")
    assert not H._inplace_on_view_as_real(_programs.Program(0, lines, set()), diff)


def test_a_reshaped_op_result_is_the_contiguous_results_row_and_a_reshaped_view_is_not():
    # eager seeds 1859 and 2583: PyTorch's tanh of a transposed tensor and its orgqr keep
    # non-C strides, so flatten copies (UnsafeViewBackward0) and view(-1) fails; hookgrad's
    # results are C-contiguous (docs/differences.md)
    lines = [("leaf", "a1 = L.tensor([[[1.5, 0.5], [0.5, 1.0]]], requires_grad=True)"),
             ("t", "y2 = a1.mT"), ("tanh", "y3 = y2.tanh()"), ("flatten", "y4 = y3.flatten()"),
             ("obs", "obs('y4', y4)"), ("flatten", "y5 = y2.flatten()"), ("obs", "obs('y5', y5)"),
             ("view", "y6 = y3.view(-1)")]
    program = _programs.Program(0, lines, set())

    def names(line, label):
        return H.Diff(line, label, "value", ["grad_fn"], {"grad_fn": "ViewBackward0"},
                      {"grad_fn": "UnsafeViewBackward0"})
    assert H._reshaped_contiguous_result(program, names(4, "y4"))
    assert not H._reshaped_contiguous_result(program, names(6, "y5"))  # a view's strides
    refused = H.Diff(7, "", "raises-only-torch", [], None, [
        "RuntimeError", "view size is not compatible with input tensor's size and stride "
        "(at least one dimension spans across two contiguous subspaces). Use .reshape(...) "
        "instead."])
    assert H._reshaped_contiguous_result(program, refused)
    lines[7] = ("view", "y6 = y2.view(-1)")
    assert not H._reshaped_contiguous_result(_programs.Program(0, lines, set()), refused)


def test_rules_name_second_order_hooks_on_a_recomputed_result_and_foreach_grad_labels():
    # a multi-grad hook on sqrt's result under create_graph (docs/differences.md: the second
    # backward reaches sqrt's input directly), and a ``.grad`` observed again (label ``a1.grad1``)
    hook = _programs.Program(0, [
        ("leaf", "a1 = L.tensor([[1.5, 0.5]], requires_grad=True)"),
        ("sqrt", "y2 = (a1 * a1 + 1).sqrt()"),
        ("mh", "L.autograd.graph.register_multi_grad_hook([y2, a1], mh('m1'), mode='any')"),
        ("autograd.grad", "gs = L.autograd.grad((y2 * y2).sum(), [a1], create_graph=True)")],
        {"create_graph"})
    diff = H.Diff(3, "m1", "value", ["value", 0, 0], {"value": [[2.0]]}, {"value": [[0.0]]})
    assert H._result_hook_second_order(hook, diff)
    assert not H._result_hook_second_order(_programs.Program(0, hook.lines, set()), diff)
    foreach = _programs.Program(0, [("_foreach_mul", "y3 = L._foreach_mul([a1, a2], 2.0)[1]")],
                                set())
    zeros = H.Diff(1, "a1.grad1", "structure", [], {"value": [[0.0, -0.0]]}, None)
    assert H._foreach_unused_zeros(foreach, zeros)


def test_rules_name_a_hook_one_side_ran_a_gather_input_written_and_foreach_packs():
    # a tensor hook on cumprod's result that only PyTorch's second backward runs (the
    # first differing log entry is hookgrad's next one); a tensor gather saved whole,
    # written in place; a `_foreach_exp` pack of the input where PyTorch packs the result
    hook = _programs.Program(0, [
        ("leaf", "a1 = L.tensor([[1.5, 0.5]], requires_grad=True)"),
        ("cumprod", "y2 = a1.cumprod(0)"),
        ("th", "y2.register_hook(th('t3', 2.0))"),
        ("autograd.grad", "gs = L.autograd.grad(y2.sum(), [a1], create_graph=True)")],
        {"create_graph"})
    diff = H.Diff(3, "g2", "hook-log", (), ("g2", [None]), ("t3", {"value": [[1.0]]}))
    assert H._result_hook_second_order(hook, diff)
    gather = _programs.Program(0, [
        ("leaf", "a1 = L.tensor([[1.5, 0.5]], requires_grad=True)"),
        ("gather", "y2 = a1.tanh().gather(0, L.tensor([[0, 0]]))"),
        ("setitem", "a1[0] = 0.5"),
        ("backward", "y2.sum().backward()")], set())
    written = H.Diff(3, "raises", "raises-only-torch", (), None,
                     ["RuntimeError", "one of the variables needed for gradient computation "
                      "has been modified by an inplace operation: ..."])
    assert H._shape_only_changed_in_place(gather, written)
    gather.lines[2] = ("leaf", "a3 = L.ones(2)")
    assert not H._shape_only_changed_in_place(gather, written)
    foreach = _programs.Program(0, [
        ("table:_foreach_exp+saved_hooks", "with L.autograd.graph.saved_tensors_hooks("
         "pack('s2'), unpack('s2')): y7 = L._foreach_exp([a3, a6])[1]")], set())
    packed = H.Diff(0, "s2.pack", "value", ["value"], {"value": [0.5]}, {"value": [1.6]})
    rule = next(r for r in H.SKIP if r.name == "foreach_saves_inputs")
    assert rule.match(foreach, packed)
    foreach.lines[0] = ("table:_foreach_sin+saved_hooks", foreach.lines[0][1])
    assert not rule.match(foreach, packed)
    backward = _programs.Program(0, [
        ("leaf", "a1 = L.tensor([[1.5, 0.5]], requires_grad=True)"),
        ("create_graph", "with L.autograd.graph.saved_tensors_hooks(pack('s1'), unpack('s1')): "
                         "gs = L.autograd.grad((a1 * a1).sum(), [a1], create_graph=True)")],
        {"create_graph", "saved_create_graph"})
    packed = H.Diff(1, "s1.pack", "value", ["value"], {"value": [1.5]}, {"value": [1.0]})
    rule = next(r for r in H.SKIP if r.name == "saved_hooks_in_a_create_graph_backward")
    assert rule.match(backward, packed)
    backward.lines[1] = ("grad", backward.lines[1][1])
    assert not rule.match(backward, packed)


@pytest.mark.parametrize("src", [
    "y2 = (2.0 / a1)",
    "y2 = L.fake_quantize_per_channel_affine(a1, L.tensor([0.2, 0.3]), "
    "L.tensor([0, 1], dtype=L.int32), 1, -8, 8)"])
def test_a_result_or_mask_pytorch_saves_then_the_input_is_the_recomputed_rule(src):
    # PyTorch packs reciprocal's result (``2.0 / x``), fake_quantize's mask; hookgrad packs
    # that first, then the inputs its backward recomputes from (eager seeds 1317, 1292)
    p = _programs.Program(0, [
        ("leaf", "a1 = L.tensor([[1.5, 0.5], [0.25, -1.0]], requires_grad=True)"),
        ("table:div.rscalar+saved_hooks" if "/" in src else
         "table:fake_quantize_per_channel_affine+saved_hooks",
         f"with L.autograd.graph.saved_tensors_hooks(pack('s1'), unpack('s1')): {src}")], set())
    packs = [obs for _, lab, obs in H.run(p, hookgrad) if lab == "s1.pack"]
    assert packs[0]["shape"] == [2, 2] and packs[0]["value"] != [[1.5, 0.5], [0.25, -1.0]]
    assert packs[1]["value"] == [[1.5, 0.5], [0.25, -1.0]]  # then the input
    if torch is not None:
        want = [obs for _, lab, obs in H.run(p, torch) if lab == "s1.pack"]
        assert packs[:len(want)] == want and len(packs) > len(want)
        res = H.check(0, hookgrad, torch, program=p)
        assert res.status == "skipped" and res.rule == "saved_result_recomputed"
