"""Bind ``torch`` and every ``torch.X`` to ``hookgrad`` / ``hookgrad.X`` in this process, so
code that does ``import torch`` — a library such as captum or TransformerLens, or a script
you do not want to edit — runs on hookgrad.

    import hookgrad.as_torch
    hookgrad.as_torch.install()
    import captum.attr            # its `import torch` gets hookgrad

    python -m hookgrad.as_torch train.py --epochs 3   # run a script so bound

A ``torch.X`` that hookgrad lacks raises ``ModuleNotFoundError`` saying so. Install it before
anything imports the real ``torch`` (a module that already holds the real one keeps it).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import runpy
import sys
from types import ModuleType


class _TorchAsHookgrad(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname == "torch" or fullname.startswith("torch."):
            target_name = "hookgrad" + fullname[len("torch"):]
            try:
                importlib.import_module(target_name)
            except ModuleNotFoundError as e:
                if e.name is None or not target_name.startswith(e.name):
                    raise  # the hookgrad module exists but fails to import something else
                raise ModuleNotFoundError(
                    f"No module named {fullname!r}: hookgrad does not implement {fullname} yet "
                    "(docs/api_coverage.md lists what it covers)", name=fullname) from None
            return importlib.util.spec_from_loader(fullname, self, origin=target_name)
        return None

    def create_module(self, spec):
        module = importlib.import_module(spec.origin)
        if not hasattr(module, "__path__"):
            # an empty search path: ``torch.X.Y`` under a plain module ``X`` then reaches
            # find_spec (and its "does not implement" error), not Python's "not a package"
            module.__path__ = []
        return module

    def exec_module(self, module):
        pass


def install() -> ModuleType:
    """Make ``import torch`` (and ``torch.X``) give hookgrad's modules; returns ``hookgrad``.

    Idempotent. Already-imported real ``torch`` modules are dropped from ``sys.modules``.
    """
    for key in [k for k in sys.modules if k == "torch" or k.startswith("torch.")]:
        del sys.modules[key]
    if not any(isinstance(f, _TorchAsHookgrad) for f in sys.meta_path):
        sys.meta_path.insert(0, _TorchAsHookgrad())
    return importlib.import_module("torch")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m hookgrad.as_torch SCRIPT [ARGS...]\n\n"
              "Run SCRIPT with `import torch` bound to hookgrad.")
        return 0 if argv else 2
    install()
    sys.argv = list(argv)
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())


from . import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
