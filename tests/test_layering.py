"""hookgrad's imports run one way: down the layer table below.

Every module under ``hookgrad/`` is parsed with ``ast``; its imports, module-level and
inside functions (lazy imports are dependencies too: they only move the failure from
import time to call time), are resolved to modules. Importing ``a.b.c`` also runs the
package ``a.b``'s ``__init__``, so that counts as importing ``a.b`` as well (except from
inside ``a.b``, where it is already running; the root ``hookgrad`` package always is).
Imports under ``if TYPE_CHECKING:`` are exempt: they never run.

The layers, bottom first (a module may import its own layer and those below):

0. leaves: ``_mode``, ``_watch``, ``_dtype``, ``_device``, ``_meta``, ``_layout``,
   ``_missing``, ``_repr``,
   ``_errors`` (exceptions and messages several layers raise), ``_handle``
   (``RemovableHandle``), ``_random`` (the PRNG keys' one owner), ``_compilation_cache``
   (JAX's persistent cache, set up at import), ``_backend_start`` (what
   started JAX's backends), ``_x64`` (JAX's 64-bit mode, likewise),
   ``_jax_trace`` (what JAX traces now), ``_compile.tune``, ``_numpy_eval`` and
   ``_numpy_eval_indexing`` (the NumPy interpreter of jaxprs), ``_memory_format``,
   ``_streams`` (``torch.Stream``/``Event``, the CPU's), ``_arguments`` (constructors that
   keep their arguments, and are named for their class), ``_memo`` (a bounded memo's
   store), and packages whose
   ``__init__`` imports nothing of hookgrad;
1. mode state: ``_autograd.grad_mode``, ``_autograd.anomaly_mode`` (the engine fills
   their slots, ``anomaly_mode.CURRENT_NODE``);
2. the graph: ``_autograd.graph`` (Node, AccumulateGrad, GradientEdge, multi-grad hooks),
   ``_autograd.error_node``;
3. the Tensor: ``_tensor`` (``BACKWARD`` is a slot the engine's layer fills), ``_tensor_values``
   (reading its values on the host), ``_tensor_meta`` (its shape, dtype, device), ``_views``,
   ``_storage`` (storages and host addresses);
4. around the Tensor: the hook rules (``_autograd.backward_hook``, ``_autograd.hooks``) and
   the saved tensors with their hook contexts (``_autograd.saved``);
5. the op table: ``_ops`` (registry, dispatch, the op rows; ``dispatch._dual`` is forward
   AD's slot), ``_factory`` (``_factory_checks``: its argument errors), ``_generator``,
   ``random``;
6. the engine: ``_engine`` (engine, backward, function, forward_ad, fusion);
7. public facades: ``autograd`` and its submodules, ``utils``, ``utils.hooks`` (nothing
   internal imports them: a test checks);
8. the functional backend: ``_functional``;
9. the compiled mode: ``_compile`` (function, trace, state, replay, host_hook) and the
   ``compile`` facade (``_compile.state.MODULE_COMPILE`` is the slot through which it
   compiles Modules);
10. everything else: ``nn`` (``nn._optimized_module``, whose OptimizedModule subclasses
    Module, fills ``MODULE_COMPILE``; ``nn.parallel``), ``distributed``, ``optim``,
    ``utils.data``, ``func``,
    ``autograd.gradcheck``/``autograd.functional`` (user-level tools), ``hookgrad``.

Where the issue's sketch said otherwise, the code decided: grad and anomaly mode sit below
the graph (the graph reads them; they need nothing above), and the saved tensors sit above
the Tensor (they wrap values back into Tensors; only the op table and the engine save).
The only import circle allowed is the two-module Tensor <-> graph one that any tape
autograd has (a leaf Tensor makes its AccumulateGrad node; nodes wrap gradients back into
Tensors): the graph side imports the Tensor only
inside functions, each import marked with a ``# NOTE:``. A lower layer that must call a
higher one (``Tensor.backward``, the graph's graph-task queries, the functional backend)
owns a slot that the higher layer fills when it is imported.

Below the imports: no file over 600 lines nor function over 80 without a reason named
here, and docs/architecture.md's slots, layer table and circle checked against the code.
"""
import ast
import collections
import fnmatch
import os

import pytest

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hookgrad")

LAYERS = [
    ["hookgrad._mode", "hookgrad._watch", "hookgrad._dtype", "hookgrad._device",
     "hookgrad._meta", "hookgrad._layout", "hookgrad._missing", "hookgrad._tensor_missing", "hookgrad._profiler", "hookgrad._repr", "hookgrad._errors", "hookgrad._handle",
     "hookgrad._random", "hookgrad._compile.tune", "hookgrad._compilation_cache",
     "hookgrad._compile_count", "hookgrad._host_transfer",
     "hookgrad._x64", "hookgrad._jax_trace", "hookgrad._numpy_eval",
     "hookgrad._numpy_eval_indexing", "hookgrad._memory_format", "hookgrad._streams",
     "hookgrad._backend_start", "hookgrad._pending", "hookgrad._host_value",
     "hookgrad._arguments", "hookgrad._import_heap", "hookgrad._memo"],
    ["hookgrad._autograd.grad_mode", "hookgrad._autograd.anomaly_mode"],
    ["hookgrad._autograd.graph", "hookgrad._autograd.error_node"],
    ["hookgrad._tensor", "hookgrad._tensor_values", "hookgrad._tensor_meta", "hookgrad._views",
     "hookgrad._storage"],
    ["hookgrad._autograd.backward_hook", "hookgrad._autograd.hooks", "hookgrad._autograd.saved"],
    ["hookgrad._ops", "hookgrad._ops.*", "hookgrad._factory", "hookgrad._factory_checks",
     "hookgrad._generator",
     "hookgrad.random"],
    ["hookgrad._engine", "hookgrad._engine.*"],
    ["hookgrad.autograd", "hookgrad.autograd.*", "hookgrad.utils", "hookgrad.utils.hooks"],
    ["hookgrad._functional", "hookgrad._functional.*"],
    ["hookgrad._compile", "hookgrad._compile.*", "hookgrad.compile"],
    ["*", "hookgrad.autograd.gradcheck", "hookgrad.autograd.functional",
     "hookgrad.distributed", "hookgrad.distributed.*", "hookgrad.nn.parallel",
     "hookgrad.nn.parallel.*"],
]

# The circle any tape autograd has, (importer, imported): a Tensor holds its grad_fn; a
# leaf's AccumulateGrad node holds a Tensor.
ALLOWED_UPWARD = {("hookgrad._autograd.graph", "hookgrad._tensor")}


def _modules():
    mods = {}
    for dirpath, _, files in os.walk(ROOT):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, os.path.dirname(ROOT))[:-3].replace(os.sep, ".")
                mods[rel[:-len(".__init__")] if rel.endswith(".__init__") else rel] = path
    return mods


MODULES = _modules()


def _is_type_checking(test):
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree):
    """Every import statement, at any depth, outside ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                stack.extend(child.orelse)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child
            stack.append(child)


def _known(name):
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _with_parents(name, importer):
    """``name`` and every package ``__init__`` that importing it from ``importer`` runs:
    not the root, nor a package holding ``importer`` (that one is already running)."""
    out = [name]
    while name.count("."):
        name = name.rsplit(".", 1)[0]
        if name != "hookgrad" and not (importer + ".").startswith(name + "."):
            out.append(name)
    return out


def _from_base(mod, node):
    """The module a ``from ... import`` in ``mod`` imports from."""
    if not node.level:
        return node.module or ""
    pkg = mod.split(".") if MODULES[mod].endswith("__init__.py") else mod.split(".")[:-1]
    pkg = pkg[:len(pkg) - node.level + 1]
    return ".".join(pkg + ([node.module] if node.module else []))


def _targets(mod, node):
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = _from_base(mod, node)
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                 for a in node.names]
    out = []
    for name in names:
        if name == "hookgrad" or name.startswith("hookgrad."):
            for target in _with_parents(_known(name), mod):
                if target != mod and target not in out:
                    out.append(target)
    return out


def _edges():
    """(importer, imported, file, line) for every hookgrad import in hookgrad."""
    edges = []
    for mod, path in sorted(MODULES.items()):
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in _import_nodes(tree):
            for target in _targets(mod, node):
                edges.append((mod, target, path, node.lineno))
    return edges


def _imports_nothing(mod):
    return all(importer != mod for importer, *_ in EDGES)


EDGES = _edges()


def layer_of(mod):
    if mod in MODULES and MODULES[mod].endswith("__init__.py") and _imports_nothing(mod):
        return 0  # an empty package: importing it runs nothing of ours
    for i, globs in enumerate(LAYERS):
        if mod in globs:  # a name beats a glob (``_compile.tune`` over ``_compile.*``)
            return i
    for i, globs in enumerate(LAYERS):
        if any(fnmatch.fnmatchcase(mod, g) for g in globs):
            return i
    raise AssertionError(f"{mod} is in no layer")


def _has_note(path, line):
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    return any("# NOTE:" in text for text in lines[max(0, line - 4):line])  # line, 3 above


def test_every_module_has_a_layer():
    for mod in MODULES:
        layer_of(mod)


def test_imports_only_go_down():
    upward = []
    for importer, imported, path, line in EDGES:
        if layer_of(imported) <= layer_of(importer):
            continue
        if (importer, imported) in ALLOWED_UPWARD and _has_note(path, line):
            continue
        upward.append(f"{os.path.relpath(path, os.path.dirname(ROOT))}:{line}: {importer} "
                      f"(layer {layer_of(importer)}) imports {imported} "
                      f"(layer {layer_of(imported)})")
    assert not upward, "imports of a higher layer:\n" + "\n".join(upward)


def _facade(mod):
    return mod in ("hookgrad.autograd", "hookgrad.utils.hooks") or \
        mod.startswith("hookgrad.autograd.")


def test_nothing_internal_imports_the_public_facades():
    # ``hookgrad.autograd`` and ``hookgrad.utils.hooks`` only re-export: code inside
    # hookgrad imports what they re-export from where it lives
    found = [f"{os.path.relpath(path, os.path.dirname(ROOT))}:{line}: {importer} imports "
             f"{imported}" for importer, imported, path, line in EDGES
             if _facade(imported) and not _facade(importer)
             and importer not in ("hookgrad", "hookgrad.utils")]  # the packages holding them
    assert not found, "\n".join(found)


def _cycles():
    graph = collections.defaultdict(set)
    for importer, imported, *_ in EDGES:
        graph[importer].add(imported)
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(MODULES):
        if v not in index:
            visit(v)
    return found


def test_the_one_import_cycle_is_tensor_and_node():
    # two modules: the Tensor and the graph (Node); nothing else joins their circle
    assert ALLOWED_UPWARD == {("hookgrad._autograd.graph", "hookgrad._tensor")}
    cycles = _cycles()
    assert cycles == [["hookgrad._autograd.graph", "hookgrad._tensor"]], \
        "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_the_allowed_circle_says_why():
    for importer, imported, path, line in EDGES:
        if (importer, imported) in ALLOWED_UPWARD:
            assert _has_note(path, line), f"{path}:{line}: add a '# NOTE:' saying why"


@pytest.mark.parametrize("source, expected", [
    ("from .._autograd import graph", ["hookgrad._autograd.graph", "hookgrad._autograd"]),
    ("from ..autograd import backward", ["hookgrad.autograd"]),
    ("if TYPE_CHECKING:\n    from .._tensor import Tensor", []),
    ("def f():\n    from .. import _compile\n    import hookgrad.nn.modules",
     ["hookgrad._compile", "hookgrad.nn.modules", "hookgrad.nn"]),
])
def test_the_scanner_sees_lazy_and_package_imports(source, expected):
    mod = "hookgrad._ops.shape"
    found = [t for node in _import_nodes(ast.parse(source)) for t in _targets(mod, node)]
    assert found == expected


# --------------------------------------------------------------------------- sizes

MAX_FILE_LINES = 600   # a module a reader takes in whole
MAX_FUNCTION_LINES = 80  # a function that fits on a screen (its docstring not counted)

# Each exception says why; remove it when the reason goes.
LONG_FILES = {
    "hookgrad/_compile/state.py": "the compiled step's state finder and keys, edited on other "
                                  "branches now: split once they land",
}
LONG_FUNCTIONS = {
    "hookgrad/_ops/dispatch.py:_general": "apply's path for what does not defer (a first "
                                          "call, in place, host values, tracers): each "
                                          "stage's test is inline, where a call per stage "
                                          "would cost every such op",
    "hookgrad/_ops/lazy.py:_walk": "runs once per deferred op its trace does not follow: "
                                   "one walk over its arguments signs it and wires it into "
                                   "the trace, where a helper per part would cost every "
                                   "op a call",
    "hookgrad/_ops/stages/record.py:_record": "runs once per recorded op: the node's and "
                                              "output's constructors are inlined",
    "hookgrad/nn/modules/module.py:_call_impl": "PyTorch's hook order in one sequence, read "
                                                "top to bottom beside PyTorch's",
    "hookgrad/nn/functional.py:multi_head_attention_forward": "PyTorch's algorithm step by "
                                                              "step, as its reference reads",
}


def _sizes():
    """(path, lines) of every module and (path:function, lines) of every function."""
    files, functions = {}, {}
    for path in MODULES.values():
        rel = os.path.relpath(path, os.path.dirname(ROOT)).replace(os.sep, "/")
        with open(path, encoding="utf-8") as f:
            source = f.read()
        files[rel] = source.count("\n")
        for node in ast.walk(ast.parse(source, path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False)
                skip = node.body[0].end_lineno - node.body[0].lineno + 1 if doc else 0
                n = node.end_lineno - node.lineno + 1 - skip
                key = f"{rel}:{node.name}"
                functions[key] = max(n, functions.get(key, 0))
    return files, functions


FILE_SIZES, FUNCTION_SIZES = _sizes()


def test_no_file_over_600_lines():
    long = [f"{p}: {n} lines" for p, n in sorted(FILE_SIZES.items())
            if n > MAX_FILE_LINES and p not in LONG_FILES]
    assert not long, "split these by concept (or say why in LONG_FILES):\n" + "\n".join(long)


def test_no_function_over_80_lines():
    long = [f"{k}: {n} lines" for k, n in sorted(FUNCTION_SIZES.items())
            if n > MAX_FUNCTION_LINES and k not in LONG_FUNCTIONS]
    assert not long, "split these (or say why in LONG_FUNCTIONS):\n" + "\n".join(long)


def test_the_size_exceptions_are_still_needed():
    stale = [p for p in LONG_FILES if FILE_SIZES.get(p, 0) <= MAX_FILE_LINES]
    stale += [k for k in LONG_FUNCTIONS if FUNCTION_SIZES.get(k, 0) <= MAX_FUNCTION_LINES]
    assert not stale, "no longer long: remove from LONG_FILES/LONG_FUNCTIONS:\n" + "\n".join(stale)


# --------------------------------------------------------------------------- the slots

ARCHITECTURE = os.path.join(os.path.dirname(ROOT), "docs", "architecture.md")


def _imported_from(tree, mod, name):
    """The module that ``mod``'s top-level ``from x import name`` took ``name`` from."""
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name
                                                    for a in node.names):
            return _from_base(mod, node)
    return None


def _filled_slots():
    """``owner.NAME`` of each name of a lower layer's module that a module fills when it is
    imported (``X[0] = ...``, ``mod.X.attr = ...``, ``X.update(...)`` at its top level):
    what docs/architecture.md calls slots. Methods attached to classes are not slots."""
    import importlib
    import inspect
    found = set()
    for mod, path in sorted(MODULES.items()):
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in tree.body:
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and \
                    isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "update":
                targets = [node.value.func.value]
            else:
                continue
            for target in targets:
                chain, x = [], target
                while isinstance(x, (ast.Subscript, ast.Attribute)):
                    if isinstance(x, ast.Attribute):
                        chain.append(x.attr)
                    x = x.value
                if not isinstance(x, ast.Name) or (x is target and isinstance(node, ast.Assign)):
                    continue  # a name of its own, bound
                chain = [x.id, *reversed(chain)]
                obj = getattr(importlib.import_module(mod), chain[0], None)
                if inspect.ismodule(obj) and len(chain) > 1:
                    owner, name = obj.__name__, chain[1]
                elif obj is None or isinstance(obj, type) or inspect.ismodule(obj):
                    continue
                else:
                    owner, name = _imported_from(tree, mod, chain[0]), chain[0]
                if owner and owner.startswith("hookgrad.") and owner in MODULES and \
                        layer_of(owner) < layer_of(mod):
                    found.add(f"{owner[len('hookgrad.'):]}.{name}")
    return found


def _doc():
    with open(ARCHITECTURE, encoding="utf-8") as f:
        return f.read()


def _documented_slots():
    text = _doc()
    table = text[text.index("| slot | what it holds | filled by |"):]
    table = table[:table.index("\n\n")]
    return {row.split("`")[1] for row in table.splitlines()[2:]}


def test_the_architecture_doc_lists_every_slot():
    documented = _documented_slots()
    missing = _filled_slots() - documented
    assert not missing, f"add to docs/architecture.md's slot table: {sorted(missing)}"


def test_every_documented_slot_exists():
    import importlib
    for slot in _documented_slots():
        parts = ("hookgrad." + slot).split(".")
        for i in range(len(parts), 0, -1):
            if ".".join(parts[:i]) in MODULES:
                obj = importlib.import_module(".".join(parts[:i]))
                for attr in parts[i:]:
                    assert hasattr(obj, attr), f"docs/architecture.md names {slot}: no {attr}"
                    obj = getattr(obj, attr)
                break
        else:
            raise AssertionError(f"docs/architecture.md names {slot}: no such module")


def test_the_architecture_doc_has_the_layer_table():
    rows = {}
    for line in _doc().splitlines():
        cells = line.split(" | ")
        if line.startswith("| ") and len(cells) >= 3 and cells[0][2:].isdigit():
            mods = cells[2].split(" — ")[0]
            rows[int(cells[0][2:])] = mods.split("`")[1::2]
    want = {i: [m[len("hookgrad."):] if m.startswith("hookgrad.") else m for m in layer]
            for i, layer in enumerate(LAYERS)}
    assert rows == want, "docs/architecture.md's layer table differs from LAYERS"


def test_the_architecture_doc_names_the_circle_and_where_things_live():
    from hookgrad._handle import RemovableHandle
    from hookgrad.utils.hooks import RemovableHandle as public
    assert public is RemovableHandle
    layers = _doc().split("## The layers")[1].split("\n## ")[0]
    (importer, imported), = ALLOWED_UPWARD
    for mod in (importer, imported):
        assert f"`{mod[len('hookgrad.'):]}`" in layers
    home = RemovableHandle.__module__[len("hookgrad."):]
    assert any(f"`{home}`" in line and "`RemovableHandle`" in line
               for line in layers.splitlines())
