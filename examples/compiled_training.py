"""A hook-laden training step, eager and compiled end to end with ``hookgrad.compile``.

Ports a PyTorch training loop using ``torch.compile`` on a step with hooks: a forward
hook, a full backward hook clipping ``grad_input``, a tensor hook scaling a gradient and a
logging hook marked ``torch.compile.host_hook`` (hookgrad's way to read values on the host
from inside a compiled step). The same step runs eagerly and compiled from the same
initial weights; hookgrad traces the hooks into one XLA program with the backward pass
and the AdamW update.

Prints a table (loss, ms per step, the one-time first call) and writes
``compiled_training.png`` (both loss curves: they coincide) into ``--out DIR``, by default
a folder under the system's temporary directory that it names when it starts.

Run: python examples/compiled_training.py [--steps N] [--out DIR]
"""
import argparse
import os
import tempfile
import statistics
import time

import hookgrad as torch
import hookgrad.nn as nn


def build(seed=0):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    # clip the gradient flowing out of the last layer into the hidden activations
    model[2].register_full_backward_hook(
        lambda m, gin, gout: tuple(None if g is None else g.clamp(-1, 1) for g in gin))
    model[0].register_forward_hook(lambda m, i, o: o * 1.0)
    model[0].weight.register_hook(lambda g: g * 0.5)
    log = []

    @torch.compile.host_hook
    def log_grad_norm(grad):
        log.append(grad.norm().item())   # runs on the host, compiled or not

    model[2].weight.register_hook(log_grad_norm)

    def step(x, y):
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return step, log


def run(step, x, y, steps):
    losses, times = [], []
    for _ in range(steps):
        start = time.perf_counter()
        losses.append(step(x, y).item())
        times.append(time.perf_counter() - start)
    return losses, times


def save_png(path, curves):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no picture written (pip install matplotlib)")
        return None
    fig, ax = plt.subplots(figsize=(5, 3.2))
    for (name, losses), style in zip(curves.items(), ("-", "--")):
        ax.plot(losses, style, label=name)
    ax.set(xlabel="step", ylabel="MSE", yscale="log", title="same step, eager and compiled")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(steps=40, out=None, verbose=True):
    """Train, then write ``compiled_training.png`` into the folder ``out`` (None: a folder
    under the system's temporary directory, never the working directory)."""
    out = out or os.path.join(tempfile.gettempdir(), "hookgrad-examples", "compiled_training")
    os.makedirs(out, exist_ok=True)
    if verbose:
        print(f"writing compiled_training.png to {out} (--out DIR to choose)")
    torch.manual_seed(1)
    x = torch.randn(256, 8)
    y = x.sum(dim=1, keepdim=True).sin()
    results = {}
    for mode in ("eager", "compiled"):
        step, log = build()
        if mode == "compiled":
            step = torch.compile(step)
        losses, times = run(step, x, y, steps)
        results[mode] = {"losses": losses, "first_s": times[0], "log": log,
                         "ms": 1e3 * statistics.median(times[2:] or times)}
    path = save_png(os.path.join(out, "compiled_training.png"),
                    {m: r["losses"] for m, r in results.items()})
    if verbose:
        print(f"{'mode':9s} {'first loss':>10s} {'last loss':>10s} {'first call s':>12s} "
              f"{'ms/step':>8s}")
        for mode, r in results.items():
            print(f"{mode:9s} {r['losses'][0]:10.4f} {r['losses'][-1]:10.4f} "
                  f"{r['first_s']:12.2f} {r['ms']:8.2f}")
        gap = max(abs(a - b) for a, b in zip(results["eager"]["losses"],
                                               results["compiled"]["losses"]))
        print(f"largest eager-vs-compiled loss difference: {gap:.1e}; the host hook logged "
              f"{len(results['compiled']['log'])} gradient norms from the compiled step")
        print("the first call of each mode includes one-time XLA compilation")
        if path:
            print(f"wrote {path}")
    return results, path


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--out", metavar="DIR", default=None,
                   help="folder for compiled_training.png (default: one under the temporary "
                        "directory)")
    a = p.parse_args()
    main(a.steps, a.out)
