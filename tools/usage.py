"""Count which PyTorch names real libraries use: write tools/usage_counts.json.

    pip install --no-deps --target /tmp/corpus accelerate==1.15.0 torchmetrics==1.9.0 \\
        kornia==0.9.0 segmentation-models-pytorch==0.6.0 pytorch-lightning==2.6.6 timm==1.0.31
    python tools/usage.py --path /tmp/corpus     # rescan; then python tools/api_coverage.py

The corpus is CORPUS: each library's installed source (found on ``--path`` first, then on
``sys.path``) is parsed, never imported. A use is counted for

- an attribute chain on ``torch`` or a name bound to a torch module (``import torch as th``,
  ``import torch.nn as nn``, ``from torch.nn import functional as F``): ``F.relu`` counts
  ``torch.nn.functional.relu`` and each prefix of it (``torch.nn``, ``torch.nn.functional``);
- ``from torch.X import Y``: ``torch.X.Y`` and its prefixes;
- ``getattr(torch, "name")``: ``torch.name``;
- ``torch.Tensor`` members, approximated: a call ``<expr>.name(...)`` where ``name`` is a
  method of ``torch.Tensor``, or an attribute read ``<expr>.name`` where it is one of its
  properties (``shape``, ``dtype``, ``mT``), unless ``<expr>`` is a name bound to a module
  by an import. Calls on non-tensors with a Tensor method's name count as well.

The JSON maps each qualified name to ``[libraries using it, total uses]``, so
tools/api_coverage.py can show the counts without the corpus installed.
"""
import argparse
import ast
import importlib.metadata
import importlib.util
import json
import os
import sys
from collections import Counter, defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tools", "usage_counts.json")

# (distribution, import packages): the libraries issue 30 names, and the hook clients
CORPUS = [
    ("transformers", ["transformers"]),
    ("accelerate", ["accelerate"]),
    ("torchmetrics", ["torchmetrics"]),
    ("einops", ["einops"]),
    ("kornia", ["kornia"]),
    ("segmentation-models-pytorch", ["segmentation_models_pytorch"]),
    ("pytorch-lightning", ["pytorch_lightning", "lightning_fabric"]),
    ("timm", ["timm"]),
    ("torchvision", ["torchvision"]),
    ("captum", ["captum"]),
    ("transformer-lens", ["transformer_lens"]),
    ("grad-cam", ["pytorch_grad_cam"]),
    ("torchviz", ["torchviz"]),
]


def tensor_members():
    """(methods, properties): the public members of ``torch.Tensor``, by kind."""
    import torch
    methods, props = set(), set()
    for n in dir(torch.Tensor):
        if n.startswith("_"):
            continue
        member = getattr(torch.Tensor, n)
        (methods if callable(member) else props).add(n)
    return methods, props


class _Scanner(ast.NodeVisitor):
    """The torch names one module uses: ``self.uses`` counts qualified names."""

    def __init__(self, methods, props):
        self.methods, self.props = methods, props
        self.alias = {}          # local name -> qualified torch module path
        self.modules = set()     # local names bound to any imported module
        self.uses = Counter()

    def _use(self, qual):
        parts = qual.split(".")
        for i in range(2, len(parts) + 1):
            self.uses[".".join(parts[:i])] += 1

    def visit_Import(self, node):
        for a in node.names:
            local = a.asname or a.name.split(".")[0]
            self.modules.add(local)
            if a.name == "torch" or a.name.startswith("torch."):
                # ``import torch.nn`` binds ``torch``; ``import torch.nn as nn`` binds nn
                self.alias[local] = a.name if a.asname else "torch"
                if a.name != "torch":
                    self._use(a.name)

    def visit_ImportFrom(self, node):
        mod = node.module or ""
        if node.level or not (mod == "torch" or mod.startswith("torch.")):
            for a in node.names:
                self.modules.add(a.asname or a.name)
            return
        for a in node.names:
            if a.name == "*":
                continue
            qual = f"{mod}.{a.name}"
            self._use(qual)
            local = a.asname or a.name
            self.alias[local] = qual  # a submodule or a class: chains on it resolve
            self.modules.add(local)

    def _chain(self, node):
        """``torch.a.b`` of an attribute chain rooted at a torch alias, else None."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.alias:
            return ".".join([self.alias[node.id], *reversed(parts)])
        return None

    def visit_Attribute(self, node):
        qual = self._chain(node)
        if qual is not None:
            self._use(qual)
            return  # the inner chain is a prefix already counted
        if node.attr in self.props and not self._is_module(node.value):
            self._use(f"torch.Tensor.{node.attr}")
        self.generic_visit(node)

    def _is_module(self, node):
        return isinstance(node, ast.Name) and node.id in self.modules

    def visit_Call(self, node):
        f = node.func
        if (isinstance(f, ast.Attribute) and f.attr in self.methods
                and self._chain(f) is None and not self._is_module(f.value)):
            self._use(f"torch.Tensor.{f.attr}")
        if (isinstance(f, ast.Name) and f.id == "getattr" and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)):
            base = self._chain(node.args[0]) if isinstance(node.args[0], ast.Attribute) \
                else self.alias.get(getattr(node.args[0], "id", None))
            if base is not None:
                self._use(f"{base}.{node.args[1].value}")
        self.generic_visit(node)


def _package_dir(pkg):
    spec = importlib.util.find_spec(pkg)
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def scan_library(pkgs, methods, props):
    """Counter of qualified names over every ``.py`` file of the packages."""
    uses = Counter()
    for pkg in pkgs:
        top = _package_dir(pkg)
        if top is None:
            raise SystemExit(f"{pkg} is not installed (pip install --no-deps --target DIR, "
                             f"then --path DIR)")
        for d, _, files in os.walk(top):
            for fn in sorted(files):
                if not fn.endswith(".py"):
                    continue
                with open(os.path.join(d, fn), encoding="utf-8", errors="replace") as f:
                    try:
                        tree = ast.parse(f.read())
                    except SyntaxError:
                        continue
                s = _Scanner(methods, props)
                s.visit(tree)
                uses.update(s.uses)
    return uses


def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def scan(corpus=CORPUS):
    methods, props = tensor_members()
    libs, per_name = {}, defaultdict(lambda: [0, 0])
    for dist, pkgs in corpus:
        libs[dist] = _version(dist)
        for qual, n in scan_library(pkgs, methods, props).items():
            per_name[qual][0] += 1
            per_name[qual][1] += n
    return {"corpus": libs, "names": dict(sorted(per_name.items()))}


def dumps(data):
    """The JSON text, one name a line (so a rescan's diff reads by name)."""
    rows = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in data["names"].items()]
    return (f'{{"corpus": {json.dumps(data["corpus"])},\n"names": {{\n'
            + ",\n".join(rows) + "\n}}\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--path", action="append", default=[],
                    help="a directory holding corpus packages (pip --target), searched first")
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args(argv)
    sys.path[:0] = args.path
    importlib.invalidate_caches()
    data = scan()
    with open(args.out, "w") as f:
        f.write(dumps(data))
    print(f"wrote {args.out}: {len(data['names'])} names from {len(data['corpus'])} libraries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
