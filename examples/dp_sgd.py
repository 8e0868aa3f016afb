"""Per-example gradient clipping (DP-SGD), two ways, with equal results.

Ports the two PyTorch ways to get per-example gradients for differentially private SGD
(Abadi et al.), with only the import changed:

1. eager hooks, as Opacus's ``GradSampleModule``: a forward hook keeps each ``Linear``'s
   input, a full backward pre-hook its ``grad_output``; one backward of the summed loss gives
   every example's weight gradient as an outer product;
2. ``torch.func`` style: ``functional_call`` + ``grad`` + ``vmap`` over the examples
   (hookgrad.func + jax.vmap, under jax.jit).

Each example's gradient is clipped to norm ``C``, the clipped gradients are summed,
Gaussian noise of scale ``sigma * C`` is added (the same draw for both ways) and the sum is
divided by the batch size. The two ways agree to float32 rounding; DP-SGD then trains.
Prints a table of the per-step loss and the largest difference between the two ways.

Run: python examples/dp_sgd.py [--steps N]
"""
import argparse
import warnings

import jax
import jax.numpy as jnp
import numpy as np

import hookgrad as torch
import hookgrad.func
import hookgrad.nn as nn
import hookgrad.nn.functional as F

CLIP, SIGMA, LR = 1.0, 0.5, 0.5


def per_example_grads_hooks(model, x, y):
    """{parameter name: (B, *shape) gradients}, from Linear hooks and one backward."""
    acts, gouts = {}, {}
    linears = {name: m for name, m in model.named_modules() if isinstance(m, nn.Linear)}
    handles = []
    for name, m in linears.items():
        handles.append(m.register_forward_hook(
            lambda m, i, o, name=name: acts.__setitem__(name, i[0].detach())))
        handles.append(m.register_full_backward_pre_hook(
            lambda m, go, name=name: gouts.__setitem__(name, go[0].detach())))
    try:
        model.zero_grad()
        with warnings.catch_warnings():
            # NOTE: the first layer's input needs no grad, so PyTorch (and hookgrad) warn
            # that its backward hooks see grad_output only; that is all they read here
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            F.cross_entropy(model(x), y, reduction="sum").backward()   # sum: per-example
    finally:
        for h in handles:
            h.remove()
    grads = {}
    for name in linears:
        grads[f"{name}.weight"] = torch.einsum("bo,bi->boi", gouts[name], acts[name])
        grads[f"{name}.bias"] = gouts[name]
    return {k: v.numpy() for k, v in grads.items()}


def per_example_grads_func(model):
    """The same as a function of (x, y): ``vmap(grad(loss of one example))`` over a
    functional call of ``model``, compiled once by ``jax.jit``."""
    def loss_one(params, xi, yi):
        out = hookgrad.func.functional_call(model, params, (xi[None],))
        return -jax.nn.log_softmax(out)[0, yi]

    per_example = jax.jit(jax.vmap(jax.grad(loss_one), in_axes=(None, 0, 0)))

    def grads(x, y):
        params = hookgrad.func.state(model, buffers=False)
        g = per_example(params, jnp.asarray(x.numpy()), jnp.asarray(y.numpy()))
        return {k: np.asarray(v) for k, v in g.items()}
    return grads


def privatize(grads, noise):
    """Clip each example's gradient to norm CLIP, sum, add noise, average."""
    norms = np.sqrt(sum((g.reshape(len(g), -1) ** 2).sum(1) for g in grads.values()))
    scale = np.minimum(1.0, CLIP / (norms + 1e-12))
    n = len(norms)
    return {k: (np.tensordot(scale, g, axes=1) + SIGMA * CLIP * noise[k]) / n
            for k, g in grads.items()}


def main(steps=30, verbose=True, batch=32):
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((512, 10)).astype(np.float32))
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).long()
    model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 2))
    by_func_of = per_example_grads_func(model)
    losses, gaps = [], []
    for step in range(steps):
        i = (step * batch) % (len(x) - batch)
        xb, yb = x[i:i + batch], y[i:i + batch]
        by_hooks = per_example_grads_hooks(model, xb, yb)
        by_func = by_func_of(xb, yb)
        noise = {k: rng.standard_normal(v.shape[1:]).astype(np.float32)
                 for k, v in by_hooks.items()}
        a, b = privatize(by_hooks, noise), privatize(by_func, noise)
        gaps.append(max(float(np.abs(a[k] - b[k]).max()) for k in a))
        with torch.no_grad():
            for name, p in model.named_parameters():
                p.sub_(LR * torch.from_numpy(a[name]))
            losses.append(F.cross_entropy(model(x), y).item())
    if verbose:
        print(f"DP-SGD, clip {CLIP}, noise multiplier {SIGMA}, batches of {batch}")
        print(f"  {'step':>4s} {'loss (all data)':>16s} {'|hooks - vmap|':>15s}")
        for s in sorted({0, steps // 2, steps - 1}):
            print(f"  {s:4d} {losses[s]:16.4f} {gaps[s]:15.1e}")
        print(f"the two ways agree to {max(gaps):.1e} at every step")
    return {"losses": losses, "gaps": gaps}


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=30)
    main(p.parse_args().steps)
