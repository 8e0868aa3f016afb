"""Time to the first training steps, from a fresh process.

A notebook user pays this on every kernel restart and every new shape: the first three
training steps of a small CNN (two 3x3 convs + a linear layer, batch 32 of 1x16x16, AdamW,
a full backward hook on the last layer), timed from model creation to the third step's
loss on the host, in a fresh process per run (imports, and the one-time set-up of the
library's optimizer module, are timed apart). Variants:

  eager        hookgrad eager, JAX's persistent cache off: a program's first calls run in
               NumPy while XLA compiles it in the background (tiered execution, the
               default; hookgrad/_ops/tiered.py)
  eager_warm   the same, the persistent cache filled by an earlier run (hookgrad's default
               after the first run on a machine)
  eager_compile_first
               hookgrad eager with tiered execution off (HOOKGRAD_TIERED=0): every program
               compiled at first sight, the cache off
  compiled     hookgrad.compile of the step, cache off
  jax_jit      the same step hand-written in JAX + optax under jax.jit(value_and_grad)
  jax_jit_np   the same, its parameters and batch drawn by NumPy (eager jax.random calls
               compile a program per shape: ~2 s of jax_jit's figure on a CPU)
  torch        PyTorch eager (when installed; on the GPU where PyTorch has CUDA, as JAX
               takes the GPU when it has one)

    python benchmarks/first_steps.py [--runs 3]

Each figure is the median of ``--runs`` fresh processes. The last line is
``first_steps: eager_vs_torch X compiled_vs_jax_jit Y compiled_vs_jax_jit_np Y2
eager_warm_vs_torch Z eager_compile_first_vs_torch W``.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPE = (32, 1, 16, 16)


def _hookgrad_model(L):
    nn = L.nn
    m = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(),
                      nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.Flatten(),
                      nn.Linear(8 * 16 * 16, 10))
    m[5].register_full_backward_hook(lambda mod, gin, gout: None)
    return m, L.optim.AdamW(m.parameters(), lr=1e-3)


def _torch_like(L, compiled):
    m, opt = _hookgrad_model(L)
    L.manual_seed(0)
    x, y = L.randn(*SHAPE), L.randint(0, 10, (SHAPE[0],))

    def step(x, y):
        opt.zero_grad()
        loss = L.nn.functional.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        return loss
    if compiled:
        step = L.compile(step)
    for _ in range(3):
        loss = step(x, y)
    return loss.item()


def _jax_jit(host_init=False):
    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax

    if host_init:
        rng = np.random.default_rng(0)
        k = [None] * 5

        def init(key, shape, fan_in):
            return jnp.asarray(rng.uniform(-1, 1, shape).astype(np.float32) / fan_in ** 0.5)
        x = jnp.asarray(rng.standard_normal(SHAPE).astype(np.float32))
        y = jnp.asarray(rng.integers(0, 10, SHAPE[0]))
    else:
        k = jax.random.split(jax.random.key(0), 5)

        def init(key, shape, fan_in):
            return jax.random.uniform(key, shape, jnp.float32, -1, 1) / fan_in ** 0.5
        x = jax.random.normal(k[3], SHAPE)
        y = jax.random.randint(k[4], (SHAPE[0],), 0, 10)
    params = {"c1": init(k[0], (8, 1, 3, 3), 9), "b1": jnp.zeros(8),
              "c2": init(k[1], (8, 8, 3, 3), 72), "b2": jnp.zeros(8),
              "w": init(k[2], (10, 8 * 16 * 16), 2048), "b": jnp.zeros(10)}
    tx = optax.adamw(1e-3, weight_decay=1e-2)

    def conv(h, w, b):
        out = jax.lax.conv_general_dilated(h, w, (1, 1), ((1, 1), (1, 1)))
        return jax.nn.relu(out + b[None, :, None, None])

    def loss_fn(p, x, y):
        h = conv(conv(x, p["c1"], p["b1"]), p["c2"], p["b2"]).reshape(x.shape[0], -1)
        logits = h @ p["w"].T + p["b"]
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    @jax.jit
    def step(p, s, x, y):
        loss, g = jax.value_and_grad(loss_fn)(p, x, y)
        upd, s = tx.update(g, s, p)
        return optax.apply_updates(p, upd), s, loss
    state = tx.init(params)
    for _ in range(3):
        params, state, loss = step(params, state, x, y)
    return float(loss)


def worker(variant):
    t0 = time.perf_counter()
    if variant == "torch":
        import torch as L
        if L.cuda.is_available():  # like for like with JAX, which takes the GPU
            L.set_default_device("cuda")
    elif not variant.startswith("jax_jit"):
        import hookgrad as L
    else:
        import jax  # noqa: F401
        import optax  # noqa: F401
    if not variant.startswith("jax_jit"):
        # one-time library set-up counts as import (PyTorch's first optimizer imports its
        # compiler stack: ~1.5 s here)
        L.optim.AdamW([L.nn.Parameter(L.zeros(1))])
    t1 = time.perf_counter()
    if variant.startswith("jax_jit"):
        _jax_jit(host_init=variant == "jax_jit_np")
    else:
        _torch_like(L, variant == "compiled")
    t2 = time.perf_counter()
    print(json.dumps({"import": t1 - t0, "steps": t2 - t1}))


def _fresh(variant, cache):
    env = dict(os.environ, PYTHONPATH=ROOT,
               HOOKGRAD_COMPILATION_CACHE=cache or "0",
               HOOKGRAD_TIERED="0" if variant == "eager_compile_first" else "1")
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    worker = "eager" if variant == "eager_compile_first" else variant
    out = subprocess.run([sys.executable, __file__, "--worker", worker], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--worker")
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker)
    try:
        import torch  # noqa: F401
        variants = ["eager", "eager_warm", "eager_compile_first", "compiled", "jax_jit",
                    "jax_jit_np", "torch"]
    except ImportError:
        variants = ["eager", "eager_warm", "eager_compile_first", "compiled", "jax_jit",
                    "jax_jit_np"]
    with tempfile.TemporaryDirectory() as cache:
        _fresh("eager", cache)  # fills the persistent cache for eager_warm
        times = {v: [] for v in variants}
        for _ in range(args.runs):  # interleaved, so drifting load hits all alike
            for v in variants:
                r = _fresh("eager" if v == "eager_warm" else v,
                           cache if v == "eager_warm" else None)
                times[v].append(r["steps"])
    med = {v: statistics.median(t) for v, t in times.items()}
    for v in variants:
        print(f"{v:19s} {med[v]:7.3f} s   (runs: {', '.join(f'{t:.2f}' for t in times[v])})")
    torch_t = med.get("torch")
    parts = []
    if torch_t:
        parts.append(f"eager_vs_torch {med['eager'] / torch_t:.1f}")
    parts.append(f"compiled_vs_jax_jit {med['compiled'] / med['jax_jit']:.2f}")
    parts.append(f"compiled_vs_jax_jit_np {med['compiled'] / med['jax_jit_np']:.2f}")
    if torch_t:
        parts.append(f"eager_warm_vs_torch {med['eager_warm'] / torch_t:.1f}")
        parts.append(f"eager_compile_first_vs_torch "
                     f"{med['eager_compile_first'] / torch_t:.1f}")
    print("first_steps: " + " ".join(parts))


if __name__ == "__main__":
    main()
