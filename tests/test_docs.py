"""docs/porting.md's code runs, and its diffs are the code it shows.

Every ```python block of the guide runs, in order, as one script in a fresh process.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GUIDE = os.path.join(ROOT, "docs", "porting.md")
_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.M | re.S)


def blocks(path=GUIDE):
    """(language, code) of each fenced block, in order."""
    with open(path, encoding="utf-8") as f:
        return _BLOCK.findall(f.read())


def test_porting_guide_code_runs():
    script = "\n".join(code for lang, code in blocks() if lang == "python")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-4000:]
    # what the guide says is printed, is printed
    assert "TracedValueError" in run.stdout
    assert "64-bit mode" in run.stdout


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


README = os.path.join(ROOT, "README.md")


def test_readme_quick_start_runs_as_a_script():
    quick = next(code for lang, code in blocks(README) if lang == "python")
    assert len(quick.splitlines()) <= 25
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run = subprocess.run([sys.executable, "-c", quick], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-4000:]
    lines = run.stdout.splitlines()
    assert lines[0] == "MulBackward0 gets tensor([2., 2., 2.])"   # the tensor hook ran first
    assert lines[1] == "tensor([ 4.,  8., 12.])"
    losses = [float(v) for v in lines[2].strip("[]").split(",")]
    assert len(losses) == 3 and losses[2] < losses[0]
