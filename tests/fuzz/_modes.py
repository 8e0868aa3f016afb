"""Fuzz programs in hookgrad's compiled and functional modes (docs/modes.md), and against
``jax.grad`` of the same program written in ``jax.numpy``.

A program (tests/fuzz/_programs.py) is rewritten for a mode as plain code with ``L`` the
library, so a shrunk difference prints as a runnable program:

- ``compiled``: leaves, modules and module hooks are made first; every other line (the
  forward, the hooks, the loss, the backward and the observations after it) runs inside
  one ``@L.compile`` step, called three times (trace; retrace now that ``.grad`` exists;
  replay), against eager running those lines three times.
- ``functional``: the leaves become Parameters and the modules submodules of one Module
  whose ``forward`` is the program up to the loss; ``L.func.grad`` of
  ``L.func.functional_call`` (of the leaves the backward asks for) replaces the backward,
  and the gradients it returns are observed where the program observes ``.grad``.
  ``functional_jit`` is that gradient under ``jax.jit``, as a training step runs it: one
  program, where eager ``jax.grad`` compiles a primal and a transposed program for each
  new op signature (per seed ~0.17 s of CPU with an empty XLA cache against ~0.45 s).
  It shares ``functional``'s rules.
- ``jnp``: the program's pure-op part (no hooks, no in-place writes) with ``L`` the jnp
  module of tests/fuzz/_jnp.py, its forward and loss under ``jax.jit(jax.value_and_grad)``.

Observations go through ``HOST_PRELUDE``'s ``obs``: names, shapes and dtypes are read
when the line runs (at trace time), values through ``hookgrad.compile.host_hook`` (after
the compiled run; a ``jax.debug.callback`` under ``jax.grad``; under ``functional_jit``
outputs of its program, ``_mode_run.Outputs``, so JAX caches it). Every mode is compared
with eager hookgrad on the same program (which test_fuzz.py compares with PyTorch), so
none needs torch. ``QUALIFY`` rules say which programs a mode takes and ``REWRITE`` rules
what part of a program it runs, each citing the docs/differences.md / docs/modes.md row behind it.
"""
import re

from tests.fuzz import _harness as H
from tests.fuzz._table import family
from tests.fuzz._mode_run import (  # noqa: F401 - HOST_PRELUDE, CALLS, ...: this module's API
    CALLS, FUNCTIONAL, HOST_PRELUDE, SOURCES, _UNSEEN, _BACKWARD_AT, _as_grad,
    _backward_line, _eager_calls, _is_setup, _leaves, _modules, compiled_source, eager_runs,
    functional_source, fuzz_examples, fuzz_settings, jnp_source, run, run_jnp)


# --- which programs a mode takes ------------------------------------------------------
def _tags(program):
    return {t.replace("+saved_hooks", "") for t, _ in program.lines} | \
        ({"saved_hooks"} if any("+saved_hooks" in t for t, _ in program.lines) else set())


def features(program):
    """The features a program exercises: its line tags (ops, hooks, backward kinds; the
    ``autograd.grad`` backward is tagged ``grad`` like the ``.grad`` observations; op-table
    rows count by family, ``table/<family>``)."""
    grad = any(t == "grad" and src.startswith("gs = ") for t, src in program.lines)
    tags = {"table/" + family(t[6:]) if t.startswith("table:") else t for t in _tags(program)}
    return (tags - {"leaf", "grad", "loss"}) | ({"autograd.grad"} if grad else set())


def _has(*tags):
    return lambda program: bool(_tags(program) & set(tags))


def _table_op(program):
    return any(t.startswith("table:") for t, _ in program.lines)


def _flag(name):
    return lambda program: name in program.flags


_MULTI_VIEWS = re.compile(r"\b(split|unbind|chunk|tensor_split|_foreach_\w+)\(")


def _written_multi_output_view(program):
    """An in-place write in a program with multi-output views (or module outputs under
    full backward hooks, custom-Function views): eagerly a later use of such a view can
    raise PyTorch's rebase error, which functional mode records no node to raise."""
    tags = _tags(program)
    return bool(tags & (H._INPLACE | {"inplace"})) and (
        "module_hook" in tags or any(_MULTI_VIEWS.search(src) for _, src in program.lines))


def _hooks_after_use(program):
    """A tensor, Node or multi-grad hook registered on a tensor an op already used
    (``contiguous()`` of a contiguous tensor is that tensor: its uses count)."""
    alias = {}
    for _, src in program.lines:
        m = re.match(r"^(y\d+) = ([ay]\d+)\.contiguous\(\)$", src)
        if m:
            alias[m.group(1)] = alias.get(m.group(2), m.group(2))
    for i, (tag, src) in enumerate(program.lines):
        if tag not in ("tensor_hook", "node_node", "node_prehook", "multi_grad_hook"):
            continue
        call = src.split("(", 1)[1] if tag == "multi_grad_hook" else src.split("register")[0]
        for name in re.findall(r"\b([ay]\d+)\b", call):
            group = {name, alias.get(name, name)} | {a for a, b in alias.items()
                                                    if b == alias.get(name, name)}
            if any(_uses(prev, group) for _, prev in program.lines[:i]):
                return True
    return False


_HOOK_TAGS = ("tensor_hook", "node_node", "node_prehook", "multi_grad_hook")


def _hooked_names(tag, src):
    """The op outputs a hook registration line names."""
    call = src.split("(", 1)[1] if tag == "multi_grad_hook" else src.split("register")[0]
    return set(re.findall(r"\b(y\d+)\b", call))


def _late_hooks(program):
    """The labels of the tensor, Node and multi-grad hooks registered on an op's output
    ``y`` after a hook boundary of a later op was placed (a hooked module's call, an op
    under saved-tensor hooks, a hook on a tensor made after ``y``): their boundary follows
    that one, so they run first in JAX's backward, where PyTorch's engine runs ``y``'s
    node later."""
    hooked = {src.split(".", 1)[0] for tag, src in program.lines if tag == "module_hook"}
    calls = re.compile(rf"^y\d+ = ({'|'.join(hooked) or '-'})\(")
    made, marks, late = {}, [], set()  # where each y is made; lines placing a boundary
    for i, (tag, src) in enumerate(program.lines):
        if src.startswith("obs("):
            continue
        m = re.match(r"^(y\d+) = ", src.split(": ", 1)[1] if src.startswith(H._WITH) else src)
        if m:
            made.setdefault(m.group(1), i)
        if tag not in _HOOK_TAGS:
            if H._HOOKED in tag or calls.match(src):
                marks.append((i, None))
            continue
        names = _hooked_names(tag, src)
        for name in names:
            c = made.get(name, i)
            if any(c < j and (other is None or other - names and
                              min(made.get(o, -1) for o in other - names) > c)
                   for j, other in marks):
                late.update(re.findall(r"\(\s*'(\w+)'", src))
        marks.append((i, names))
    return late


def _hook_placed_late(program, diff):
    """The mode ran a hook placed late (``_late_hooks``) before eager's next hook."""
    return diff.kind == "hook-log" and isinstance(diff.hookgrad, (list, tuple)) and \
        bool(diff.hookgrad) and diff.hookgrad[0] in _late_hooks(program)


def _multi_after_tensor_hook(program, diff):
    """The mode ran a multi-grad hook over several tensors before a tensor hook registered
    earlier on one of them: its identity follows theirs (docs/modes.md's hooks table)."""
    if diff.kind != "hook-log" or not isinstance(diff.hookgrad, (list, tuple)) or \
            not diff.hookgrad or not isinstance(diff.torch, (list, tuple)) or not diff.torch:
        return False
    hooked = {}  # tensor hook label -> the tensor it is on, in program order
    for tag, src in program.lines:
        m = re.match(r"^(\w+)\.register_hook\(th\('(\w+)'", src)
        if tag == "tensor_hook" and m:
            hooked[m.group(2)] = m.group(1)
        m = re.search(r"register_multi_grad_hook\(\[([^\]]*)\], mh\('(\w+)'\)", src)
        if tag == "multi_grad_hook" and m and m.group(2) == diff.hookgrad[0]:
            names = {n.strip() for n in m.group(1).split(",")}
            return len(names) > 1 and hooked.get(diff.torch[0]) in names
    return False


def _uses(src, names):
    """Whether the line ``src`` is an op reading one of ``names`` (not an observation,
    a hook registration or the line defining it)."""
    if src.startswith("obs(") or ".register_" in src or "register_multi_grad_hook" in src:
        return False
    if src.startswith("with "):
        src = src.split(": ", 1)[1]
    if " = " in src and src.split(" = ", 1)[0] in names:
        src = src.split(" = ", 1)[1]
    elif re.match(r"^y\d+ = ", src):
        src = src.split(" = ", 1)[1]
    return any(re.search(rf"\b{n}\b", src) for n in names)


def _backward_maps_to_grad(program):
    """``loss.backward()`` (or ``inputs=`` leaves): what ``jax.grad`` of the loss gives."""
    k = _backward_line(program)
    if k is None or k + 1 >= len(program.lines):
        return False
    return _as_grad(program.lines[k + 1][1]) is not None


_ROW_INDEX = ("docs/differences.md: An out-of-range index raises (`gather`, `scatter*`, "
              "`index_*`, `take`, ...) | ... Under `hookgrad.func` ... a traced index is not "
              "checked")
_ROW_MASK = ("docs/differences.md: Boolean-mask indexing works everywhere | eager only "
             "(data-dependent shape); inside `hookgrad.compile` use `where`")

_ROW_JNP = ("jax.numpy has no PyTorch errors, hooks, nodes or in-place writes: the jnp "
            "reference takes a program's pure-op part")

# rules a program must not match to run in a mode; each cites its docs/differences.md / docs row
QUALIFY = {
    "jnp": [
        H.Rule("jnp_bad_index", _ROW_JNP + " (an out-of-range index raises only in PyTorch)",
               _flag("bad_index")),
        H.Rule("jnp_bad_shape", _ROW_JNP + " (a wrong shape raises PyTorch's error)",
               _flag("bad_shape")),
        H.Rule("jnp_mask", _ROW_MASK, _has("mask")),
        H.Rule("jnp_table_op", _ROW_JNP + " (it writes the generator's own steps; each op-table "
               "row has its own jnp reference, tests/ops/test_op_table.py)", _table_op),
    ],
    "compiled": [
        H.Rule("compiled_mask", _ROW_MASK, _has("mask")),
    ],
    "functional": [
        H.Rule("functional_bad_index", _ROW_INDEX, _flag("bad_index")),
        H.Rule("functional_mask", _ROW_MASK, _has("mask")),
        H.Rule("functional_stale_view", "docs/differences.md: A view made in no_grad mode ... "
               "or of a view made by a multi-output op ... raises PyTorch's \"... its base or "
               "another view of its base has been modified inplace\" | ... (eager; under "
               "`hookgrad.func` no node is recorded, so it is not raised)",
               _written_multi_output_view),
        H.Rule("functional_hook_after_use", "docs/modes.md: `torch.func` hooks fire where "
               "autograd runs them | tensor / Node / multi-grad / module backward hooks are "
               "`custom_vjp` boundaries: a hook covers uses after its registration",
               _hooks_after_use),
    ],
}


QUALIFY["functional_jit"] = QUALIFY["functional"]


def _drop_accumulating(program):
    return program.with_lines([(t, src) for t, src in program.lines
                               if t not in ("post_acc", "retain_grad")])


def _backward_as_grad(program):
    """The forward and loss, then ``loss.backward()`` and every leaf's and module's
    ``.grad``: the part of the program ``jax.grad`` of its loss expresses."""
    k = _backward_line(program)
    if k is None:
        return program
    lines = program.lines[:k + 1] + [("backward", "loss.backward()")]
    lines += [("grad", f"obs('{a}.grad', {a}.grad, False)") for a in _leaves(program)]
    lines += [("module", f"obs('{m}.grad', [{m}.weight.grad, {m}.bias.grad], False)")
              for m in _modules(program)]
    return program.with_lines(lines)


_IMPURE = {"tensor_hook", "retain_grad", "node_node", "node_prehook", "post_acc",
           "multi_grad_hook", "module_hook", "mul_", "add_", "sigmoid_", "clamp_", "setitem",
           "relu_", "copy_", "inplace"}


def _pure_ops(program):
    """Forward ops, the loss and the leaves' gradients: no hooks, no in-place writes, no
    ``next_functions``; the backward becomes ``loss.backward()``."""
    lines = []
    for tag, src in program.lines:
        if tag.replace(H._HOOKED, "") in _IMPURE or src.startswith("obs(") and ".nf'" in src:
            continue
        if src.startswith(H._WITH):
            src = src.split(": ", 1)[1]
        lines.append((tag.replace(H._HOOKED, ""), src))
    return _backward_as_grad(program.with_lines(lines))


# rewrites to the part of a program a mode expresses, each citing its row; eager runs the
# rewritten program too
REWRITE = {
    "jnp": [(H.Rule("jnp_pure_ops", _ROW_JNP, lambda p: True), _pure_ops)],
    "compiled": [],
    "functional": [
        (H.Rule("functional_accumulate", "docs/differences.md: "
                "`register_post_accumulate_grad_hook` | yes | yes | not called (gradients are "
                "values); `retain_grad`: no effect",
                _has("post_acc", "retain_grad")), _drop_accumulating),
        (H.Rule("functional_backward_kind", "docs/modes.md: Calling `.backward()` inside "
                "`functional_call` raises (use `jax.grad`): a backward other than "
                "`loss.backward()`, `inputs=` or `autograd.grad` of leaves becomes "
                "`loss.backward()`", lambda p: not _backward_maps_to_grad(p)),
         _backward_as_grad),
    ],
}


REWRITE["functional_jit"] = REWRITE["functional"]


def qualify(program, mode):
    """``(program, skip_rule, rewrite_rules)``: the part of ``program`` ``mode`` runs."""
    for rule in QUALIFY[mode]:
        if rule.match(program):
            return program, rule, []
    used = []
    for rule, rewrite in REWRITE[mode]:
        if rule.match(program):
            program = rewrite(program)
            used.append(rule.name)
    return program, None, used


# --- comparing ---------------------------------------------------------------------
def _blank(got, want):
    """``want`` with the values ``got`` never saw (a step that raised while tracing ran
    nothing: its error is the observation) left out in the same places."""
    if isinstance(got, dict) and isinstance(want, dict):
        if got.get("value") == _UNSEEN and "value" in want:
            want = {**want, "value": _UNSEEN}
        return {k: _blank(got[k], v) if k in got else v for k, v in want.items()}
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        return [_blank(g, w) for g, w in zip(got, want)]
    return want


def _is_zero(x):
    if isinstance(x, list):
        return all(_is_zero(v) for v in x)
    return x == 0


def _none_for_zeros(g, w):
    if w is None and isinstance(g, dict) and _is_zero(g["value"]):
        return None
    if isinstance(g, list) and isinstance(w, list) and len(g) == len(w):
        new = [_none_for_zeros(a, b) for a, b in zip(g, w)]
        return new if any(a is not b for a, b in zip(new, g)) else g
    return g


def _functional_view(got, want, used):
    """Under ``hookgrad.func`` ``grad_fn`` is a ``FunctionalNode`` (docs/differences.md:
    "`grad_fn._saved_*` under `torch.func` | ... `grad_fn` is a `FunctionalNode`"), and an
    unreached leaf's gradient is zeros where eager ``.grad`` stays None (gradients are values)."""
    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k != "grad_fn"}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x
    got = [(i, lab, strip(v)) for i, lab, v in got if not lab.endswith(".nf")]
    want = [(i, lab, strip(v)) for i, lab, v in want if not lab.endswith(".nf")]
    for k, (g, w) in enumerate(zip(got, want)):
        if g[1] == w[1] and (g[1].endswith(".grad") or g[1] == "gs"):
            zeroed = _none_for_zeros(g[2], w[2])
            if zeroed is not g[2]:
                got[k] = (g[0], g[1], zeroed)
                used.add("grads_are_values")
    return got, want


def differ(program, lib, mode, eager=None):
    """The first difference between ``mode`` and eager ``lib`` on ``program``; ``eager``:
    ``eager_runs(program, lib)`` when the caller has it."""
    used = set()
    got = run(program, lib, mode)
    if eager is None:
        eager = eager_runs(program, lib) if mode == "compiled" else (H.run(program, lib), None)
    want = eager[1] if mode == "compiled" else eager[0]
    want = [(w[0], w[1], _blank(g[2], w[2])) if g[1] == w[1] else w
            for g, w in zip(got, want)] + want[len(got):]
    if mode == "compiled":
        got = _raised_after_run(program, got, want, used)
        got, want = _packs_before_index_error(program, got, want, used)
    if mode in FUNCTIONAL + ("jnp",):
        got, want = _functional_view(got, want, used)
    diff = H.compare(got, want, used)
    if mode in FUNCTIONAL and diff is not None and diff.kind == "value" and \
            diff.label.endswith(".pack"):
        diff = _shifted_by_off_path_packs(got, want, diff, used)
    if mode == "jnp" and got and want and got[-1][1] == want[-1][1] == "raises" and \
            got[-1][0] == want[-1][0] and got[-1][2] != want[-1][2]:
        got[-1] = want[-1]  # both raise on the line: jnp cannot name PyTorch's error
        used.add("jnp_errors")
        diff = H.compare(got, want, used)
    return diff, used


def _shifted_by_off_path_packs(got, want, diff, used):
    """``diff``, a value difference at a pack, when it is ``functional_pack_off_path``'s
    case with the packs shifted (an op ``jax.grad`` does not differentiate packed nothing,
    so the line's later packs met eager's earlier ones): the line's packs in the mode are,
    in order, a subsequence of eager's. Then the comparison goes on without eager's
    off-path packs of that line; else ``diff`` stands."""
    line = diff.line
    mine = [o for o in got if o[0] == line and o[1].endswith(".pack")]
    theirs = [o for o in want if o[0] == line and o[1].endswith(".pack")]
    it = iter(theirs)
    kept = [next((w for w in it if w[1] == g[1] and
                  H._value_diff(g[2], w[2], (), set()) is None), None) for g in mine]
    if len(mine) >= len(theirs) or None in kept:
        return diff
    drop = {id(w) for w in theirs} - {id(w) for w in kept}
    used.add("functional_pack_off_path")
    # (paired again: ``_functional_view`` pairs the logs' entries by position)
    return H.compare(*_functional_view(got, [o for o in want if id(o) not in drop], used),
                     used)


def _raised_after_run(program, got, want, used):
    """A compiled step raises a traced index's error after its run: what the trace logged
    past the failing line was never written back, and the error belongs to that line.
    docs/differences.md: An out-of-range index raises ... Inside `hookgrad.compile` ... the
    call raises the same error after the run, before anything is written back (an error the trace
    raises later in the step comes first)."""
    if not (got and want and got[-1][1] == "raises" == want[-1][1] and
            got[-1][0] > want[-1][0]):
        return got
    line = want[-1][0]
    if got[-1][2] != want[-1][2]:
        if not _flag("bad_index")(program):
            return got
        # an error the trace raises on a later line ends the step before the run
        used.add("compiled_trace_error_first")
    else:
        used.add("compiled_index_error_after_run")
    return [o for o in got[:-1] if o[0] < line] + [(line, "raises", want[-1][2])]


def _packs_before_index_error(program, got, want, used):
    """Both raise a bad index's (or a value check's) error on one line, where one side ran
    the op's pack hooks first: eager where its op packs before it checks, the compiled step
    where its trace packed and the check raised after the run (docs/differences.md row
    above). The packs on that line are left out of both logs."""
    if not ((_flag("bad_index")(program) or _value_checked(got)) and got and want and
            got[-1][1] == "raises" == want[-1][1] and got[-1][0] == want[-1][0] and
            got[-1][2] == want[-1][2]):
        return got, want
    line = got[-1][0]
    kept = [[o for o in log if not (o[0] == line and o[1].endswith(".pack"))]
            for log in (got, want)]
    if len(kept[0]) + len(kept[1]) < len(got) + len(want):
        used.add("compiled_index_error_after_run")
    return kept[0], kept[1]


def _value_checked(got):
    """Whether the step raised a value check's error (``binary_cross_entropy``'s range),
    checked after the run as an index's is."""
    return bool(got) and got[-1][1] == "raises" and \
        "should be between 0 and 1" in str(got[-1][2])


class ModeResult(H.Result):
    mode = "eager"

    @property
    def cls(self):
        """The class as ``_harness`` names it, with the reference called eager."""
        c = H.Result.cls.fget(self)
        return c and c.replace("-torch", "-eager").replace("-hookgrad", "-" + self.mode)

    def report(self):
        d = self.diff
        return (f"{H._who(self.seed)} ({self.mode}): {self.cls}\n--- program (plain PyTorch; "
                f"hookgrad: `import hookgrad as L`) ---\n"
                f"{SOURCES[self.mode](self.program)}"
                f"--- first difference: line {d.line + 1} `{self.program.lines[d.line][1]}`, "
                f"{d.label} {H._path(d.path)}\n  {self.mode}: {H._short(d.hookgrad)}\n"
                f"     eager: {H._short(d.torch)}")


def _result(mode, *args, **kw):
    res = ModeResult(*args, **kw)
    res.mode = mode
    return res


def _saved_value_kept(program, diff):
    """Eager raises that a saved tensor was modified in place; the mode computed on."""
    return diff.kind == "raises-only-torch" and isinstance(diff.torch, list) and \
        "modified by an inplace operation" in str(diff.torch[-1])


def _raises_in_mode(pattern):
    """The mode raises an error matching ``pattern`` where eager ran on or raised another
    error (seed 1307: eager's in its backward; the functional gradient, one call, raises
    at the traced op first)."""
    return lambda program, diff: diff.kind in ("raises-only-hookgrad", "error-message",
                                               "error-type") and \
        isinstance(diff.hookgrad, list) and re.search(pattern, diff.hookgrad[1]) is not None


def _pack_off_path(program, diff):
    """Eager packs for an op that ``jax.grad`` does not differentiate (its inputs are
    parameters outside the arguments, plain arrays from ``hookgrad.func.state``), or
    unpacks for one whose output's cotangent is JAX's symbolic zero (a rounding op after
    it), whose backward JAX does not run."""
    return diff.kind == "hook-log" and isinstance(diff.torch, (list, tuple)) and \
        str(diff.torch[0]).endswith((".pack", ".unpack")) and \
        (not diff.hookgrad or diff.hookgrad[0] != diff.torch[0])


_ROW_STATIC = ("docs/differences.md: `repeat_interleave` with a tensor of repeats ... | "
               "eager only (unless `output_size=` is given) | XLA needs static shapes; "
               "docs/differences.md: `unique`, `unique_consecutive` and `bincount` work "
               "everywhere ... | eager only (data-dependent shapes), raising inside "
               "`hookgrad.compile`")
def _traced_0d_index(program, diff):
    return "table:getitem tensor0d" in _tags(program) and \
        "IndexBackward0" in str(diff.hookgrad) and "SelectBackward0" in str(diff.torch)


_ROW_0D = ("docs/modes.md: indexing with a 0-d integer Tensor reads its value (one "
           "`SelectBackward0`) | inside `hookgrad.compile` the index is traced: an "
           "`IndexBackward0` node, the same values")


def _traced_rules(mode):
    """``mode``'s rules for what a traced program cannot do (the compiled step's; the
    functional gradient's under ``jax.jit``): values are tracers there."""
    return [
        H.Rule(f"{mode}_0d_tensor_index", _ROW_0D, _traced_0d_index),
        H.Rule(f"{mode}_traced_sizes", "docs/differences.md: `pack_padded_sequence` lengths "
               "are any CPU tensor | ... inside `hookgrad.compile`, a Python list or a "
               "`PackedSequence` argument (a Tensor, even one made inside the step, is "
               "traced: `TracedValueError`); docs/differences.md: `F.embedding_bag` ... take "
               "any `offsets` Tensor | offsets must have values: eager Tensors, or a Python "
               "list/tuple inside `hookgrad.compile`",
               _raises_in_mode(r"needs concrete sequence lengths|offsets must have concrete")),
        H.Rule(f"{mode}_data_dependent_shape", _ROW_MASK + "; " + _ROW_STATIC,
               _raises_in_mode(r"data-dependent (output )?shape and cannot be traced|tensor "
                               r"of repeats needs their values"))]


# programs whose first difference from eager a docs row explains
DIFF_SKIP = {"compiled": _traced_rules("compiled"),
    "functional": [H.Rule(
    "functional_pack_off_path", "docs/modes.md: only an op whose inputs depend on what "
    "`jax.grad` differentiates records and packs; eagerly every op on a tensor that "
    "requires grad packs; an op whose output's cotangent is a symbolic zero unpacks "
    "nothing", _pack_off_path), H.Rule(
    "functional_hook_placed_late", "docs/modes.md: `torch.func` hooks fire where autograd "
    "runs them | ... a hook registered after hooks of later ops were placed runs before "
    "them", _hook_placed_late), H.Rule(
    "functional_multi_grad_hook_first", "docs/modes.md: hooks in functional mode | "
    "`register_multi_grad_hook` over several tensors runs before the hooks already "
    "registered on them", _multi_after_tensor_hook), H.Rule(
    "functional_saved_value_kept", "docs/modes.md: an in-place write to a tensor an op "
    "saved makes that op's backward raise | under `jax.grad` the op's backward uses the "
    "value from before the write: no error", _saved_value_kept)]}


def _value_unchecked(program, diff):
    """Eager raises a value check's error (``binary_cross_entropy``'s range) that the
    traced gradient does not compute."""
    return diff.kind == "raises-only-torch" and isinstance(diff.torch, list) and \
        "should be between 0 and 1" in str(diff.torch[-1])


DIFF_SKIP["functional_jit"] = DIFF_SKIP["functional"] + _traced_rules("functional_jit") + [
    H.Rule("functional_jit_value_unchecked", _ROW_INDEX + " (`binary_cross_entropy`'s range "
           "too)", _value_unchecked)]


def check(seed, lib, mode, shrink=True, program=None, eager=None):
    """``program`` (default ``generate(seed)``, without op-table rows in ``jnp``) in
    ``mode`` vs eager: a ``Result``. ``eager``: ``eager_runs(program, lib)``, when the
    caller ran it (used only if ``mode`` runs the program unchanged)."""
    from tests.fuzz._programs import generate
    program = program or generate(seed, table=mode != "jnp")
    kept, skip, rewrites = qualify(program, mode)
    if kept.lines != program.lines:
        eager = None  # rewritten: its own eager run
    program = kept
    if skip is not None:
        return _result(mode, seed, "skipped", program, rule=skip.name)
    diff, used = differ(program, lib, mode, eager)
    used |= set(rewrites)
    if diff is None:
        return _result(mode, seed, "same", program, used=used)
    for rule in H.SKIP + DIFF_SKIP.get(mode, []):  # docs/differences.md / docs rows
        if rule.match(program, diff):
            return _result(mode, seed, "skipped", program, diff, rule.name, used)
    res = _result(mode, seed, "differs", program, diff, used=used)
    return _shrink(res, lib, mode) if shrink else res


def _stable(program, mode):
    """``program`` runs in ``mode`` as it is: no rule skips or rewrites it."""
    if mode in FUNCTIONAL + ("jnp",) and (_backward_line(program) is None or
                                          not _backward_maps_to_grad(program)):
        return False
    kept, skip, _ = qualify(program, mode)
    return skip is None and kept.lines == program.lines


def _shrink(res, lib, mode):
    """``_harness``'s shrinking (drop lines, unwrap saved-tensor hooks) in ``mode``."""
    key, program = H._key(res), res.program
    changed = True
    while changed:
        changed = False
        for i in reversed(range(len(program.lines))):
            for lines in H._smaller(program.lines, i):
                trial = program.with_lines(lines)
                if not _stable(trial, mode):
                    continue
                diff, used = differ(trial, lib, mode)
                if diff is None or any(r.match(trial, diff)
                                       for r in H.SKIP + DIFF_SKIP.get(mode, [])):
                    continue
                cand = _result(mode, res.seed, "differs", trial, diff, used=used)
                if H._key(cand) == key:
                    program, res, changed = trial, cand, True
                    break
    return res
