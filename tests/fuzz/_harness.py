"""Run a fuzz program under hookgrad and PyTorch, compare, shrink, name the difference.

``check(seed)`` (or ``check(None, ..., program=p)`` for a program hypothesis drew) returns
a ``Result``: ``same``, ``differs`` (with the program shrunk line by line while the
difference keeps its class, and its first differing observation) or ``skipped`` by a named
rule. A rule names the docs/differences.md row it stands for; nothing is
skipped without one. Hypothesis shrinks the choices first; the line shrinker runs on the
example it reports (``final_example()``).
"""
import cmath
import math
import re
import warnings

from tests.fuzz._programs import PRELUDE, generate

TOL = 1e-4  # float32; backward fusion may change the last bits (docs/differences.md)


def run(program, lib):
    """``[(line, label, observation)]`` of ``program`` under ``lib``; an exception ends it."""
    ns = {"L": lib}
    exec(PRELUDE, ns)  # noqa: S102 - the programs are our own generator's
    log, out = ns["LOG"], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, (_, src) in enumerate(program.lines):
            start = len(log)
            try:
                exec(src, ns)  # noqa: S102
            except Exception as e:  # noqa: BLE001 - the exception is the observation
                out += [(i, lab, v) for lab, v in log[start:]]
                out.append((i, "raises", [type(e).__name__, _first_line(e)]))
                return out
            out += [(i, lab, v) for lab, v in log[start:]]
    return out


def _first_line(e):
    msg = str(e).strip().splitlines()
    return msg[0] if msg else ""


# --- comparison ---------------------------------------------------------------------
class Rule:
    """A documented difference: ``row`` quotes the docs/differences.md row,
    ``match(program, diff)``."""

    def __init__(self, name, row, match):
        self.name, self.row, self.match = name, row, match


def _dtype_widths(path, a, b):
    return path[-1:] == ("dtype",) and {a, b} == {"int32", "int64"}


def _foreach_node_type(path, a, b):
    """PyTorch's ``_foreach_*`` nodes have no Python class: their type is ``CppFunction``
    and ``name()`` gives the ``Foreach<Op>Backward`` name hookgrad's node carries."""
    return path[-1:] == ("grad_fn",) and b == "CppFunction" and str(a).startswith("Foreach")


def _reshape_of_a_contiguous_result(path, a, b):
    """PyTorch's pointwise result keeps a non-contiguous input's strides, so reshaping it
    is a ``_reshape_alias``; hookgrad's result is C-contiguous, so it is a view."""
    return path[-1:] == ("grad_fn",) and (a, b) == ("ViewBackward0", "ReshapeAliasBackward0")


# values that compare equal under a docs/differences.md row (counted, not silent)
EQUIVALENT = [Rule("int32_default", "Integer tensors default to `int64` | `int32` unless "
                   "JAX's x64 mode is on", _dtype_widths),
              Rule("foreach_node_type", "`_foreach_*` ops | one `Foreach<Op>Backward` node "
                   "per list (PyTorch's names)", _foreach_node_type),
              Rule("contiguous_results", "`stride()`, `storage_offset()`, `is_contiguous()` "
                   "... | every op's result is C-contiguous", _reshape_of_a_contiguous_result)]
def _fewer_nodes(label, got, want):
    """PyTorch links an interior node (``MmBackward0`` under ``SqueezeBackward4``) that
    hookgrad's one node per op does not have: its ``next_functions`` are the op's inputs."""
    if not label.endswith(".nf") or not isinstance(got, list) or not isinstance(want, list):
        return False
    names = {n for n, _ in got}
    return any(n not in names and n not in (None, "AccumulateGrad") for n, _ in want)


# whole observations a docs/differences.md row explains: counted, then comparison goes on
SAME_OBSERVATION = [Rule("one_node_per_op", "Ops PyTorch builds from several nodes | one "
                         "node carrying PyTorch's last node name", _fewer_nodes)]
# programs whose first difference a docs/differences.md row explains
_RECOMPUTED = {"reciprocal", "sqrt", "rsqrt", "prod", "std", "var", "amax", "amin", "max", "min",
               "norm", "logsumexp", "cumprod", "pow", "tan", "expm1", "exp2", "median", "ndtri", "frexp",
               "fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine",
               "div.rscalar"}  # ``2.0 / x``: PyTorch's reciprocal, then a product
_SHAPE_ONLY = {"gather", "take"}


def _op(tag):
    """The op a line's tag names: the generator's step, or an op-table row's name
    (``table:prod.dim`` -> ``prod``)."""
    tag = tag.replace("+saved_hooks", "")
    return tag[6:].split(" ")[0].split(".")[0] if tag.startswith("table:") else tag


def _row(tag):
    """The op-table row of a ``table:`` tag, or None."""
    tag = tag.replace("+saved_hooks", "")
    if not tag.startswith("table:"):
        return None
    from tests.ops._op_table import ROWS
    return next((r for r in ROWS if r.id == tag[6:]), None)


def _saved_by_readme(ops):
    """The first difference is in what a saved-tensor hook of one of ``ops`` sees (packing,
    or unpacking later in backward: the op is the line that opened the hook's label);
    ``ops`` is a set of op names or a predicate on a line's tag."""
    def match(program, diff):
        text = repr((diff.label, diff.hookgrad, diff.torch))
        if ".pack" not in text and ".unpack" not in text:
            return False
        lines = {tuple(program.lines[diff.line])}
        for label in re.findall(r"'(s\d+)\.(?:un)?pack'", text):
            lines |= {(tag, src) for tag, src in program.lines if f"pack('{label}')" in src}
        if callable(ops):
            return any(ops(t) for t, _ in lines)
        return any(_op(t) in ops or t.startswith("table:") and (
            _called(src) & ops or t.replace("+saved_hooks", "")[6:] in ops)
            for t, src in lines)
    return match


def _called(src):
    """The functions and methods a line calls (a table row's id, ``edge max_ties``, need
    not name its op)."""
    return set(re.findall(r"\.(\w+)\(", src.split(": ", 1)[-1]))


# the generator's steps PyTorch builds from several nodes (composite losses)
_COMPOSITE = {"einsum", "l1_loss", "kl_div"}


def _several_nodes(tag):
    """An op PyTorch records as several nodes: ``einsum``, ``l1_loss``, ``kl_div``,
    op-table rows marked shallow."""
    row = _row(tag)
    return _op(tag) in _COMPOSITE or (row is not None and "shallow" in row.flags)


def _saved_differs(tag):
    """An op-table row whose saved tensors tests/ops/test_saved_names.py lists as kept
    differently (only a shape, the op's own statics, wrapped indices)."""
    row = _row(tag)
    if row is None:
        return False
    try:
        from tests.ops import test_saved_names as N
    except BaseException:  # noqa: BLE001 - it needs torch (pytest's skip when absent)
        return False
    return N.DIFFERS.get(row.id) in (N._SHAPE_ONLY, N._LAYOUT, N._INDEX)


# docs/differences.md's `_foreach_*` row: the list's node saves the inputs where PyTorch's
# saves the results (PyTorch's node names, as its "modified by an inplace operation" names)
_FOREACH_RESULTS = {"exp", "sqrt", "sigmoid", "tanh", "expm1", "reciprocal"}
_FOREACH_RESULT_NODES = {"Foreach" + n.capitalize() for n in _FOREACH_RESULTS}


def _foreach_saves_inputs(tag):
    return _op(tag) in {"_foreach_" + n for n in _FOREACH_RESULTS}


def _foreach_result_changed_in_place(program, diff):
    """PyTorch's backward fails because a saved ``_foreach_*`` result was changed in place:
    hookgrad's list node saved the inputs, which did not change."""
    if diff.kind != "raises-only-torch":
        return False
    m = re.search(r"modified by an inplace operation: .*? which is output 0 of (\w+?)\d*,",
                  diff.torch[1])
    return m is not None and m.group(1) in _FOREACH_RESULT_NODES


def _result_node_second_order(program, diff):
    """Under create_graph PyTorch's second backward passes through the node that made a
    saved result, so a Node hook there runs again; hookgrad's reaches the input."""
    if "create_graph" not in program.flags or diff.kind != "hook-log" or not diff.torch:
        return False
    m = re.match(r"^n\d+$", str(diff.torch[0]))
    if m is None:
        return False
    var = next((src.split(".")[0] for _, src in program.lines
                if f"('{diff.torch[0]}')" in src and ".grad_fn.register" in src), None)
    return var is not None and any(src.startswith(f"{var} = ") and _op(tag) in _RECOMPUTED
                                   for tag, src in program.lines)


_INPLACE = {"mul_", "add_", "sigmoid_", "clamp_", "setitem", "relu_", "copy_"}
_INPLACE |= {tag + "+saved_hooks" for tag in _INPLACE}  # the generator's in-place steps


def _inplace_on_several_nodes(program, diff):
    """An in-place op, before the difference, on the result of an op PyTorch builds from
    several nodes: PyTorch's result is a view of its last node's output, so the write
    rebases it (``AsStridedBackward0``) and its hooks, where hookgrad's is no view."""
    made = {src.split(" = ")[0] for tag, src in program.lines
            if " = " in src and _several_nodes(tag)}
    return _written_in_place(program, diff, made)


def _inplace_on_view_as_real(program, diff):
    """An in-place op, before the difference, on a ``view_as_real`` result (the table
    renders complex results so): PyTorch's is a view of the complex tensor, so the write
    reaches it (``CopySlices``); hookgrad's is a new tensor."""
    made = {m.group(1) for _, src in program.lines
            for m in [re.search(r"(?:^|: )(\w+) = L\.view_as_real\(", src)] if m}
    return _written_in_place(program, diff, made)


def _written_in_place(program, diff, made):
    """Whether a line up to the difference writes in place into a variable of ``made``."""
    return any(tag in _INPLACE and re.match(r"^([ay]\d+)", src.split(": ", 1)[-1]).group(1)
               in made for tag, src in program.lines[:diff.line + 1])


def _node_hook_on_several_nodes(program, diff):
    """A Node hook on the node of an op PyTorch builds from several nodes: PyTorch's last
    node has its own inputs (``grad_inputs``), hookgrad's one node the op's."""
    labels = [diff.label] + [x[0] for x in (diff.hookgrad, diff.torch)
                             if isinstance(x, (list, tuple)) and x and isinstance(x[0], str)]
    for label in labels:
        if re.match(r"^n\d+$", str(label)) is None:
            continue
        for _, src in program.lines:
            if f"('{label}')" in src and ".grad_fn.register" in src:
                var = src.split(".")[0]
                if any(s.startswith(f"{var} = ") and _several_nodes(tag)
                       for tag, s in program.lines):
                    return True
    return False


def _hook_order_on_several_nodes(program, diff):
    """Hooks on the operands of an op PyTorch builds from several nodes run in the order
    of PyTorch's node chain (``einsum`` multiplies its operands in another order): tensor
    hooks in another order, a ``mode='any'`` multi-grad hook given another first
    gradient."""
    labels = [x[0] for x in (diff.hookgrad, diff.torch) if isinstance(x, (list, tuple))
              and x and isinstance(x[0], str)] + [diff.label]
    labels = [lab for lab in labels if re.match(r"^[tm]\d+$", str(lab))]
    if not labels or (diff.kind != "hook-log" and not all(
            "mode='any'" in src for _, src in program.lines
            if any(f"mh('{lab}')" in src for lab in labels))):
        return False
    hooked = set()
    for _, src in program.lines:
        if any(f"('{lab}'" in src for lab in labels):
            hooked |= set(re.findall(r"\b[ay]\d+\b", src.split("mh(")[0].split("th(")[0]))
    return any(_several_nodes(tag) and hooked & set(re.findall(r"\b[ay]\d+\b",
                                                                line.split(" = ", 1)[-1]))
               for tag, line in program.lines)


def _packs_before_shape_error(program, diff):
    """A wrong shape raises in both, but PyTorch's op is several nodes and the first ones
    recorded (and packed their saved tensors) before the failing one; hookgrad's one node
    checks the shapes first."""
    return "bad_shape" in program.flags and diff.kind == "raises-only-hookgrad" and \
        isinstance(diff.torch, (list, tuple)) and str(diff.torch[0]).endswith(".pack")


def _foreach_unused_zeros(program, diff):
    """A ``_foreach_*`` input whose output got no gradient (its ``.grad``, or its entry of
    ``autograd.grad``'s result): PyTorch's None, hookgrad's zeros (the list's one node
    differentiates every input)."""
    if diff.kind != "structure" or not re.search(r"\.grad\d*$|^gs$", str(diff.label)):
        return False
    got, want = _at_path(diff.hookgrad, diff.path), _at_path(diff.torch, diff.path)
    return want is None and isinstance(got, dict) and not any(_flat(got.get("value"))) and \
        any(_op(tag).startswith("_foreach") for tag, _ in program.lines)


def _result_grad_second_order(program, diff):
    """Under create_graph PyTorch's second backward flows through the saved result; the
    retained gradient of that result (``y.grad``) differs where hookgrad saved the input."""
    if "create_graph" not in program.flags or not diff.label.endswith(".grad"):
        return False
    var = diff.label[:-len(".grad")]
    return any(src.startswith(f"{var} = ") and _op(tag) in _RECOMPUTED
               for tag, src in program.lines)


def _result_hook_second_order(program, diff):
    """Under create_graph PyTorch's second backward passes through a saved result, so a
    tensor or multi-grad hook on that result fires there (mode ``'any'``: with the result's
    gradient first); hookgrad's reaches the input without passing through the result."""
    labels = [lab for lab in [diff.label] + [x[0] for x in (diff.hookgrad, diff.torch)
                                              if isinstance(x, (list, tuple)) and x]
              if re.match(r"^[tm]\d+$", str(lab))]  # the hook may have run on one side only
    if "create_graph" not in program.flags or not labels:
        return False
    hooked = set()
    for _, src in program.lines:
        if any(f"('{lab}'" in src for lab in labels):
            hooked |= set(re.findall(r"\b[ay]\d+\b", src.split("mh(")[0].split("th(")[0]))
    return any(src.split(" = ")[0] in hooked and _op(tag) in _RECOMPUTED
               for tag, src in program.lines if " = " in src)


def _other_saved_modified(ops):
    """Both fail backward on a tensor changed in place, but PyTorch first finds another
    tensor one of ``ops`` saved (one saved whole where hookgrad keeps a shape; a view an
    op of several nodes made), so the messages name different tensors. ``ops``: a set of
    op names or a predicate on a line's tag."""
    def match(program, diff):
        return diff.kind == "error-message" and all(
            "modified by an inplace operation" in d[1] for d in (diff.hookgrad, diff.torch)) \
            and any(ops(tag) if callable(ops) else _op(tag) in ops for tag, _ in program.lines)
    return match


def _shape_only_changed_in_place(program, diff):
    """PyTorch's backward fails because a tensor ``gather``/``take`` saved whole was changed
    in place (through a view, the message names the write's node): hookgrad kept its shape."""
    return diff.kind == "raises-only-torch" and \
        "modified by an inplace operation" in diff.torch[1] and \
        any(_op(tag) in _SHAPE_ONLY or tag.startswith("table:") and _called(src) & _SHAPE_ONLY
            for tag, src in program.lines[:diff.line]) and \
        any(tag in _INPLACE for tag, _ in program.lines[:diff.line])


def _either(*matchers):
    return lambda program, diff: any(m(program, diff) for m in matchers)


def _torch_message(pattern):
    def match(program, diff):
        return diff.kind == "raises-only-torch" and re.search(pattern, diff.torch[1]) is not None
    return match


def _at_path(obs, path):
    for p in path:
        try:
            obs = obs[p]
        except (IndexError, KeyError, TypeError):
            return None
    return obs


def _flat(v):
    if isinstance(v, list):
        for x in v:
            yield from _flat(x)
    else:
        yield v


def _zeros_for_none(program, diff):
    """A second-order gradient PyTorch leaves None is zeros in hookgrad; a gradient that
    depends on no input (PyTorch's does not require grad) still requires grad."""
    if "create_graph" not in program.flags:
        return False
    if diff.kind == "raises-only-torch":  # or PyTorch's zeros are an unallocated ZeroTensor
        return diff.torch[1].startswith(("element 0 of tensors does not require grad",
                                         "tolist() shouldn't be called on a tensor with "
                                         "unallocated storage"))
    if diff.kind != "structure":
        return False
    got, want = _at_path(diff.hookgrad, diff.path), _at_path(diff.torch, diff.path)
    return want is None and isinstance(got, dict) and not any(_flat(got.get("value")))


def _layer_norm_rounding(program, diff):
    """A value after ``layer_norm`` within 2e-3 of its scale, at least the unit scale of
    the normalized rows: on near-constant rows (the fuzzer's inputs are 0.01 apart)
    PyTorch's float32 CPU kernel rounds to ~1e-3 (its own gradients are not antisymmetric
    there), hookgrad's agrees with float64 to ~1e-6. NOTE: the floor of 1 covers a gradient
    whose exact value is 0 (``tanh(y).sum()`` of rows of two: ``y = (c, -c)``, the sum is
    0 for every input), where PyTorch's is its rounding alone (~1e-4 to 3e-3)."""
    if diff.kind != "value" or not any("layer_norm" in src for _, src in program.lines):
        return False
    a, b = _at_path(diff.hookgrad, diff.path), _at_path(diff.torch, diff.path)
    scale = _scale(_at_path(diff.torch, diff.path[:1]) if diff.path else b)
    return isinstance(a, float) and isinstance(b, float) and abs(a - b) <= 2e-3 * max(
        abs(b), scale, 1.0)


# the generator's steps that make a view, and those that reshape (a view where the
# strides allow it, else a copy)
_VIEW_STEPS = {"reshape", "view", "flatten", "transpose", "t", "movedim", "permute",
               "unsqueeze", "squeeze", "expand", "narrow", "split", "chunk", "leaf"}
_RESHAPES = {"reshape": "reshape", "view": "view", "flatten": "flatten"}


def _assigned(program, name, upto):
    """The step tag and statement of the last line up to ``upto`` that assigns ``name``."""
    for tag, src in reversed(program.lines[:upto + 1]):
        stmt = src.split(": ", 1)[-1]
        if stmt.startswith(f"{name} = "):
            return tag.replace("+saved_hooks", ""), stmt
    return None


def _reshapes_an_op_result(program, upto, name):
    """``name`` is a reshape of the result of an op (no view, no leaf): PyTorch's result
    keeps its input's strides (a transposed input, LAPACK's column-major results), so the
    reshape copies or ``view`` fails where hookgrad's C-contiguous result is viewed."""
    made = _assigned(program, name, upto)
    if made is None or made[0] not in _RESHAPES:
        return False
    source = re.match(rf"^{name} = (\w+)\.{_RESHAPES[made[0]]}\(", made[1])
    op = source and _assigned(program, source.group(1), upto)
    return bool(op) and op[0] not in _VIEW_STEPS


def _reshaped_contiguous_result(program, diff):
    """A reshape of an op's result is a view in hookgrad (``ViewBackward0``) where
    PyTorch's copies (``UnsafeViewBackward0``) or refuses to view."""
    if diff.kind == "raises-only-torch":
        stmt = program.lines[diff.line][1].split(": ", 1)[-1]
        return diff.torch[1].startswith("view size is not compatible with input tensor's "
                                        "size and stride") and \
            _reshapes_an_op_result(program, diff.line, stmt.split(" = ")[0])
    return list(diff.path[-1:]) == ["grad_fn"] and \
        (_at_path(diff.hookgrad, diff.path), _at_path(diff.torch, diff.path)) == \
        ("ViewBackward0", "UnsafeViewBackward0") and \
        _reshapes_an_op_result(program, diff.line, str(diff.label))


# op-table rows whose node is the SVD's (``LinalgSvdBackward0``)
_SINGULAR = {"linalg.matrix_norm 2", "linalg.matrix_norm 2 dims", "linalg.matrix_norm -2",
             "linalg.matrix_norm -2 dims", "linalg.matrix_norm nuc",
             "linalg.matrix_norm nuc dims", "linalg.norm nuc", "svd", "linalg.svd",
             "linalg.svd full", "linalg.svdvals"}


# programs whose first difference a docs/differences.md row explains
SKIP = [
    Rule("layer_norm_rounding", "`F.layer_norm` of near-constant rows | float32 results agree "
         "with a float64 computation to ~1e-6; PyTorch's CPU kernel rounds to ~1e-3 there",
         _layer_norm_rounding),
    Rule("saved_result_recomputed", "`_saved_*` of ops whose result PyTorch saves but hookgrad "
         "recomputes (sqrt, rsqrt, tan, reciprocal, ...) | pack hooks see the result, as "
         "PyTorch's, and then the input",
         _either(_saved_by_readme(_RECOMPUTED), _result_grad_second_order,
                 _result_node_second_order, _result_hook_second_order)),
    Rule("several_nodes_saved", "Ops PyTorch builds from several nodes | saved-tensor hooks see "
         "what the one node saves", _either(_saved_by_readme(_several_nodes),
                                            _other_saved_modified(_several_nodes))),
    Rule("several_nodes_view", "Ops PyTorch builds from several nodes | one node carrying "
         "PyTorch's last node name (PyTorch's result may be a view of it: an in-place write "
         "rebases it and its hooks)",
         _inplace_on_several_nodes),
    Rule("complex_views_copied", "`view_as_real`, `view_as_complex`, `real`, `imag` and "
         "`conj` are views of the complex storage | they return new tensors ... an in-place "
         "op on the result of `z.real` does not reach `z`", _inplace_on_view_as_real),
    Rule("several_nodes_hooks", "Ops PyTorch builds from several nodes | one node "
         "carrying PyTorch's last node name (a Node hook sees the op's inputs' gradients; "
         "hooks on its operands run in hookgrad's order)",
         _either(_node_hook_on_several_nodes, _hook_order_on_several_nodes)),
    Rule("several_nodes_saved_before_error", "Ops PyTorch builds from several nodes | "
         "saved-tensor hooks see what the one node saves (PyTorch's first nodes pack before "
         "a later one raises)", _packs_before_shape_error),
    Rule("contiguous_results_reshaped", "`stride()`, `storage_offset()`, `is_contiguous()` "
         "... | every op's result is C-contiguous", _reshaped_contiguous_result),
    Rule("singular_vectors_saved", "`linalg.eigh`, `svd`: eigenvectors and singular vectors "
         "... | the signs may differ ...; saved-tensor hooks see `S`, `U` and `Vh` with these "
         "signs, then `A`", _saved_by_readme(_SINGULAR)),
    Rule("saved_names_listed", "Saved dims as given ... | where hookgrad keeps only a shape, "
         "`_saved_<name>` is `None`; `tests/ops/test_saved_names.py` lists each difference",
         _saved_by_readme(_saved_differs)),
    Rule("foreach_unused_zeros", "`_foreach_*` ops | one `Foreach<Op>Backward` node per list "
         "...; an input whose output gets no gradient gets zeros, not None",
         _foreach_unused_zeros),
    Rule("scatter_small_index", "`scatter`/`scatter_add` with an `index` smaller than `src` | "
         "`src` gets its gradient", _torch_message(
             r"^Function Scatter(Add)?Backward0 returned an invalid gradient at index 1")),
    Rule("saved_hooks_in_a_create_graph_backward", "The graph a backward records under "
         "`create_graph=True` ... | one node per backward ... saved-tensor hooks active during "
         "that backward see what each such node saves",
         _saved_by_readme(lambda tag: tag == "create_graph")),
    Rule("create_graph_zeros", "The graph a backward records under `create_graph=True` | an "
         "input the derivative does not depend on gets zeros, not None; a gradient that depends "
         "on no input still requires grad", _zeros_for_none),
    Rule("saved_shape_only", "some ops save a whole tensor (`gather`, `take`, ...) | where "
         "hookgrad keeps only a shape, ... (and changing that tensor in place does not fail "
         "backward)", _either(_saved_by_readme(_SHAPE_ONLY), _other_saved_modified(_SHAPE_ONLY),
                              _shape_only_changed_in_place)),
    Rule("foreach_saves_inputs", "`_foreach_*` ops | ... the node saves the inputs where "
         "PyTorch's saves the results (exp, sqrt, sigmoid, tanh, expm1, reciprocal), so a "
         "result changed in place does not fail backward",
         _either(_saved_by_readme(_foreach_saves_inputs), _foreach_result_changed_in_place)),
]


# Bugs the fuzzer found that are not fixed yet: each names its open issue and the strict
# xfail test that reproduces it (tests/ops/test_fuzz_classes.py); a program they match is
# "known", not "differs". NOTE: this is a to-do list, not a docs/differences.md rule: fixing
# the bug turns its xfail into a failure, and the entry is then removed.
def _inplace_on_linear_of_a_vector(program, diff):
    # ``y = F.linear(v, w, b)`` with a 1-d ``v`` (a view of addmm's result), ``y.op_()``,
    # then another in-place op: the version error names another node
    if diff.kind != "error-message":
        return False
    src = "\n".join(line for _, line in program.lines)
    for y, v in re.findall(r"(?:^\s*|: )(\w+) = F\.linear\((\w+), \w+, ", src, re.M):
        vector = re.search(rf"^\s*{v} = L\.tensor\(\[(?!\[)", src, re.M)
        if vector and re.search(rf"^\s*{y}\.\w+_\(", src, re.M):
            return True
    return False


def _resize_view_written(program, diff):
    # ``x.resize(...)``/``x.resize_as(y)``: PyTorch's ``Resize`` Function returns a view of
    # ``x`` made inside a custom Function, so writing into it (or a view of it) raises
    if diff.kind != "raises-only-torch" or "custom Function" not in str(diff.torch):
        return False
    src = "\n".join(line for _, line in program.lines)
    return re.search(r"\.resize(_as)?\(", src) is not None


def _unused_foreach_output(program, diff):
    # ``L._foreach_<op>([x, w], ...)[i]``: only some outputs used; PyTorch's shared node
    # gives the unused outputs' inputs no gradient (None), hookgrad's zeros
    if diff.kind != "structure" or not isinstance(diff.torch, list) or \
            not isinstance(diff.hookgrad, list):
        return False
    src = "\n".join(line for _, line in program.lines)
    return re.search(r"L\._foreach_\w+\(\[[^\]]*,[^\]]*\][^\n]*\)\[\d\]", src) is not None and \
        any(t is None and h is not None for t, h in zip(diff.torch, diff.hookgrad))


def _ldexp_packs(program, diff):
    # ``ldexp`` under saved-tensor hooks: PyTorch packs ``other`` and ``self``, hookgrad a
    # third value
    text = repr((diff.label, diff.hookgrad, diff.torch))
    return ".pack" in text and "ldexp(" in program.lines[diff.line][1]


KNOWN_BUGS = [
    Rule("unused_foreach_output_gets_zeros", "issue 32 (open; found by its slow fuzz tier): "
         "`autograd.grad` to the input of a `_foreach_*` output that the loss does not use "
         "gives zeros where PyTorch's gives None; "
         "test_an_unused_foreach_output_gives_its_input_no_gradient", _unused_foreach_output),
    Rule("ldexp_packs_a_third_value", "issue 32 (open; found by its slow fuzz tier): `ldexp` "
         "under saved-tensor hooks packs three values where PyTorch's packs `other` and "
         "`self`; test_ldexp_packs_what_pytorch_packs", _ldexp_packs),
    Rule("resize_is_not_a_custom_view", "issue 32 (open; found by its fuzz tier): "
         "`Tensor.resize`/`resize_as` return a new tensor where PyTorch's `Resize` Function "
         "returns a view of the input made inside a custom Function, so writing into it "
         "raises only in PyTorch; test_a_write_into_resize_as_raises_as_pytorchs",
         _resize_view_written),
    Rule("inplace_on_linear_of_a_vector", "issue 32 (open; left open when issue 34 was "
         "resolved): after a second in-place op on "
         "`F.linear` of a vector with a bias (a view of addmm's result), the version error "
         "names `Sigmoid` where PyTorch's sometimes names `AsStrided` (which, depends on "
         "whether PyTorch's weak reference to the first in-place node is still alive); "
         "test_the_version_error_after_two_inplace_ops_on_a_view_names_its_node",
         _inplace_on_linear_of_a_vector)]


class Diff:
    def __init__(self, line, label, kind, path, hookgrad, torch):
        self.line, self.label, self.kind, self.path = line, label, kind, path
        self.hookgrad, self.torch = hookgrad, torch


def compare(got, want, used):
    """The first ``Diff`` between two runs, or None; ``used`` collects equivalence rules."""
    for k in range(max(len(got), len(want))):
        g = got[k] if k < len(got) else None
        w = want[k] if k < len(want) else None
        if g is None or w is None or g[1] != w[1]:
            return _label_diff(g, w)
        if g[1] == "raises":
            if g[2][0] != w[2][0]:
                return Diff(g[0], "raises", "error-type", (), g[2], w[2])
            if _norm_msg(g[2][1]) != _norm_msg(w[2][1]):
                return Diff(g[0], "raises", "error-message", (), g[2], w[2])
            continue
        d = _value_diff(g[2], w[2], (), used)
        rule = d and next((r for r in SAME_OBSERVATION if r.match(g[1], g[2], w[2])), None)
        if rule is not None:
            used.add(rule.name)
            continue
        if d is not None:
            path, a, b = d
            kind = next((p for p in reversed(path) if p in ("shape", "dtype", "grad_fn")), "value")
            if g[1].endswith(".nf"):
                kind = "next_functions"
            elif kind == "value" and (_is_tensorish(a) != _is_tensorish(b) or type(a) is not type(b)):
                kind = "structure"
            return Diff(g[0], g[1], kind, path, g[2], w[2])
    return None


def _label_diff(g, w):
    if g is not None and g[1] == "raises":
        return Diff(g[0], "raises", "raises-only-hookgrad", (), g[2], w and w[1:])
    if w is not None and w[1] == "raises":
        return Diff(w[0], "raises", "raises-only-torch", (), g and g[1:], w[2])
    line = min(x[0] for x in (g, w) if x is not None)  # where the logs part
    return Diff(line, (g or w)[1], "hook-log", (), g and g[1:], w and w[1:])


def _is_tensorish(x):
    return isinstance(x, dict)


def _norm_msg(m):
    return m.replace("torch.", "").replace("hookgrad.", "").strip()


def _scale(values):
    """The largest magnitude among a tensor's values: float32 rounding in its computation
    is relative to that, not to each entry (an ill-conditioned layer_norm's small entries
    carry the large ones' error)."""
    return max((abs(x) for x in _flat(values)
                if isinstance(x, (float, complex)) and cmath.isfinite(x)), default=0.0)


def _value_diff(a, b, path, used, scale=0.0):
    if isinstance(a, complex) and isinstance(b, complex):
        # each part to the float tolerance (tiered execution's NumPy and XLA round
        # complex64's sgn differently in the last bit)
        if _value_diff(a.real, b.real, path, used, scale) is None and \
                _value_diff(a.imag, b.imag, path, used, scale) is None:
            return None
        return path, a, b
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
                not isinstance(a, bool) and not isinstance(b, bool):
            if (math.isnan(a) and math.isnan(b)) or a == b or \
                    abs(a - b) <= TOL + TOL * max(abs(b), scale):
                return None
        return path, a, b
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return path, a, b
        for i, (x, y) in enumerate(zip(a, b)):
            d = _value_diff(x, y, path + (i,), used, scale)
            if d is not None:
                return d
        return None
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return path, a, b
        for k in a:
            d = _value_diff(a[k], b[k], path + (k,), used,
                            _scale(b[k]) if k == "value" else scale)
            if d is not None:
                return d
        return None
    if a == b and type(a) is type(b):
        return None
    for rule in EQUIVALENT:
        if rule.match(path, a, b):
            used.add(rule.name)
            return None
    return path, a, b


# --- checking a program ---------------------------------------------------------------
class Result:
    def __init__(self, seed, status, program, diff=None, rule=None, used=()):
        self.seed, self.status, self.program = seed, status, program
        self.diff, self.rule, self.used = diff, rule, set(used)

    @property
    def cls(self):
        """The mismatch class: what differs and the step where it shows."""
        if self.diff is None:
            return None
        return f"{self.diff.kind} @ {self.program.lines[self.diff.line][0]}"

    def report(self):
        d = self.diff
        return (f"{_who(self.seed)}: {self.cls}\n--- program (plain PyTorch; hookgrad: "
                f"`import hookgrad as L`) ---\n{self.program.source()}"
                f"--- first difference: line {d.line + 1} `{self.program.lines[d.line][1]}`, "
                f"{d.label} {_path(d.path)}\n  hookgrad: {_short(d.hookgrad)}\n"
                f"     torch: {_short(d.torch)}")


def _who(seed):
    return "hypothesis example" if seed is None else f"seed {seed}"


def final_example():
    """Whether a hypothesis test runs its last, shrunk example (the one it reports): the
    harness shrinks lines only then."""
    from hypothesis.control import current_build_context
    try:
        return current_build_context().is_final
    except Exception:  # noqa: BLE001 - not inside a hypothesis test
        return True


def _path(path):
    return "".join(f"[{p!r}]" for p in path)


def _short(x, n=400):
    s = repr(x)
    return s if len(s) <= n else s[:n] + " ..."


def differ(program, hg, th, got=None):
    """The first difference between ``hg`` (its run ``got``, when the caller has it) and
    ``th`` on ``program``."""
    used = set()
    return compare(run(program, hg) if got is None else got, run(program, th), used), used


def check(seed, hg, th, shrink=True, program=None, got=None):
    program = program or generate(seed)
    diff, used = differ(program, hg, th, got)
    if diff is None:
        return Result(seed, "same", program, used=used)
    for rule in SKIP:
        if rule.match(program, diff):
            return Result(seed, "skipped", program, diff, rule.name, used)
    for rule in KNOWN_BUGS:
        if rule.match(program, diff):
            return Result(seed, "known", program, diff, rule.name, used)
    res = Result(seed, "differs", program, diff, used=used)
    if shrink:
        res = _shrink(res, hg, th)
    return res


def _shrink(res, hg, th):
    """Drop lines, and unwrap saved-tensor hooks, while the difference keeps its class."""
    key, program = _key(res), res.program
    changed = True
    while changed:
        changed = False
        for i in reversed(range(len(program.lines))):
            for lines in _smaller(program.lines, i):
                trial = program.with_lines(lines)
                diff, used = differ(trial, hg, th)
                if diff is None or any(r.match(trial, diff) for r in SKIP):
                    continue
                cand = Result(res.seed, "differs", trial, diff, used=used)
                if _key(cand) == key:
                    program, res, changed = trial, cand, True
                    break
    return res


def _smaller(lines, i):
    yield lines[:i] + lines[i + 1:]
    tag, src = lines[i]
    if src.startswith(_WITH):
        yield lines[:i] + [(tag.replace(_HOOKED, ""), src.split(": ", 1)[1])] + lines[i + 1:]


_WITH, _HOOKED = "with L.autograd.graph.saved_tensors_hooks(", "+saved_hooks"


def _key(res):
    return res.diff.kind, res.program.lines[res.diff.line][0].replace(_HOOKED, "")
