"""``benchmarks/models.py --quick`` runs: every runner trains both models from the same
weights to the same first loss with every block's gradient-norm hook firing (the benchmark
checks both and fails otherwise), the Hugging Face rows run under hookgrad and PyTorch,
and the last line is the worst ratio. Slow tier: about a minute of CPU in ten processes."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MISSING = [n for n in ("torch", "transformers") if importlib.util.find_spec(n) is None]


@pytest.mark.slow
@pytest.mark.skipif(bool(MISSING), reason=f"not installed: {', '.join(MISSING)}")
def test_models_benchmark_quick_runs_every_runner():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "models.py"),
                           "--quick"], capture_output=True, text=True, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert re.fullmatch(r"models_worst_ratio: \d+\.\d\d", lines[-1]), proc.stdout
    # each model's row has a time for every runner (an error would read "error")
    for name in ("resnet", "gpt"):
        row = next(ln for ln in lines if ln.startswith(name))
        assert "error" not in row and len(re.findall(r"\d+\.\d\d / ", row)) == 4, row
        for pair in ("hookgrad / torch", "hookgrad.compile / jax"):
            assert f"{name}: {pair} " in proc.stdout
    for row in ("gpt2 forward+backward eager", "bert forward compiled",
                "llama generate eager", "gpt2 generate compiled", "llama generate compiled"):
        assert re.search(re.escape(row) + r" +\d+\.\d\d / +\d+\.\d\d = ", proc.stdout), \
            proc.stdout
