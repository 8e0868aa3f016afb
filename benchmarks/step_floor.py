"""A dispatch-bound compiled step against its floor: hand-written JAX.

The step of issue 32 (item 5), as measured outside the project: 8 x (Linear(64, 64) +
ReLU) and a last Linear(64, 64), batch 32, MSE loss, AdamW; with no hooks, and with a
no-op full backward hook on every Linear. Variants:

  hookgrad   ``hookgrad.compile`` of the eager-style step (forward, backward, opt.step,
             zero_grad)
  jax        the same model hand-written: ``jax.jit`` of ``jax.value_and_grad`` and
             ``optax.adamw`` (the hooks are no-ops: nothing to write)

Each is timed in blocks of back-to-back steps, alternating with the other, two ways:
pipelined (the host runs ahead; one sync per block) and synced (each step waits for its
loss). The figure is the median over blocks of the hookgrad/jax time ratio of a block
pair; the last line is ``step_floor_vs_jax: X``, the largest of the four figures. Each
line also gives the median CPU time of the calling thread per step (Python, dispatch,
and what XLA runs on that thread), which a loaded machine disturbs less than wall time.

    python benchmarks/step_floor.py [--quick]
"""
import argparse
import os
import time
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import optax

import hookgrad as hg
import hookgrad.nn.functional as F
from hookgrad import nn

D, B, DEPTH = 64, 32, 8
LR, WD = 1e-3, 1e-2


def hookgrad_step(hooks):
    hg.manual_seed(0)
    layers = []
    for _ in range(DEPTH):
        layers += [nn.Linear(D, D), nn.ReLU()]
    model = nn.Sequential(*layers, nn.Linear(D, D))
    if hooks:
        for m in model:
            if isinstance(m, nn.Linear):
                m.register_full_backward_hook(lambda mod, gi, go: None)
    opt = hg.optim.AdamW(model.parameters(), lr=LR, weight_decay=WD)

    @hg.compile
    def step(x, y):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    params = [jnp.asarray(p.detach().numpy()) for p in model.parameters()]
    return step, params


def jax_step(params):
    tx = optax.adamw(LR, weight_decay=WD)

    def loss_fn(ps, x, y):
        h = x
        for i in range(DEPTH + 1):
            h = h @ ps[2 * i].T + ps[2 * i + 1]
            if i < DEPTH:
                h = jax.nn.relu(h)
        return jnp.mean((h - y) ** 2)

    @jax.jit
    def step(ps, state, x, y):
        loss, g = jax.value_and_grad(loss_fn)(ps, x, y)
        updates, state = tx.update(g, state, ps)
        return optax.apply_updates(ps, updates), state, loss
    return step, tx.init(params)


def measure(hooks, blocks, steps):
    """``{"pipelined": ratio, "synced": ratio}`` (medians) and both first losses."""
    step, params = hookgrad_step(hooks)
    jstep, state = jax_step(params)
    rng = np.random.default_rng(0)
    xn, yn = rng.standard_normal((B, D), np.float32), rng.standard_normal((B, D), np.float32)
    x, y = hg.tensor(xn), hg.tensor(yn)
    xj, yj = jnp.asarray(xn), jnp.asarray(yn)
    ps = params

    def run_hg(sync):
        start, cpu = time.perf_counter(), time.thread_time()
        for _ in range(steps):
            out = step(x, y)
            if sync:
                out._data.block_until_ready()
        out._data.block_until_ready()
        return time.perf_counter() - start, time.thread_time() - cpu

    def run_jax(sync):
        nonlocal ps, state
        start, cpu = time.perf_counter(), time.thread_time()
        for _ in range(steps):
            ps, state, loss = jstep(ps, state, xj, yj)
            if sync:
                loss.block_until_ready()
        loss.block_until_ready()
        return time.perf_counter() - start, time.thread_time() - cpu

    first = float(step(x, y))   # compiles; the same first step as JAX's
    ps, state, loss = jstep(ps, state, xj, yj)
    losses = (first, float(loss))
    ratios = {}
    for mode in ("pipelined", "synced"):
        pairs, cpu = [], []
        for _ in range(blocks):
            (a, ca), (b, cb) = run_hg(mode == "synced"), run_jax(mode == "synced")
            pairs.append(a / b)
            cpu.append((ca, cb))
        us = np.median(cpu, axis=0) / steps * 1e6
        ratios[mode] = float(np.median(pairs)), us
    return ratios, losses


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer blocks")
    args = parser.parse_args()
    blocks, steps = (15, 20) if args.quick else (60, 50)
    # the first Linear's input needs no grad: its hook fires on grad_output (as PyTorch's)
    warnings.filterwarnings("ignore", message="Full backward hook is firing")
    worst = 0.0
    print(f"load average {os.getloadavg()[0]:.1f}")
    for hooks in (False, True):
        ratios, (la, lb) = measure(hooks, blocks, steps)
        np.testing.assert_allclose(la, lb, rtol=1e-5)   # the same step
        for mode, (r, us) in ratios.items():
            print(f"  {'no-op hooks' if hooks else 'no hooks':12s} {mode:10s} "
                  f"hookgrad / jax {r:.3f}   thread CPU per step: hookgrad {us[0]:.1f} us, "
                  f"jax {us[1]:.1f} us")
            worst = max(worst, r)
    print(f"step_floor_vs_jax: {worst:.3f}")


if __name__ == "__main__":
    main()
