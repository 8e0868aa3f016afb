"""Python loops of the kind notebooks are full of, hookgrad against PyTorch.

Each idiom is a loop of small reads and writes whose positions and numbers change from one
iteration to the next:

  synthetic_images  build images: read ``where[i].item()`` and ``labels[i].item()``, then
                    ``imgs[i, c, r0:r0 + 8, c0:c0 + 8] += v`` at a few positions
  row_fill          ``out[i] = base * (i % 7) + i * 0.01``
  ragged_padding    ``batch[i, :L] = seq`` for sequences of a few lengths
  metric_loop       a per-batch ``.item()`` metric loop (loss and accuracy)
  preprocessing     per sample: normalize, crop at a position, flip some
  collate           a hand-written collate: stack the samples, make the label tensor
  slice_write_scaling
                    one ``base[i, :64] = v`` write into a base of 8 MB and of 128 MB, both
                    past the host tier's bound (``host_tier.BOUND``: 4 MB of float32), so
                    both are XLA writes: the time per write should not grow with the base
                    (donated buffers, written in place); printed as ``write_128MB_vs_8MB``
                    (warm; 1.0 is flat)

Every idiom runs in fresh processes (three; one with ``--quick``), each with an empty
compilation cache. In each, the idiom's first run is ``cold`` (tracing, first-tier NumPy
runs, background compiles) and PyTorch's first run follows it; then hookgrad runs until
its compiles end, and ``warm`` is the median of rounds in which hookgrad and PyTorch
alternate (which goes first alternates too), each run on fresh data. Times are CPU time
of the process (``time.process_time``: every thread of it, XLA's and the background
compiler's included), steadier than wall time on a shared machine, where a run of a few
milliseconds is preempted or not by chance; the wall times are printed beside them.
Every run's result is checked equal to PyTorch's. A ratio is the median over the
processes. Prints the load average, a table, and, last, ``python_loops_vs_torch: X``: the
worst idiom's warm CPU ratio (target <= 2; ``python_loops_cold_vs_torch``, the worst cold
one: target <= 5). ``--tree DIR`` measures another checkout; given twice (``--tree A --tree
B``), each idiom's processes alternate between the two, a row each, and the last lines
name the tree (B's last). ``--calls`` prints each idiom's Python calls per warm run
instead (cProfile's count: deterministic, so trees compare on a busy machine).

    python benchmarks/python_loops.py [--quick] [--calls] [--tree DIR [--tree DIR ...]]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --------------------------------------------------------------------------- the idioms
# Each is ``prepare(L, n) -> data`` (not timed) and ``run(L, data) -> result``; ``L`` is
# hookgrad or torch.

def synthetic_images(L, data):
    where, labels, imgs = data
    for i in range(imgs.shape[0]):
        w = where[i].item()
        k = labels[i].item()
        r0, c0 = (2, 10, 20)[w], (4, 12, 18)[(i * 7) % 3]
        imgs[i, 0, r0:r0 + 8, c0:c0 + 8] += 2.0
        imgs[i, k % 3, c0:c0 + 4, r0:r0 + 4] += 1.0
        imgs[i, 2, r0:r0 + 2, :] -= 0.5
    return imgs


def _synthetic_images_data(L, n):
    rng = np.random.default_rng(0)
    return (L.tensor(rng.integers(0, 3, n)), L.tensor(rng.integers(0, 10, n)),
            L.zeros(n, 3, 32, 32))


def row_fill(L, data):
    base, out = data
    for i in range(out.shape[0]):
        out[i] = base * (i % 7) + i * 0.01
    return out


def _row_fill_data(L, n):
    return L.arange(64.0), L.zeros(n, 64)


def ragged_padding(L, data):
    seqs, batch = data
    for i, seq in enumerate(seqs):
        batch[i, :seq.shape[0]] = seq
    return batch


def _ragged_padding_data(L, n):
    rng = np.random.default_rng(1)
    lengths = rng.choice([5, 9, 12, 17, 23, 30], n)
    seqs = [L.tensor(rng.standard_normal((m, 16)).astype(np.float32)) for m in lengths]
    return seqs, L.zeros(n, 32, 16)


def metric_loop(L, data):
    total, correct = 0.0, 0.0
    for pred, y in data:
        total += (pred.logsumexp(1) - pred.gather(1, y[:, None])[:, 0]).mean().item()
        correct += (pred.argmax(1) == y).float().sum().item()
    return L.tensor([total, correct])


def _metric_loop_data(L, n):
    rng = np.random.default_rng(2)
    return [(L.tensor(rng.standard_normal((32, 10)).astype(np.float32)),
             L.tensor(rng.integers(0, 10, 32))) for _ in range(max(n // 8, 4))]


def preprocessing(L, data):
    samples, mean, std = data
    out = []
    for i, x in enumerate(samples):
        x = (x - mean) / std
        r, c = i % 5, (i * 3) % 5
        x = x[:, r:r + 28, c:c + 28]
        if i % 2:
            x = x.flip(-1)
        out.append(x)
    return L.stack(out)


def _preprocessing_data(L, n):
    rng = np.random.default_rng(3)
    return ([L.tensor(rng.random((3, 32, 32), np.float32)) for _ in range(n)],
            L.tensor([0.5, 0.4, 0.3]).reshape(3, 1, 1), L.tensor([0.2, 0.25, 0.3]).reshape(3, 1, 1))


def collate(L, data):
    batches = []
    for start in range(0, len(data), 32):
        part = data[start:start + 32]
        imgs = L.stack([img for img, _ in part])
        labels = L.tensor([label for _, label in part])
        batches.append(imgs.sum() + labels.sum())
    return L.stack(batches)


def _collate_data(L, n):
    rng = np.random.default_rng(4)
    return [(L.tensor(rng.random((3, 16, 16), np.float32)), int(rng.integers(0, 10)))
            for _ in range(n)]


IDIOMS = {"synthetic_images": (synthetic_images, _synthetic_images_data),
          "row_fill": (row_fill, _row_fill_data),
          "ragged_padding": (ragged_padding, _ragged_padding_data),
          "metric_loop": (metric_loop, _metric_loop_data),
          "preprocessing": (preprocessing, _preprocessing_data),
          "collate": (collate, _collate_data)}


# --------------------------------------------------------------------------- one process

SCALING_MB = (8, 128)  # the bases of the write-scaling line, past the host tier's bound

def _timed(fn):
    """(seconds, CPU seconds of this process, result) of ``fn()``. On a loaded machine the
    CPU time is the steadier figure: it leaves out the time other processes hold the
    cores (it counts every thread of this one: XLA's and the background compiler's)."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    np.asarray(out.detach().cpu().numpy())  # the result on the host: all work done
    return time.perf_counter() - t0, time.process_time() - c0, out


def worker(name, n, rounds):
    """One idiom in this (fresh) process: hookgrad cold, PyTorch's first run, then warm
    rounds alternating the two (medians). Raises if a result differs from PyTorch's."""
    import hookgrad
    from hookgrad._ops import tiered
    import torch
    torch.set_num_threads(1)  # as hookgrad's eager ops: one core each
    run, prepare = IDIOMS[name]

    def once(L):
        data = prepare(L, n)  # fresh each run: an idiom writes its data in place
        return _timed(lambda: run(L, data))

    cold, cold_cpu, got = once(hookgrad)
    torch_cold, torch_cold_cpu, want = once(torch)
    want = want.numpy()

    def check(got):
        if not np.allclose(got.numpy(), want, rtol=1e-5, atol=1e-5):
            raise SystemExit(f"{name}: hookgrad's result differs from PyTorch's")

    check(got)
    for _ in range(3):  # the repeats start the background compiles; then they end
        once(hookgrad)
    tiered.wait()
    once(torch)
    hg, pt = [], []
    for k in range(rounds):  # alternating, each first in turn: both see the same load
        for L in ((hookgrad, torch) if k % 2 else (torch, hookgrad)):
            t, c, got = once(L)
            if L is hookgrad:
                check(got)
                hg.append((t, c))
            else:
                pt.append((t, c))
    med = statistics.median
    return {"cold": cold, "cold_cpu": cold_cpu, "torch_cold": torch_cold,
            "torch_cold_cpu": torch_cold_cpu,
            "warm": med(t for t, _ in hg), "warm_cpu": med(c for _, c in hg),
            "torch": med(t for t, _ in pt), "torch_cpu": med(c for _, c in pt)}


def scaling_worker(repeats):
    """Per-write seconds of ``base[i, :64] = v`` into an 8 MB and a 128 MB base (XLA
    writes, both: a host-held base would write NumPy memory, another cost)."""
    import hookgrad
    from hookgrad._ops import host_tier, tiered
    out = {}
    for mb in SCALING_MB:
        base = hookgrad.zeros(mb * 1024, 256)  # 1 KiB rows
        assert base.numel() > host_tier.BOUND, "a base the host tier could hold"
        v = hookgrad.ones(64)
        for i in range(8):
            base[i, :64] = v
        tiered.wait()
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            for i in range(50):
                base[i, :64] = v * i
            base[0, 0].item()
            best = min(best, (time.perf_counter() - t0) / 50)
        out[f"{mb}MB"] = best
    return out


def calls_worker(name, n):
    """Python calls (cProfile's count, builtins included) of one warm hookgrad run of the
    idiom ``name``: deterministic, so two trees compare on a busy machine."""
    import cProfile
    import pstats
    import hookgrad
    from hookgrad._ops import tiered
    run, prepare = IDIOMS[name]

    def once():
        data = prepare(hookgrad, n)
        profile = cProfile.Profile()
        profile.enable()
        np.asarray(run(hookgrad, data).detach().cpu().numpy())
        profile.disable()
        return sum(row[1] for row in pstats.Stats(profile).stats.values())

    for _ in range(4):  # the repeats start the background compiles; then they end
        once()
    tiered.wait()
    once()
    return {"calls": once()}


def _child(args, cache, tree=ROOT):
    env = dict(os.environ, HOOKGRAD_COMPILATION_CACHE=cache,
               PYTHONPATH=os.pathsep.join([tree, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, __file__, "--worker", *args], env=env,
                          capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"worker {args} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _print_calls(trees, names, n):
    """``--calls``: each idiom's Python calls per warm run (n samples), a column per tree."""
    for k, tree in enumerate(trees):
        print(f"tree {k}: hookgrad from {tree}")
    print(f"Python calls per warm run of {n} samples (cProfile)")
    print(f"{'idiom':18s}" + "".join(f" {'tree ' + str(k):>9s}" for k in range(len(trees))))
    for name in names:
        counts = []
        for tree in trees:
            with tempfile.TemporaryDirectory() as cache:
                counts.append(_child(["calls", name, str(n)], cache, tree)["calls"])
        print(f"{name:18s}" + "".join(f" {c:9d}" for c in counts))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--worker", nargs="+")
    ap.add_argument("--tree", action="append",
                    help="a hookgrad source tree to measure (default: this one); given more "
                         "than once, each idiom's processes alternate between the trees")
    ap.add_argument("--only", nargs="+", choices=list(IDIOMS), help="these idioms alone")
    ap.add_argument("--calls", action="store_true",
                    help="print each idiom's Python calls per warm run (cProfile) instead")
    a = ap.parse_args()
    n, rounds, processes = (64, 9, 1) if a.quick else (256, 21, 3)
    if a.worker:
        if a.worker[0] == "slice_write_scaling":
            print(json.dumps(scaling_worker(int(a.worker[1]))))
        elif a.worker[0] == "calls":
            print(json.dumps(calls_worker(a.worker[1], int(a.worker[2]))))
        else:
            print(json.dumps(worker(a.worker[0], int(a.worker[1]), int(a.worker[2]))))
        return
    trees = a.tree or [ROOT]
    if a.calls:
        _print_calls(trees, a.only or IDIOMS, n)
        return
    med = statistics.median
    worst = dict.fromkeys(trees, 0.0)
    worst_cold = dict.fromkeys(trees, 0.0)
    for k, tree in enumerate(trees):
        print(f"tree {k}: hookgrad from {tree}")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; CPU ms, "
          f"medians of {processes} fresh process(es), {rounds} warm rounds each")
    print(f"{'idiom':18s} {'tree':>4s} {'cold':>7s} {'warm':>7s} {'torch':>7s} {'cold/torch':>10s} "
          f"{'warm/torch':>10s}  {'wall: cold/torch':>16s} {'warm/torch':>10s}")
    for name in a.only or IDIOMS:
        rs = {tree: [] for tree in trees}
        for _ in range(processes):
            for tree in trees:  # alternating: each tree sees the same load
                with tempfile.TemporaryDirectory() as cache:  # empty: a cold start
                    rs[tree].append(_child([name, str(n), str(rounds)], cache, tree))
        for k, tree in enumerate(trees):
            r = rs[tree]
            cold = med(x["cold_cpu"] / x["torch_cold_cpu"] for x in r)
            warm = med(x["warm_cpu"] / x["torch_cpu"] for x in r)
            wall = med(x["warm"] / x["torch"] for x in r)
            wall_cold = med(x["cold"] / x["torch_cold"] for x in r)
            worst[tree], worst_cold[tree] = max(worst[tree], warm), max(worst_cold[tree], cold)
            ms = [med(x[f] for x in r) * 1e3 for f in ("cold_cpu", "warm_cpu", "torch_cpu")]
            print(f"{name:18s} {k:4d} {ms[0]:7.2f} {ms[1]:7.2f} {ms[2]:7.2f} {cold:10.2f} "
                  f"{warm:10.2f}  {wall_cold:16.2f} {wall:10.2f}")
    for k, tree in enumerate(trees if not a.only else ()):
        with tempfile.TemporaryDirectory() as cache:
            s = _child(["slice_write_scaling", str(rounds)], cache, tree)
        small, large = (f"{mb}MB" for mb in SCALING_MB)
        print(f"tree {k}: slice write per call: {small} base {s[small] * 1e6:.1f} us, {large} "
              f"base {s[large] * 1e6:.1f} us; write_{large}_vs_{small}: "
              f"{s[large] / s[small]:.2f}")
    for k, tree in enumerate(trees):  # the last tree's last: the figure of a plain run
        print(f"python_loops_cold_vs_torch: {worst_cold[tree]:.2f}" +
              (f" (tree {k})" if len(trees) > 1 else ""))
        print(f"python_loops_vs_torch: {worst[tree]:.2f}" +
              (f" (tree {k})" if len(trees) > 1 else ""))


if __name__ == "__main__":
    main()
