"""The fenced code blocks of a Markdown file and the marks that say how each runs.

A mark is an HTML comment right before a block (nothing but blank lines between):

- ``<!-- doc: setup NAME -->``: the Python block runs, and its names stay for the blocks
  that continue NAME;
- ``<!-- doc: continues NAME -->``: a fragment; it runs after, and with the names of, the
  setup NAME (and of the fragments that continued NAME before it);
- ``<!-- doc: not run: REASON -->``: a block that cannot run (a shell command, a diff,
  output, a script that needs several processes or GPUs), with the reason.

A setup (or a fragment) may also be hidden: ``<!-- doc: setup NAME`` on a line, the code
on the next lines, ``-->`` on its own line; it runs where it stands and is not shown (the
names a fragment reads that the page's prose gives). A Python block without a mark runs alone, in fresh names.
``python tests/_doc_blocks.py FILE`` runs FILE's blocks in order and exits non-zero at
the first that fails, naming its line.
"""
import re
import sys
import traceback

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```[ \t]*$", re.M | re.S)
_MARK = re.compile(r"<!-- doc: (setup|continues|not run:)[ \t]*([^\n]*?)(?:\n(.*?))?[ \t]*-->"
                   r"\s*\Z", re.S)
_HIDDEN = re.compile(r"^<!-- doc: (setup|continues) ([\w-]+)\n(.*?)^-->[ \t]*$", re.M | re.S)


def blocks(text):
    """``[(line, kind, name, lang, code)]`` in order: ``kind`` is ``"run"`` (alone),
    ``"setup"``, ``"continues"`` or ``"not run"`` (``name`` then holds the reason); a
    hidden block's ``lang`` is ``"hidden"``."""
    found = [(m.start(), text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2), "hidden",
              m.group(3)) for m in _HIDDEN.finditer(text)]
    last = 0
    for m in _FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        before = text[last:m.start()]
        last = m.end()
        mark = _MARK.search(before[before.rfind("<!--"):]) if "<!--" in before else None
        if mark is None or mark.group(3):   # none, or a hidden block's: runs alone
            kind, name = "run", ""
        else:
            kind, name = mark.group(1).rstrip(":"), mark.group(2).strip()
        found.append((m.start(), line, kind, name, m.group(1), m.group(2)))
    return [f[1:] for f in sorted(found)]


def problems(text):
    """What is wrong with the marks: blocks that would not run, names never set up."""
    out, names = [], set()
    for line, kind, name, lang, _ in blocks(text):
        if kind == "not run":
            if not name:
                out.append(f"line {line}: 'not run:' without a reason")
        elif lang not in ("python", "hidden"):
            out.append(f"line {line}: a ```{lang} block must be Python or marked "
                       "<!-- doc: not run: REASON -->")
        elif kind == "setup":
            names.add(name)
        elif kind == "continues" and name not in names:
            out.append(f"line {line}: continues {name!r}, which no setup before it names")
    return out


def run(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    spaces = {}
    for line, kind, name, lang, code in blocks(text):
        if kind == "not run":
            continue
        ns = spaces.setdefault(name, {"__name__": "__main__"}) if kind != "run" else \
            {"__name__": "__main__"}
        try:
            exec(compile(code, f"{path}:{line}", "exec"), ns)  # noqa: S102 - our docs
        except BaseException:
            traceback.print_exc()
            print(f"{path}: the block at line {line} failed", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1]))
