"""A dispatch-bound compiled step against its floor: hand-written JAX.

The step of issue 32 (item 5), as measured outside the project: 8 x (Linear(64, 64) +
ReLU) and a last Linear(64, 64), batch 32, MSE loss, AdamW; with no hooks, and with a
no-op full backward hook on every Linear. Variants:

  hookgrad   ``hookgrad.compile`` of the eager-style step (forward, backward, opt.step,
             zero_grad)
  jax        the same model hand-written: ``jax.jit`` of ``jax.value_and_grad`` and
             ``optax.adamw`` (the hooks are no-ops: nothing to write)

Each is timed in blocks of back-to-back steps, alternating with the other (each pair in
both orders by turns), two ways: pipelined (the host runs ahead; one sync per block) and
synced (each step waits for its loss). The figures are the medians over block pairs of
the hookgrad/jax ratios of wall time and of the process's CPU time (every thread's,
XLA's included: a loaded machine's preemptions do not count in it); the last line is
``step_floor_vs_jax: X``, the largest of the four wall-time figures (the line before it
gives the largest CPU-time one). Each line also gives
the median CPU time of the calling thread per step (Python, dispatch, and what XLA runs
on that thread). Then, per variant, the Python of a steady call alone: the calling
thread's CPU per call with the program stubbed, and of that the stub's own (what is left
is hookgrad's own Python; issue 32's target: 5 us).

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
    """``{"pipelined": (ratios, us), "synced": ...}`` and both first losses: per mode, the
    medians over paired blocks of the hookgrad/jax ratios of wall time and of process CPU
    time, and the median calling-thread CPU per step of each."""
    step, params = hookgrad_step(hooks)
    jstep, state = jax_step(params)
    rng = np.random.default_rng(0)
    xn, yn = rng.standard_normal((B, D), np.float32), rng.standard_normal((B, D), np.float32)
    x, y = hg.tensor(xn), hg.tensor(yn)
    xj, yj = jnp.asarray(xn), jnp.asarray(yn)
    ps = params

    def timed(run, sync):
        start, cpu, thread = time.perf_counter(), time.process_time(), time.thread_time()
        run(sync)
        return (time.perf_counter() - start, time.process_time() - cpu,
                time.thread_time() - thread)

    def run_hg(sync):
        for _ in range(steps):
            out = step(x, y)
            if sync:
                out._data.block_until_ready()
        out._data.block_until_ready()

    def run_jax(sync):
        nonlocal ps, state
        for _ in range(steps):
            ps, state, loss = jstep(ps, state, xj, yj)
            if sync:
                loss.block_until_ready()
        loss.block_until_ready()

    first = float(step(x, y))   # compiles; the same first step as JAX's
    ps, state, loss = jstep(ps, state, xj, yj)
    losses = (first, float(loss))
    for _ in range(3):   # past the first calls (a trace, a replay check) to steady ones
        run_hg(True)
        run_jax(True)
    ratios = {}
    for mode in ("pipelined", "synced"):
        sync = mode == "synced"
        pairs = []
        for i in range(blocks):
            # each pair in both orders, alternately: a drift in the machine's load (or in
            # its caches after the other's run) falls on either side evenly
            if i % 2:
                b, a = timed(run_jax, sync), timed(run_hg, sync)
            else:
                a, b = timed(run_hg, sync), timed(run_jax, sync)
            pairs.append((a[0] / b[0], a[1] / b[1], a[2], b[2]))
        med = np.median(pairs, axis=0)
        ratios[mode] = (float(med[0]), float(med[1])), med[2:] / steps * 1e6
    return ratios, losses


def python_per_call(hooks, calls=2000, rounds=15):
    """The Python of a steady ``hookgrad.compile`` call alone, in microseconds: the calling
    thread's CPU per call (median of ``rounds``) with the program stubbed by a function
    returning its state inputs as the outputs that replace them (nothing for XLA to run,
    and no buffer held past the call, so the call's own checks and donation run as in the
    loop); and the stub's own CPU per call (the same call on as many inputs, timed in
    rounds alternating with the steps'): what a real program's dispatch costs in its
    place is jax.jit's, not hookgrad's."""
    step, _ = hookgrad_step(hooks)
    rng = np.random.default_rng(0)
    x = hg.tensor(rng.standard_normal((B, D), np.float32))
    y = hg.tensor(rng.standard_normal((B, D), np.float32))
    for _ in range(4):
        loss = step(x, y)
    entry = step._replay.basis.entry   # the program the steady calls re-run
    n = len(step._replay.flat)
    # the inputs: state (n), x, y, hyper-parameters, optimizer state; the outputs: state,
    # optimizer state, loss
    n_hp = len(step._replay.hp_leaves[0])
    n_in = n + 2 + n_hp + len(step._replay.states[0].leaves)
    last = loss._data

    def stub(*a):
        return [*a[:n], *a[n + 2 + n_hp:], last]
    entry.exe = entry.exe_plain = stub
    for _ in range(100):
        step(x, y)
    if step._replay is None or not step._replay.basis.steady:
        raise RuntimeError("the stubbed calls did not re-run steadily")
    inputs = [None] * n_in   # the stub's cost is its inputs' count, not what they hold
    per, own = [], []
    for _ in range(rounds):
        start = time.thread_time()
        for _ in range(calls):
            step(x, y)
        per.append((time.thread_time() - start) / calls * 1e6)
        start = time.thread_time()
        for _ in range(calls):
            stub(*inputs)
        own.append((time.thread_time() - start) / calls * 1e6)
    return float(np.median(per)), float(np.median(own))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer blocks")
    args = parser.parse_args()
    blocks, steps = (20, 20) if args.quick else (80, 25)
    # the first Linear's input needs no grad: its hook fires on grad_output (as PyTorch's)
    warnings.filterwarnings("ignore", message="Full backward hook is firing")
    worst = worst_cpu = 0.0
    print(f"load average {os.getloadavg()[0]:.1f}")
    for hooks in (False, True):
        ratios, (la, lb) = measure(hooks, blocks, steps)
        np.testing.assert_allclose(la, lb, rtol=1e-5)   # the same step
        name = "no-op hooks" if hooks else "no hooks"
        for mode, ((wall, cpu), us) in ratios.items():
            print(f"  {name:12s} {mode:10s} hookgrad / jax: wall {wall:.3f}, process CPU "
                  f"{cpu:.3f}   thread CPU per step: hookgrad {us[0]:.1f} us, jax "
                  f"{us[1]:.1f} us")
            worst, worst_cpu = max(worst, wall), max(worst_cpu, cpu)
        call, stub = python_per_call(hooks)
        print(f"  {name:12s} Python per steady call, program stubbed: {call:.2f} us "
              f"(thread CPU; the stub itself {stub:.2f} us, hookgrad's own "
              f"{call - stub:.2f} us)")
    print(f"worst process-CPU ratio: {worst_cpu:.3f}")
    print(f"step_floor_vs_jax: {worst:.3f}")


if __name__ == "__main__":
    main()
