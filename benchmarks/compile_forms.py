"""``hookgrad.compile(model)`` in an eager loop vs ``hookgrad.compile(step)`` vs eager.

One SGD (momentum) training step of a small MLP (64-256-256-10, batch 128, ReLU,
cross-entropy), milliseconds per step, best of 7 interleaved rounds of 20 steps after warm-up:

  eager        the plain eager loop
  model_form   the same loop with ``cmodel = hookgrad.compile(model)``: a compiled forward
               and one compiled backward node; ``opt.step()`` stays eager
  step_form    ``hookgrad.compile(step)``: forward, backward and optimizer in one program

    python benchmarks/compile_forms.py
"""
import copy
import time

import jax

import hookgrad
import hookgrad.nn.functional as F
from hookgrad import nn


def _loop(model, compiled_step):
    opt = hookgrad.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step(x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return hookgrad.compile(step) if compiled_step else step


def _time_all(steps, x, y, rounds=7, n=20):
    """Best ms per step of each variant; rounds interleaved, so that a busy machine slows
    all variants alike."""
    for step in steps.values():
        for _ in range(3):
            step(x, y)
    best = dict.fromkeys(steps, float("inf"))
    for _ in range(rounds):
        for name, step in steps.items():
            t0 = time.perf_counter()
            for _ in range(n):
                loss = step(x, y)
            jax.block_until_ready(loss._data)
            best[name] = min(best[name], (time.perf_counter() - t0) / n * 1e3)
    return best


def main():
    hookgrad.manual_seed(0)
    base = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                         nn.Linear(256, 10))
    x, y = hookgrad.randn(128, 64), hookgrad.randint(0, 10, (128,))
    steps = {"eager": _loop(copy.deepcopy(base), False),
             "model_form": _loop(hookgrad.compile(copy.deepcopy(base)), False),
             "step_form": _loop(copy.deepcopy(base), True)}
    best = _time_all(steps, x, y)
    for name, ms in best.items():
        print(f"{name:11s} {ms:6.2f} ms/step")
    print(f"step_form_vs_eager: {best['step_form'] / best['eager']:.2f}")
    # the ratio this benchmark is for: the compiled model's step time over eager's
    print(f"model_form_vs_eager: {best['model_form'] / best['eager']:.2f}")


if __name__ == "__main__":
    main()
