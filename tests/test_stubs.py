"""The .pyi stubs (tools/gen_stubs.py) are current and declare every public name."""
import ast
import importlib.util
import os
import subprocess
import sys

import pytest

import hookgrad
from hookgrad._torch_function import unwrapped
from hookgrad import _factory
from hookgrad._ops.registry import FUNCTIONS, METHODS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _tool():
    spec = importlib.util.spec_from_file_location(
        "gen_stubs", os.path.join(ROOT, "tools", "gen_stubs.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def stubs():
    return _tool().build()


def _tree(stubs, name):
    return ast.parse(stubs[os.path.join(ROOT, "hookgrad", name)])


def _declared(body):
    """Names a stub body declares: defs, classes, annotated names, imports."""
    names = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(a.asname or a.name for a in node.names)
    return names


def test_stubs_are_current(stubs):
    for path, text in stubs.items():
        with open(path) as f:
            assert f.read() == text, f"stale {path}: run python tools/gen_stubs.py"


def test_every_public_name_of_hookgrad_is_declared(stubs):
    declared = _declared(_tree(stubs, "__init__.pyi").body) | set(_factory.__all__)
    public = {n for n in vars(hookgrad) if not n.startswith("_")}
    assert public - declared == set()
    assert {n for n, f in FUNCTIONS.items() if unwrapped(getattr(hookgrad, n)) is f} <= declared


def test_every_tensor_method_is_declared(stubs):
    tree = _tree(stubs, "_tensor.pyi")
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    declared = _declared(cls.body)
    public = {n for n in dir(hookgrad.Tensor) if not n.startswith("_")}
    stubs_of_missing = set(hookgrad._tensor_missing.NAMES)  # reading one raises
    assert public - stubs_of_missing - declared == set()
    assert not declared & stubs_of_missing  # using one is a type error
    assert set(METHODS) <= declared
    # a misspelt attribute must stay an error for type checkers
    assert "__getattr__" not in declared


def test_table_ops_declare_their_result(stubs):
    defs = {n.name: n for n in _tree(stubs, "__init__.pyi").body
            if isinstance(n, ast.FunctionDef)}
    for name in ("sin", "add", "clamp", "clip_", "div", "neg_", "negative", "where"):
        assert ast.unparse(defs[name].returns) == "Tensor", name
    assert [a.arg for a in defs["add"].args.args] == ["input", "other"]
    assert [a.arg for a in defs["add"].args.kwonlyargs] == ["alpha", "out"]


def test_annotations_use_only_names_the_stubs_import(stubs):
    allowed = _tool().ANNOTATION_NAMES
    for path, text in stubs.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef):
                anns = [node.returns] + [a.annotation for a in ast.walk(node.args)
                                         if isinstance(a, ast.arg)]
                for ann in filter(None, anns):
                    names = {n.id for n in ast.walk(ann) if isinstance(n, ast.Name)}
                    assert names <= allowed, (path, node.name, names - allowed)


def test_check_mode_reports_a_stale_stub(tmp_path, monkeypatch):
    tool = _tool()
    monkeypatch.setattr(tool, "PACKAGE", str(tmp_path))
    os.makedirs(tmp_path, exist_ok=True)
    (tmp_path / "__init__.py").write_text(open(os.path.join(ROOT, "hookgrad",
                                                            "__init__.py")).read())
    assert tool.main(["--check"]) == 1
    assert tool.main([]) == 0 and tool.main(["--check"]) == 0


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_mypy_sees_the_table(tmp_path):
    src = tmp_path / "use.py"
    src.write_text("import hookgrad\n"
                   "def f(x: hookgrad.Tensor) -> hookgrad.Tensor:\n"
                   "    y = hookgrad.sin(x).add_(1, alpha=2).clamp(min=0)\n"
                   "    reveal_type(y)\n"
                   "    reveal_type(x + 1 > x.T)\n"
                   "    return y.nosuch\n")
    res = subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent",
                          "--no-incremental", "--cache-dir", os.devnull, str(src)],
                         capture_output=True, text=True,
                         cwd=ROOT)
    assert res.stdout.count('Revealed type is "hookgrad._tensor.Tensor"') == 2, res.stdout
    assert '"Tensor" has no attribute "nosuch"' in res.stdout, res.stdout
    assert "Found 1 error" in res.stdout, res.stdout  # the stubs themselves check clean
