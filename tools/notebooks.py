"""Keep the committed notebooks clean: every cell has an id (nbformat 4.5) and no outputs.

    python tools/notebooks.py --check            # exit 1 and name what is wrong
    python tools/notebooks.py                    # strip outputs, add missing ids, in place
    python tools/notebooks.py path/to/nb.ipynb   # only these notebooks

tests/test_notebooks.py runs the check, so a notebook saved with its outputs fails CI until
it is stripped. Plain JSON: works without Jupyter installed.
"""
import argparse
import glob
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = os.path.join(ROOT, "notebooks")
# nbformat 4.5's schema for a cell id
_ID = re.compile(r"^[a-zA-Z0-9-_]{1,64}$")


def problems(nb):
    """What keeps notebook ``nb`` (its parsed JSON) from being committed, as messages."""
    found = []
    if (nb.get("nbformat"), nb.get("nbformat_minor", 0)) < (4, 5):
        found.append(f"nbformat {nb.get('nbformat')}.{nb.get('nbformat_minor')}: "
                     "expected 4.5 or later (cell ids)")
    seen = set()
    for i, cell in enumerate(nb.get("cells", [])):
        cid = cell.get("id")
        if cid is None:
            found.append(f"cell {i} has no id")
        elif not _ID.match(cid):
            found.append(f"cell {i}: id {cid!r} is not 1-64 letters, digits, '-' or '_'")
        elif cid in seen:
            found.append(f"cell {i}: id {cid!r} is used twice")
        seen.add(cid)
        if cell.get("cell_type") == "code":
            if cell.get("outputs"):
                found.append(f"cell {i} ({cid}) has outputs")
            if cell.get("execution_count") is not None:
                found.append(f"cell {i} ({cid}) has an execution count")
        for key in ("execution", "collapsed", "scrolled"):
            if key in cell.get("metadata", {}):
                found.append(f"cell {i} ({cid}) has run metadata {key!r}")
    if "widgets" in nb.get("metadata", {}):
        found.append("notebook metadata has widget state")
    return found


def strip(nb, stem):
    """Return ``nb`` without outputs and run metadata, with an id on every cell."""
    nb["nbformat"], nb["nbformat_minor"] = 4, max(5, nb.get("nbformat_minor", 0))
    nb.get("metadata", {}).pop("widgets", None)
    used = {c["id"] for c in nb["cells"] if "id" in c}
    for i, cell in enumerate(nb["cells"]):
        if "id" not in cell or not _ID.match(cell["id"]):
            cid = f"{stem}-{i}"
            while cid in used:
                cid += "x"
            cell["id"] = cid
            used.add(cid)
        for key in ("execution", "collapsed", "scrolled"):
            cell.get("metadata", {}).pop(key, None)
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    return nb


def _load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="notebooks (default: notebooks/*.ipynb)")
    parser.add_argument("--check", action="store_true", help="report, change nothing")
    args = parser.parse_args(argv)
    paths = args.paths or sorted(glob.glob(os.path.join(NOTEBOOKS, "*.ipynb")))
    bad = 0
    for path in paths:
        nb = _load(path)
        if args.check:
            for msg in problems(nb):
                print(f"{os.path.relpath(path, ROOT)}: {msg}")
                bad += 1
            continue
        stem = re.sub(r"[^a-zA-Z0-9-_]", "-", os.path.splitext(os.path.basename(path))[0])
        with open(path, "w", encoding="utf-8") as f:
            json.dump(strip(nb, stem), f, indent=1, ensure_ascii=False)
            f.write("\n")
    if bad:
        print(f"{bad} problem(s): run `python tools/notebooks.py` to strip", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
