"""``hookgrad.as_torch.install()`` reports a ``torch`` distribution to ``importlib.metadata``
where the real torch is not installed, and leaves an installed PyTorch's metadata alone."""
import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from ._torch_hidden import ROOT, run_with_torch_hidden


def _run(code):
    proc = run_with_torch_hidden(code)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_torch_hidden_hides_the_module_and_its_metadata():
    got = _run("""
        import importlib.metadata, importlib.util, json
        try:
            import torch
            imported = True
        except ModuleNotFoundError:
            imported = False
        try:
            importlib.metadata.version("torch")
            found = True
        except importlib.metadata.PackageNotFoundError:
            found = False
        print(json.dumps([imported, found, "torch" in importlib.metadata.packages_distributions(),
                          importlib.util.find_spec("torch") is None]))
    """)
    assert got == [False, False, False, True]


def test_without_real_torch_metadata_reports_the_version_hookgrad_follows():
    got = _run("""
        import importlib.metadata, json
        import hookgrad.as_torch
        hookgrad.as_torch.install()
        hookgrad.as_torch.install()  # idempotent
        dist = importlib.metadata.distribution("torch")
        print(json.dumps({
            "version": importlib.metadata.version("torch"),
            "name": dist.metadata["Name"], "dist_version": dist.version,
            "packages": importlib.metadata.packages_distributions().get("torch"),
            "listed": sum(d.metadata["Name"] == "torch" for d in importlib.metadata.distributions()),
            "other": importlib.metadata.version("numpy") != "",
        }))
    """)
    assert got == {"version": "2.13.0", "name": "torch", "dist_version": "2.13.0",
                   "packages": ["torch"], "listed": 1, "other": True}


def test_transformers_enables_torch_on_hookgrad_alone():
    if importlib.util.find_spec("transformers") is None:
        pytest.skip("transformers is not installed")
    got = _run("""
        import json
        import hookgrad.as_torch
        hookgrad.as_torch.install()
        from transformers.utils import import_utils
        print(json.dumps([import_utils.is_torch_available(), import_utils.get_torch_version()]))
    """)
    assert got == [True, "2.13.0"]


def test_an_installed_torch_keeps_its_own_metadata():
    try:
        real = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("PyTorch is not installed")
    proc = subprocess.run(
        [sys.executable, "-c", "import importlib.metadata, hookgrad.as_torch; "
         "hookgrad.as_torch.install(); print(importlib.metadata.version('torch'))"],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=ROOT))
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert proc.stdout.strip() == real
