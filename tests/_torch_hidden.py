"""Run code in a fresh Python where the real ``torch`` is not installed, as far as the code
can tell: ``import torch`` raises ``ModuleNotFoundError``, ``importlib.util.find_spec`` gives
None and ``importlib.metadata`` finds no ``torch`` distribution (the case of a machine with
only hookgrad, such as a TPU VM), though PyTorch is installed beside the tests.

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

# runs first in the child: the path finder and the metadata finder do not see the hidden
# packages, so ``import`` and ``importlib.util.find_spec`` act as if they were not installed
_HIDE = '''
import importlib.machinery as _machinery, importlib.metadata as _md
_HIDDEN = {hidden!r}
_find_spec = _machinery.PathFinder.find_spec

def _no_hidden_spec(cls, name, path=None, target=None):
    return None if name.split(".")[0] in _HIDDEN else _find_spec(name, path, target)

_machinery.PathFinder.find_spec = classmethod(_no_hidden_spec)
_found = _md.MetadataPathFinder.find_distributions

def _no_hidden_distribution(cls, *args, **kwargs):
    return (d for d in _found(*args, **kwargs)
            if (d.metadata["Name"] or "").lower() not in _HIDDEN)

_md.MetadataPathFinder.find_distributions = classmethod(_no_hidden_distribution)
del _machinery, _md
'''


def run_with_torch_hidden(code, *, also_hide=(), timeout=600, env=None):
    """Run ``code`` (dedented) in a new interpreter with the real torch (and the top-level
    packages ``also_hide`` names, e.g. ``("torchvision",)``) hidden, hookgrad importable
    from this checkout; returns the ``subprocess.CompletedProcess`` (text)."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    hide = _HIDE.format(hidden=tuple(sorted({"torch", *also_hide})))
    return subprocess.run([sys.executable, "-c", hide + textwrap.dedent(code)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
