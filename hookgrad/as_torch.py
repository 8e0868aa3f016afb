"""Bind ``torch`` and every ``torch.X`` to ``hookgrad`` / ``hookgrad.X`` in this process, so
code that does ``import torch`` — a library such as captum or TransformerLens, or a script
you do not want to edit — runs on hookgrad.

    import hookgrad.as_torch
    hookgrad.as_torch.install()
    import captum.attr            # its `import torch` gets hookgrad

    python -m hookgrad.as_torch train.py --epochs 3   # run a script so bound
    python -m hookgrad.as_torch -m torch.distributed.run --nproc-per-node 2 train.py

A ``torch.X`` that hookgrad lacks raises ``ModuleNotFoundError`` saying so. Install it before
anything imports the real ``torch`` (a module that already holds the real one keeps it).

Where the real ``torch`` is not installed, ``importlib.metadata`` then reports a ``torch``
distribution at :data:`TORCH_VERSION`, the PyTorch release whose API hookgrad follows, so
libraries that check torch's version (Hugging Face transformers needs >= 2.6) enable
themselves; an installed PyTorch's metadata is left as it is.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.metadata
import importlib.util
import pathlib
import runpy
import sys
from types import ModuleType

from .version import __version__ as TORCH_VERSION  # the PyTorch release hookgrad follows


class _TorchDistribution(importlib.metadata.Distribution):
    """The metadata of the ``torch`` distribution hookgrad stands in for."""

    _FILES = {"METADATA": f"Metadata-Version: 2.1\nName: torch\nVersion: {TORCH_VERSION}\n"
                          "Summary: hookgrad standing in for PyTorch (hookgrad.as_torch)\n",
              "top_level.txt": "torch\n"}

    def read_text(self, filename):
        return self._FILES.get(filename)

    def locate_file(self, path):
        return pathlib.Path(__file__).resolve().parent / path


class _TorchAsHookgrad(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, report_distribution):
        self._report = report_distribution  # no real torch: importlib.metadata finds ours

    def find_distributions(self, context=importlib.metadata.DistributionFinder.Context()):
        name = context.name
        if self._report and (name is None or name.lower().replace("_", "-") == "torch"):
            yield _TorchDistribution()

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
    if not any(isinstance(f, _TorchAsHookgrad) for f in sys.meta_path):
        sys.meta_path.insert(0, _TorchAsHookgrad(not _real_torch_installed()))
    for key in [k for k in sys.modules if k == "torch" or k.startswith("torch.")]:
        del sys.modules[key]
    return importlib.import_module("torch")


def _real_torch_installed():
    """Whether the real ``torch`` can be imported here (asked before hookgrad binds it)."""
    if "torch" in sys.modules:
        return True
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):  # a finder that refuses it (e.g. a test hiding torch)
        return False


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m hookgrad.as_torch SCRIPT [ARGS...]\n"
              "       python -m hookgrad.as_torch -m MODULE [ARGS...]\n\n"
              "Run SCRIPT (or MODULE, e.g. torch.distributed.run) with `import torch` bound "
              "to hookgrad.")
        return 0 if argv else 2
    install()
    if argv[0] == "-m" and len(argv) > 1:
        sys.argv = list(argv[1:])
        name = argv[1]
        if name == "torch" or name.startswith("torch."):   # run hookgrad's own module
            name = "hookgrad" + name[len("torch"):]
        runpy.run_module(name, run_name="__main__", alter_sys=True)
        return 0
    sys.argv = list(argv)
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())


from . import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
