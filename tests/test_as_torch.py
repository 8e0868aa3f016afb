"""``hookgrad.as_torch``: ``import torch`` and ``torch.X`` give hookgrad's modules."""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(args, tmp_path, script):
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(script))
    return subprocess.run([sys.executable, "-m", "hookgrad.as_torch", str(path), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_a_script_runs_with_torch_bound_to_hookgrad(tmp_path):
    proc = _run(["--flag", "7"], tmp_path, """
        import sys
        import torch
        import torch.nn.functional as F
        from torch import nn
        x = torch.tensor([1.0, -2.0], requires_grad=True)
        F.relu(x).sum().backward()
        print(torch.__name__, F.__name__, nn.Linear.__module__, x.grad.tolist(), sys.argv[1:])
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[0] == ("hookgrad hookgrad.nn.functional "
                                          "hookgrad.nn.modules.linear [1.0, 0.0] ['--flag', '7']")


def test_a_missing_submodule_says_hookgrad_lacks_it(tmp_path):
    proc = _run([], tmp_path, "import torch.no_such_module\n")
    assert proc.returncode != 0
    assert ("ModuleNotFoundError: No module named 'torch.no_such_module': hookgrad does not "
            "implement torch.no_such_module yet") in proc.stderr


def test_usage_without_a_script():
    proc = subprocess.run([sys.executable, "-m", "hookgrad.as_torch"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "usage: python -m hookgrad.as_torch SCRIPT" in proc.stdout
