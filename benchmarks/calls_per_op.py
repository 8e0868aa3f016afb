"""Python calls per op of ``eager_overhead.py``'s 200-op chain, forward + backward, warm.

A deterministic count (``cProfile``: every Python function and builtin called), so two
trees compare without timing noise on a shared machine::

    PYTHONPATH=/path/to/before python benchmarks/calls_per_op.py
    PYTHONPATH=$PWD python benchmarks/calls_per_op.py [--top 20] [--mode op_by_op]

Prints ``calls_per_op <mode>: X`` for the default configuration (deferred forward, fused
backward), ``op_by_op`` (deferred forward off) and ``unfused`` (backward fusion off too);
with ``--top N``, the N functions called most per op in each. Each mode is counted in its
own process (one run before another changes its count). The count includes JAX's own
Python; it is the same for both trees when they run the same JAX programs.
"""
import argparse
import cProfile
import os
import pstats
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import eager_overhead as eo  # noqa: E402
from hookgrad._ops import lazy, tiered  # noqa: E402

MODES = {"default": {}, "op_by_op": {"deferred": False},
         "unfused": {"deferred": False, "fused": False}}
RUNS = 20  # chains counted per mode, after the warm-up


def count(mode):
    """``{(file, line, function): calls per op}`` of the chain in ``mode``, warm."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 64)).astype(np.float32) * 0.1
    c = np.full((64, 64), 0.5, np.float32)
    run = eo.run_hookgrad(x, c, **MODES[mode])
    for _ in range(lazy.COMPILE_AT + 2):  # past the first tier and the segment's compile
        run()
    tiered.wait()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(RUNS):
        run()
    prof.disable()
    per_op = RUNS * eo.N_OPS
    return {k: v[1] / per_op for k, v in pstats.Stats(prof).stats.items()}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mode", choices=sorted(MODES),
                   help="count only this configuration (default: each in its own process)")
    p.add_argument("--top", type=int, default=0, help="list the N functions called most")
    a = p.parse_args()
    if a.mode is None:  # one process per mode: a mode run before another changes its count
        for mode in MODES:
            subprocess.run([sys.executable, __file__, "--mode", mode, "--top", str(a.top)],
                           check=True)
        return
    calls = count(a.mode)
    print(f"calls_per_op {a.mode}: {sum(calls.values()):.1f}", flush=True)
    for (path, line, name), n in sorted(calls.items(), key=lambda kv: -kv[1])[:a.top]:
        print(f"  {n:6.2f}  {os.path.basename(path)}:{line}:{name}")


if __name__ == "__main__":
    main()
