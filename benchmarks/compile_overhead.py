"""Python time per call of a cached ``hookgrad.compile`` step, before and after dispatch.

A small MLP training step (2 Linear(32, 32), batch 8, AdamW, ``zero_grad`` / ``backward``
/ ``step``) compiled by ``hookgrad.compile``, and the same step written in JAX + optax
under ``jax.jit(value_and_grad)``. To time the wrappers alone, each program is replaced by
a stub returning its last outputs (no device work):

  hookgrad   hookgrad.compile's call: checking that the last call's state is unchanged
             (or planning it), gathering the inputs, writing the outputs back
  jax_jit    jax.jit's call of the pure-JAX step on the same work: flattening its
             parameter and optimizer-state pytrees (C++), the cache lookup, unflattening

    python benchmarks/compile_overhead.py [--calls 1000] [--rounds 30]

Figures are the best of ``--rounds`` rounds of ``--calls`` calls (as ``timeit`` takes
them: on a shared machine the noise only adds), in microseconds per call, the two
variants interleaved; the last line is ``compile_overhead: hookgrad_us X jax_jit_us Y
ratio Z``.
"""
import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import optax

import hookgrad as hg

D, B = 32, 8


def _hookgrad_step():
    hg.manual_seed(0)
    m = hg.nn.Sequential(hg.nn.Linear(D, D), hg.nn.ReLU(), hg.nn.Linear(D, D))
    opt = hg.optim.AdamW(m.parameters(), lr=1e-3)
    x = hg.randn(B, D)

    @hg.compile
    def step(x):
        opt.zero_grad()
        loss = m(x).square().mean()
        loss.backward()
        opt.step()
        return loss
    for _ in range(3):
        step(x)
    (entry,) = step._cache.values()
    real, seen = entry.exe, []

    def capture(*flat):
        seen.append(list(real(*flat)))
        return seen[-1]
    entry.exe = entry.exe_plain = capture
    step(x)
    res = seen[-1]

    def stub(*flat):
        return res
    entry.exe = entry.exe_plain = stub   # the program's outputs, without running it
    return lambda: step(x)


def _jax_step():
    k = jax.random.split(jax.random.key(0), 3)
    params = {"w1": jax.random.normal(k[0], (D, D)), "b1": jnp.zeros(D),
              "w2": jax.random.normal(k[1], (D, D)), "b2": jnp.zeros(D)}
    x = jax.random.normal(k[2], (B, D))
    tx = optax.adamw(1e-3, weight_decay=1e-2)

    def loss_fn(p, x):
        h = jax.nn.relu(x @ p["w1"].T + p["b1"])
        return jnp.mean(jnp.square(h @ p["w2"].T + p["b2"]))

    def step(p, s, x):
        loss, g = jax.value_and_grad(loss_fn)(p, x)
        upd, s = tx.update(g, s, p)
        return optax.apply_updates(p, upd), s, loss
    state = tx.init(params)
    out = jax.jit(step)(params, state, x)
    leaves, treedef = jax.tree_util.tree_flatten(out)

    # NOTE: the same C++ pytree work as jax.jit's call, around a stub of the program
    stub = jax.jit(lambda *a: None)   # jit's dispatch of a cached program with no work
    stub(*jax.tree_util.tree_leaves((params, state, x)))

    def call():
        flat = jax.tree_util.tree_leaves((params, state, x))
        stub(*flat)
        return jax.tree_util.tree_unflatten(treedef, leaves)
    return call


def _time(fn, calls):
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t) / calls * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args()
    fns = {"hookgrad": _hookgrad_step(), "jax_jit": _jax_step()}
    times = {k: [] for k in fns}
    for _ in range(args.rounds):   # interleaved, so drifting load hits both alike
        for k, fn in fns.items():
            times[k].append(_time(fn, args.calls))
    med = {k: min(v) for k, v in times.items()}
    for k, v in med.items():
        print(f"{k:9s} {v:7.1f} us/call   (median of rounds {statistics.median(times[k]):.1f})")
    print(f"compile_overhead: hookgrad_us {med['hookgrad']:.1f} jax_jit_us "
          f"{med['jax_jit']:.1f} ratio {med['hookgrad'] / med['jax_jit']:.2f}")


if __name__ == "__main__":
    main()
