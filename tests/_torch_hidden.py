"""Run code in a fresh Python where the real ``torch`` is not installed, as far as the code can
tell: ``import torch`` raises ``ModuleNotFoundError`` and ``importlib.metadata`` finds no
``torch`` distribution (the case of a machine with only hookgrad, such as a TPU VM), even
though PyTorch is installed beside the tests.

    proc = run_with_torch_hidden('''
        import hookgrad.as_torch
        hookgrad.as_torch.install()
        import torch
        print(torch.__name__)
    ''')
    assert proc.returncode == 0, proc.stderr
"""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# runs first in the child: a meta-path finder refusing torch, and metadata without it
_HIDE_TORCH = '''
import importlib.abc as _abc, importlib.metadata as _md, sys as _sys

class _NoRealTorch(_abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

_sys.meta_path.insert(0, _NoRealTorch())
_found = _md.MetadataPathFinder.find_distributions

def _without_torch(cls, *args, **kwargs):
    return (d for d in _found(*args, **kwargs)
            if (d.metadata["Name"] or "").lower() != "torch")

_md.MetadataPathFinder.find_distributions = classmethod(_without_torch)
del _abc, _md, _sys
'''


def run_with_torch_hidden(code, *, timeout=600, env=None):
    """Run ``code`` (dedented) in a new interpreter with the real torch hidden, hookgrad
    importable from this checkout; returns the ``subprocess.CompletedProcess`` (text)."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", _HIDE_TORCH + textwrap.dedent(code)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
