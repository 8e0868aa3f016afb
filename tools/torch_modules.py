"""Write tools/torch_modules.txt: every public module path of the installed PyTorch, plus the
private ones that libraries import, each with the names its ``__all__`` lists.

    python tools/torch_modules.py    # needs torch==TORCH_VERSION installed (source only)

A module is public when no part of its path after ``torch`` starts with ``_``. The private
ones kept are those the libraries of CORPUS name (``import torch._dynamo``,
``from torch.utils import _pytree``, ``torch._dynamo.eval_frame.x``) and ALWAYS. Nothing is
imported: the tree is read from the files, and ``__all__`` from each file's source when it is
a literal list. One line per module: its path, then its names. tests/test_module_tree.py
and tools/api_coverage.py read the list, so neither needs torch.
"""
import ast
import importlib.util
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tools", "torch_modules.txt")
TORCH_VERSION = "2.13.0"
# installed libraries whose source is scanned for the private modules they use
CORPUS = ["transformers", "torchvision", "captum", "transformer_lens", "einops",
          "pytorch_grad_cam", "torchviz", "accelerate", "torchmetrics", "kornia"]
ALWAYS = ["torch._C", "torch._dynamo", "torch._dynamo.eval_frame", "torch.utils._pytree",
          "torch.utils._python_dispatch", "torch.distributed._functional_collectives"]
_NAME = re.compile(r"\btorch(?:\.\w+)+")
_FROM = re.compile(r"^\s*from\s+(torch(?:\.\w+)*)\s+import\s+\(?([\w\s,]+)", re.M)


def _tree(torch_dir):
    """{module path: file} for every module and package under ``torch_dir``."""
    mods = {}
    for dirpath, dirnames, files in os.walk(torch_dir):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__"
                             and os.path.exists(os.path.join(dirpath, d, "__init__.py")))
        rel = os.path.relpath(dirpath, os.path.dirname(torch_dir)).replace(os.sep, ".")
        for f in files:
            if f.endswith(".py"):
                name = rel if f == "__init__.py" else f"{rel}.{f[:-3]}"
                mods[name] = os.path.join(dirpath, f)
    mods.setdefault("torch._C", os.path.join(torch_dir, "_C", "__init__.pyi"))
    return mods


def _public(path):
    return not any(p.startswith("_") for p in path.split(".")[1:])


def _used_private(tree):
    """The private modules of ``tree`` that the CORPUS's sources name."""
    used = set()
    for lib in CORPUS:
        spec = importlib.util.find_spec(lib)
        if spec is None or not spec.submodule_search_locations:
            continue
        for base in spec.submodule_search_locations:
            for dirpath, _, files in os.walk(base):
                for f in files:
                    if f.endswith(".py"):
                        with open(os.path.join(dirpath, f), errors="replace") as fh:
                            used |= _named_modules(fh.read(), tree)
    return {m for m in used if not _public(m)}


def _named_modules(src, tree):
    found = set()
    for chain in _NAME.findall(src):
        parts = chain.split(".")
        for i in range(len(parts), 1, -1):  # the longest prefix that is a module
            if ".".join(parts[:i]) in tree:
                found.add(".".join(parts[:i]))
                break
    for base, names in _FROM.findall(src):
        for n in re.split(r"[\s,]+", names):
            if n and f"{base}.{n}" in tree:
                found.add(f"{base}.{n}")
    return found


def _all_names(file):
    """The literal ``__all__`` of ``file`` (``[]`` when it has none or builds it)."""
    try:
        with open(file) as f:
            mod = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return []
    names = []
    for node in mod.body:
        targets = (node.targets if isinstance(node, ast.Assign) else
                   [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                continue
            names += [n for n in value if isinstance(n, str)]
    return sorted(set(names))


def build():
    import torch
    if torch.__version__.split("+")[0] != TORCH_VERSION:
        sys.exit(f"torch=={TORCH_VERSION} is needed (found {torch.__version__})")
    tree = _tree(os.path.dirname(torch.__file__))
    keep = sorted({m for m in tree if _public(m)} | _used_private(tree) | set(ALWAYS))
    lines = [f"# PyTorch {TORCH_VERSION}'s module paths and their __all__: written by "
             "tools/torch_modules.py, do not edit"]
    lines += [" ".join([m] + _all_names(tree[m])) for m in keep]
    return "\n".join(lines) + "\n"


def read(path=OUT):
    """{module path: [names]} from the list."""
    with open(path) as f:
        return {p[0]: p[1:] for p in (line.split() for line in f)
                if p and not p[0].startswith("#")}


def main():
    text = build()
    with open(OUT, "w") as f:
        f.write(text)
    print(f"wrote {OUT} ({text.count(chr(10)) - 1} modules)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
