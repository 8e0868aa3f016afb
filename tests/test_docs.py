"""The code blocks of README.md and docs/*.md run, and the porting guide's diffs are the
code it shows.

Each page's blocks run in order in one fresh process (``tests/_doc_blocks.py``): a block
runs alone, or as a setup, or as a fragment continuing a setup its mark names; a block
that cannot run is marked so, with the reason.
"""
import glob
import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GUIDE = os.path.join(ROOT, "docs", "porting.md")
PAGES = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def _marks():
    spec = importlib.util.spec_from_file_location(
        "doc_blocks", os.path.join(ROOT, "tests", "_doc_blocks.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def blocks(path=GUIDE):
    """(language, code) of each fenced block, in order."""
    with open(path, encoding="utf-8") as f:
        return _BLOCK.findall(f.read())


def run_page(path, cwd):
    """Run the page's blocks in a fresh process in ``cwd``; the finished process."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, os.path.join(ROOT, "tests", "_doc_blocks.py"), path],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("path", PAGES, ids=lambda p: os.path.relpath(p, ROOT))
def test_every_block_runs_or_says_why_not(path):
    with open(path, encoding="utf-8") as f:
        assert _marks().problems(f.read()) == []


@pytest.mark.parametrize("path", [p for p in PAGES if p != GUIDE],
                         ids=lambda p: os.path.relpath(p, ROOT))
def test_page_code_runs(path, tmp_path):
    run = run_page(path, tmp_path)
    assert run.returncode == 0, run.stderr[-4000:]
    assert os.listdir(tmp_path) == []     # the docs write nothing where they run


def test_porting_guide_code_runs(tmp_path):
    run = run_page(GUIDE, tmp_path)
    assert run.returncode == 0, run.stderr[-4000:]
    # what the guide says is printed, is printed
    assert "TracedValueError" in run.stdout
    assert "64-bit mode" in run.stdout


def test_marks_are_read_as_written():
    marks = _marks()
    text = ("<!-- doc: not run: shell -->\n```\nls\n```\n<!-- doc: setup a\nx = 1\n-->\n"
            "<!-- doc: continues a -->\n```python\ny = x\n```\n```python\nz = 2\n```\n"
            "```bash\nls\n```\n<!-- doc: continues b -->\n```python\npass\n```\n")
    assert [(k, n, lang) for _, k, n, lang, _ in marks.blocks(text)] == [
        ("not run", "shell", ""), ("setup", "a", "hidden"), ("continues", "a", "python"),
        ("run", "", "python"), ("run", "", "bash"), ("continues", "b", "python")]
    assert marks.problems(text) == [
        "line 15: a ```bash block must be Python or marked <!-- doc: not run: REASON -->",
        "line 19: continues 'b', which no setup before it names"]


def test_porting_guide_diffs_match_the_code_after_them():
    found = blocks()
    diffs = [i for i, (lang, _) in enumerate(found) if lang == "diff"]
    assert len(diffs) >= 4
    for i in diffs:
        diff = found[i][1].splitlines()
        after = next(code for lang, code in found[i + 1:] if lang == "python")
        lines = {line.strip() for line in after.splitlines()}
        added = {d[1:].strip() for d in diff if d.startswith("+")}
        removed = {d[1:].strip() for d in diff if d.startswith("-")} - added
        assert added <= lines, f"diff {diff} adds lines the code after it lacks: {added - lines}"
        assert not removed & lines, f"diff {diff} removes lines the code after it still has"


def test_porting_guide_shows_the_ported_script_as_it_is():
    with open(GUIDE, encoding="utf-8") as f:
        shown = [code for _, kind, why, _, code in _marks().blocks(f.read())
                 if kind == "not run" and why.startswith("examples/ported_training.py")]
    with open(os.path.join(ROOT, "examples", "ported_training.py"), encoding="utf-8") as f:
        script = f.read()
    assert len(shown) == 1 and shown[0].startswith("import hookgrad as torch\n")
    assert shown[0].rstrip() in script and len(shown[0].splitlines()) > 60


README = os.path.join(ROOT, "README.md")


def test_readme_quick_start_runs_as_a_script():
    quick = next(code for lang, code in blocks(README) if lang == "python")
    assert len(quick.splitlines()) <= 20
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run = subprocess.run([sys.executable, "-c", quick], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-4000:]
    lines = run.stdout.splitlines()
    assert lines[0] == "MulBackward0 gets tensor([2., 2., 2.])"   # the tensor hook ran first
    assert lines[1] == "tensor([ 4.,  8., 12.])"
    losses = [float(v) for v in lines[2].strip("[]").split(",")]
    assert len(losses) == 3 and losses[2] < losses[0]


def test_readme_is_short_and_leads_with_what_a_newcomer_needs():
    with open(README, encoding="utf-8") as f:
        text = f.read()
    assert len(text.splitlines()) <= 150
    heads = re.findall(r"^## (.+)$", text, re.M)
    assert heads[0] == "Quick start" and heads[-1] == "Where next"
    assert text.count("![") == 1                        # one picture
    assert '".[plot]"' in text                          # the extra --plot needs
    for page in ("porting", "differences", "modes", "features", "contributing"):
        assert f"(docs/{page}.md)" in text, page


def test_differences_are_grouped_by_topic_with_reasons_and_workarounds():
    with open(os.path.join(ROOT, "docs", "differences.md"), encoding="utf-8") as f:
        text = f.read()
    assert re.findall(r"^## (.+)$", text, re.M) == [
        "Autograd, hooks and optimizers", "Ops and dtypes", "Views and memory",
        "Compile and export", "Devices, distributed and runtime", "I/O and data"]
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    heads = [r for r in rows if r.startswith("| PyTorch | hookgrad | why | workaround |")]
    assert len(heads) == 6 and len(rows) - len(heads) > 100
    for row in rows:
        cells = re.split(r"(?<!\\)\|", row.strip())[1:-1]
        assert len(cells) == 4 and cells[3].strip(), row[:80]
