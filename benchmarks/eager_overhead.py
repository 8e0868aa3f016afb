"""Eager overhead: a chain of 200 elementwise ops, forward + backward.

Times, in one run and interleaved (best of several):
  (a) hookgrad eager (tape, hooks dispatch, bookkeeping), the same with every op run when
      called (``hg_op_by_op``: deferred forward off, hookgrad/_ops/lazy.py), and with
      backward fusion off too (``hg_unfused``: every op and every node its own JAX call,
      as in the floor below);
  (b) the floor any JAX eager library pays: each op's forward as a jit-cached JAX function
      and its backward as a jit-cached jax.vjp, called op by op from Python;
  (c) PyTorch eager, when installed.
An indexing row times ``index_select``, ``gather``, ``embedding`` and ``x[i]`` (forward, 64x64 input,
each call on a fresh index tensor as a training loop's batches are) with hookgrad's
PyTorch-style bounds check and with the check switched off, and prints the check's cost
(``indexing_check_overhead``: checked / unchecked time; the aim is <= 1.10).
A cold row runs the chain in a fresh process with an empty compilation cache, alternating
with PyTorch at its default threads run by run, as the issue's figure was measured:
``eager_first3_vs_torch`` (the first three runs; target <= 10) and
``eager_first_second_vs_torch`` (every run within hookgrad's first second; target <= 2);
then, after ``tiered.wait()``, ``eager_alternating_vs_torch_N_threads`` (the median of
paired runs' ratios, PyTorch at its default N threads, then at 1). At its default threads
PyTorch's OpenMP workers spin after each of its runs, on the cores hookgrad's next run
needs (its Python and XLA's thread run side by side); the in-process rows run PyTorch at one.
Everything runs in the default configuration (tiered execution, deferred forward and
backward fusion on, unless the environment turns them off: the first line says which).
Prints per-op microseconds, ``eager_overhead_ratio_vs_torch: X`` and, last,
``eager_overhead_ratio_vs_jax_floor: X`` at 64x64 (the 1024x1024 ratio, where both are
compute-bound, is printed before them; 64x64 runs first). hookgrad defers an op's output
until it is read and runs a repeated segment of deferred ops as one compiled program, and
its backward runs chains of hook-free nodes as one compiled program (from the second
backward of a graph shape on; ``hookgrad.autograd.set_backward_fusion``): that is how it
can beat the floor, which pays one dispatch per op and per node.

    python benchmarks/eager_overhead.py [--quick]
"""
import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np

import hookgrad as hg
from hookgrad._ops import lazy, tiered

OPS = ("mul", "add", "sin", "tanh")
N_OPS = 200


def chain_hookgrad(x, c):
    y = x
    for i in range(N_OPS):
        k = OPS[i % 4]
        if k == "mul":
            y = y * c
        elif k == "add":
            y = y + c
        elif k == "sin":
            y = y.sin()
        else:
            y = y.tanh()
    return y


def make_floor():
    fwd = {"mul": jax.jit(jnp.multiply), "add": jax.jit(jnp.add), "sin": jax.jit(jnp.sin),
           "tanh": jax.jit(jnp.tanh)}
    bwd = {}
    for k, f in (("mul", jnp.multiply), ("add", jnp.add)):
        bwd[k] = jax.jit(lambda a, b, g, f=f: jax.vjp(f, a, b)[1](g)[0])
    for k, f in (("sin", jnp.sin), ("tanh", jnp.tanh)):
        bwd[k] = jax.jit(lambda a, g, f=f: jax.vjp(f, a)[1](g)[0])

    def run(x, c):
        saved = []
        y = x
        for i in range(N_OPS):
            k = OPS[i % 4]
            saved.append((k, y))
            y = fwd[k](y, c) if k in ("mul", "add") else fwd[k](y)
        g = jnp.ones_like(y)
        for k, a in reversed(saved):
            g = bwd[k](a, c, g) if k in ("mul", "add") else bwd[k](a, g)
        return g.block_until_ready()
    return run


def run_hookgrad(x_np, c_np, fused=True, deferred=True):
    x = hg.tensor(x_np, requires_grad=True)
    c = hg.tensor(c_np)

    def run():
        x.grad = None
        with hg.autograd.set_backward_fusion(fused), lazy.set_lazy_forward(deferred):
            chain_hookgrad(x, c).sum().backward()
        return x.grad._data.block_until_ready()
    return run


def run_torch(x_np, c_np, threads=1):
    """PyTorch's run of the chain, at ``threads`` intra-op threads (None: its default)."""
    try:
        import torch
    except ImportError:
        return None
    if threads is not None:  # OpenMP workers spin after each op and would steal the
        torch.set_num_threads(threads)  # cores from the JAX runs interleaved with this one
    x = torch.tensor(x_np, requires_grad=True)
    c = torch.tensor(c_np)

    def run():
        x.grad = None
        chain_hookgrad(x, c).sum().backward()
        return x.grad
    return run


def bench(size, repeats):
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((size, size)).astype(np.float32) * 0.1
    c_np = np.full((size, size), 0.5, np.float32)
    floor = make_floor()
    xj, cj = jnp.asarray(x_np), jnp.asarray(c_np)
    runners = {"hookgrad": run_hookgrad(x_np, c_np), "jax_floor": lambda: floor(xj, cj),
               # op by op, node by node: each its own jitted call, as the floor
               "hg_op_by_op": run_hookgrad(x_np, c_np, deferred=False),
               "hg_unfused": run_hookgrad(x_np, c_np, fused=False, deferred=False)}
    t = run_torch(x_np, c_np)
    if t is not None:
        runners["torch"] = t
    for r in runners.values():  # warm up jit caches (a deferred segment compiles on
        for _ in range(lazy.COMPILE_AT + 1):  # its COMPILE_AT-th run; tiered execution
            r()                                 # compiles a program at its second call)
    tiered.wait()  # the background compiles end: the steady state is timed
    for r in runners.values():
        r()
    best = {k: float("inf") for k in runners}
    for _ in range(repeats):
        for k, r in runners.items():
            t0 = time.perf_counter()
            r()
            best[k] = min(best[k], time.perf_counter() - t0)
    per_op = {k: v / N_OPS * 1e6 for k, v in best.items()}
    for k, v in per_op.items():
        print(f"{size}x{size} {k:11s} {v:8.1f} us/op (forward+backward)")
    return (per_op["hookgrad"] / per_op["jax_floor"],
            per_op["hookgrad"] / per_op["torch"] if "torch" in per_op else None)


@contextlib.contextmanager
def _bounds_unchecked():
    """hookgrad's eager index bounds checks off: the baseline of the indexing row."""
    from hookgrad._ops import gather, indexing, nn_layers
    saved = gather.index_bounds
    for mod in (gather, indexing, nn_layers):
        mod.index_bounds = lambda index: None
    try:
        yield
    finally:
        for mod in (gather, indexing, nn_layers):
            mod.index_bounds = saved


INDEX_OPS = {  # name: (op, the index's shape)
    "index_select": (lambda x, i: x.index_select(0, i), (64,)),
    "gather": (lambda x, i: x.gather(1, i), (64, 8)),
    "embedding": (lambda x, i: hg.nn.functional.embedding(i, x), (64,)),
    "getitem": (lambda x, i: x[i], (64,)),
}


def bench_indexing(repeats, calls=50):
    """Per-call microseconds of each indexing op, bounds-checked and not; returns the
    ratio checked / unchecked of the summed times."""
    x = hg.randn(64, 64, requires_grad=True)
    best = {(k, c): float("inf") for k in INDEX_OPS for c in (True, False)}
    for _ in range(repeats + 1):  # the first round warms the jit caches
        for name, (op, shape) in INDEX_OPS.items():
            for checked in (True, False):
                idx = [hg.randint(0, 64, shape) for _ in range(calls)]  # fresh, as batches
                with contextlib.nullcontext() if checked else _bounds_unchecked():
                    t0 = time.perf_counter()
                    for i in idx:
                        y = op(x, i)
                    y._data.block_until_ready()
                    best[name, checked] = min(best[name, checked],
                                              (time.perf_counter() - t0) / calls * 1e6)
    for name in INDEX_OPS:
        print(f"indexing {name:12s} checked {best[name, True]:6.1f} us   unchecked "
              f"{best[name, False]:6.1f} us")
    return (sum(best[k, True] for k in INDEX_OPS) / sum(best[k, False] for k in INDEX_OPS))


def cold_worker(budget=1.0, steady=100):
    """In this fresh process, PyTorch at its default threads (as a user's process has it):
    the chain run by run, hookgrad then PyTorch, until hookgrad has run for ``budget``
    seconds; then, once the background compiles end (``tiered.wait()``), ``steady`` more
    pairs, and as many with PyTorch at one thread. Prints the per-run seconds of each."""
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((64, 64)).astype(np.float32) * 0.1
    c_np = np.full((64, 64), 0.5, np.float32)
    hg_run, torch_run = run_hookgrad(x_np, c_np), run_torch(x_np, c_np, threads=None)
    got = {"hookgrad": [], "torch": []}
    while sum(got["hookgrad"]) < budget and len(got["hookgrad"]) < 500:
        _pair(hg_run, torch_run, got["hookgrad"], got["torch"])
    tiered.wait()
    import torch
    for threads in (torch.get_num_threads(), 1):
        torch.set_num_threads(threads)
        hg_t, t_t = got[f"hookgrad_{threads}"], got[f"torch_{threads}"] = [], []
        for _ in range(steady):
            _pair(hg_run, torch_run, hg_t, t_t)
    print(json.dumps(got))


def _pair(hg_run, torch_run, hg_times, torch_times):
    t0 = time.perf_counter()
    hg_run()
    hg_times.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    torch_run()
    torch_times.append(time.perf_counter() - t0)


def bench_cold():
    """From a fresh process with an empty compilation cache, against PyTorch run by run:
    (first three runs' ratio, first second's ratio, the steady state's ratios: the
    median of paired runs' after ``tiered.wait()``, PyTorch at its default threads and
    at one)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, HOOKGRAD_COMPILATION_CACHE=cache)
        out = subprocess.run([sys.executable, __file__, "--cold-worker"], env=env,
                             capture_output=True, text=True, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    hg_t, t_t = got.pop("hookgrad"), got.pop("torch")
    print(f"cold 64x64: {len(hg_t)} runs in hookgrad's first second, "
          f"{sum(hg_t) / len(hg_t) / N_OPS * 1e6:.1f} us/op against PyTorch's "
          f"{sum(t_t) / len(t_t) / N_OPS * 1e6:.1f}; first three runs "
          f"{sum(hg_t[:3]) * 1e3:.0f} ms against {sum(t_t[:3]) * 1e3:.0f} ms")
    steady = {}
    for k in sorted(k for k in got if k.startswith("hookgrad_")):
        threads = k.split("_")[1]
        h, t = np.array(got[k]), np.array(got["torch_" + threads])
        steady[threads] = float(np.median(h / t))
        print(f"alternating 64x64, after tiered.wait(), PyTorch at {threads} thread(s): "
              f"{np.median(h) / N_OPS * 1e6:.1f} us/op against "
              f"{np.median(t) / N_OPS * 1e6:.1f} (medians of {len(h)} pairs)")
    return sum(hg_t[:3]) / sum(t_t[:3]), sum(hg_t) / sum(t_t), steady


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cold-worker", action="store_true")
    a = ap.parse_args()
    if a.cold_worker:
        cold_worker()
        return
    print(f"mode: tiered execution {'on' if tiered.is_tiered_execution_enabled() else 'off'}, "
          f"deferred forward {'on' if lazy.is_lazy_forward_enabled() else 'off'}, "
          f"backward fusion {'on' if hg.autograd.is_backward_fusion_enabled() else 'off'}")
    have_torch = run_torch(np.zeros((1, 1), np.float32), np.zeros((1, 1), np.float32))
    cold = bench_cold() if have_torch is not None else None
    # the small size first: the large arrays' allocations would perturb its timings
    small, small_torch = bench(64, 3 if a.quick else 30)
    big, _ = bench(1024, 2 if a.quick else 5)
    print(f"indexing_check_overhead: {bench_indexing(3 if a.quick else 10):.2f}")
    print(f"eager_overhead_ratio_vs_jax_floor_1024x1024: {big:.2f}")
    if cold is not None:
        print(f"eager_first3_vs_torch: {cold[0]:.2f}")
        print(f"eager_first_second_vs_torch: {cold[1]:.2f}")
        for threads, r in cold[2].items():  # PyTorch's default threads: the way
            print(f"eager_alternating_vs_torch_{threads}_threads: {r:.2f}")
    if small_torch:
        print(f"eager_overhead_ratio_vs_torch: {small_torch:.2f}")
    print(f"eager_overhead_ratio_vs_jax_floor: {small:.2f}")


if __name__ == "__main__":
    main()
