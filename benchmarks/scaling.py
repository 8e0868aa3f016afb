"""A data-parallel compiled step with hooks on 1, 2, 4 and 8 devices: step time and how much
of the program is collectives.

The model is an MLP (4 Linear 512x512, GELU, batch 256 split over the devices), AdamW,
a gradient-clipping full backward hook and a tensor hook on a parameter; the step is
``hookgrad.compile(step, mesh=..., in_shardings=P("data"))``. Each device count runs in
its own process (``XLA_FLAGS=--xla_force_host_platform_device_count=N`` on a CPU; on a
GPU/TPU machine the first N devices). For each it reports the median step time and, from
the compiled program, the bytes its collectives (all-reduce, all-gather, reduce-scatter,
all-to-all, collective-permute) move as a fraction of the bytes XLA's cost analysis says
the program accesses: a proxy for the share of step time spent communicating.

On a CPU the simulated devices share the same cores, so the times are a smoke test: the
figure that matters is measured on accelerators.

    python benchmarks/scaling.py [--quick] [--devices 1,2,4,8] [--comm-hook bf16]

``--comm-hook allreduce|fp16|bf16`` wraps the model in ``DistributedDataParallel`` with
that default communication hook (the gradients' all-reduce in shard_map, in fp16/bf16 for
the compression hooks; XLA's CPU backend widens a 16-bit all-reduce to f32 when it
compiles, so on a CPU the collective bytes do not change: compare on GPUs/TPUs).

Last line: ``scaling_time_ratio_8_vs_1: X`` (step time on 8 devices over 1 device).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all",
               "collective-permute")
_BYTES = {"f32": 4, "bf16": 2, "f16": 2, "s32": 4, "u32": 4, "f64": 8, "s64": 8, "pred": 1,
          "u8": 1, "s8": 1}


def collective_bytes(hlo):
    """Bytes of the results of the collective ops in an HLO module's text."""
    total = 0
    hlo = re.sub(r"/\*.*?\*/", "", hlo)   # "/*index=5*/" comments inside tuple shapes
    pattern = re.compile(r"=\s*(\(?[^=]*?\)?)\s+(" + "|".join(COLLECTIVES) +
                         r")(?:-start)?\(")
    for m in pattern.finditer(hlo):
        for dtype, dims in re.findall(r"(\w+)\[([\d,]*)\]", m.group(1)):
            n = 1
            for d in filter(None, dims.split(",")):
                n *= int(d)
            total += n * _BYTES.get(dtype, 4)
    return total


def child(n, steps, comm_hook=None):
    import jax
    import numpy as np
    from jax.sharding import PartitionSpec as P

    import hookgrad
    import hookgrad.nn as nn
    from hookgrad.distributed.device_mesh import DeviceMesh

    devices = jax.devices()[:n]
    mesh = DeviceMesh(devices[0].platform.replace("gpu", "cuda"), [d.id for d in devices],
                      mesh_dim_names=("data",))
    hookgrad.manual_seed(0)
    layers = []
    for _ in range(4):
        layers += [nn.Linear(512, 512), nn.GELU()]
    model = nn.Sequential(*layers[:-1])
    opt = hookgrad.optim.AdamW(model.parameters(), lr=1e-3)
    model[2].register_full_backward_hook(lambda m, gin, gout: (gin[0].clamp(-1, 1),))
    model[0].weight.register_hook(lambda g: g * 0.5)

    net = model
    if comm_hook:
        from hookgrad.distributed.algorithms.ddp_comm_hooks import default_hooks
        net = nn.parallel.DistributedDataParallel(model, device_mesh=mesh)
        name = "allreduce_hook" if comm_hook == "allreduce" else f"{comm_hook}_compress_hook"
        net.register_comm_hook(None, getattr(default_hooks, name))

    def step(x, y):
        opt.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    cstep = hookgrad.compile(step, mesh=mesh, in_shardings=P("data"))
    rng = np.random.default_rng(0)
    x = hookgrad.tensor(rng.standard_normal((256, 512), dtype=np.float32))
    y = hookgrad.tensor(rng.standard_normal((256, 512), dtype=np.float32))
    for _ in range(3):
        jax.block_until_ready(cstep(x, y)._data)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        jax.block_until_ready(cstep(x, y)._data)
        times.append(time.perf_counter() - t0)
    compiled = cstep.lower(x, y).compile()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, (list, tuple)) else cost
    accessed = float(cost.get("bytes accessed", 0.0)) if cost else 0.0
    coll = collective_bytes(compiled.as_text())
    print(json.dumps({"devices": n, "step_ms": 1e3 * float(np.median(times)),
                      "collective_bytes": coll, "bytes_accessed": accessed,
                      "trace_count": cstep.trace_count}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 timed steps instead of 50")
    ap.add_argument("--devices", default="1,2,4,8")
    ap.add_argument("--comm-hook", choices=("allreduce", "fp16", "bf16"),
                    help="DistributedDataParallel with this default communication hook")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    steps = 10 if args.quick else 50
    if args.child:
        return child(args.child, steps, args.comm_hook)
    import jax  # noqa: F401 - only to know the platform; children own their devices
    rows = []
    for n in map(int, args.devices.split(",")):
        env = dict(os.environ)
        if jax.default_backend() == "cpu":
            env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") +
                                f" --xla_force_host_platform_device_count={n}").strip()
        cmd = [sys.executable, os.path.abspath(__file__), "--child", str(n)]
        if args.quick:
            cmd.append("--quick")
        if args.comm_hook:
            cmd += ["--comm-hook", args.comm_hook]
        out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        if out.returncode:
            sys.exit(f"{n} devices failed:\n{out.stderr[-2000:]}")
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"{'devices':>8} {'step ms':>9} {'collective MB':>14} {'accessed MB':>12} "
          f"{'collective share':>17}")
    for r in rows:
        share = r["collective_bytes"] / r["bytes_accessed"] if r["bytes_accessed"] else 0.0
        print(f"{r['devices']:>8} {r['step_ms']:>9.2f} {r['collective_bytes'] / 1e6:>14.2f} "
              f"{r['bytes_accessed'] / 1e6:>12.2f} {share:>17.1%}")
    by_n = {r["devices"]: r["step_ms"] for r in rows}
    if 1 in by_n and 8 in by_n:
        print(f"scaling_time_ratio_8_vs_1: {by_n[8] / by_n[1]:.3f}")


if __name__ == "__main__":
    main()
