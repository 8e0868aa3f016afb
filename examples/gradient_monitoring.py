"""Gradient monitoring and clipping with hooks, written as PyTorch code.

Ports three PyTorch idioms with only the import changed:

- ``p.register_hook`` on every parameter records its gradient norm (the W&B/TensorBoard
  "log gradient norms" recipe);
- a ``grad_fn.register_prehook`` clips the gradient flowing into the loss's last op;
- ``register_post_accumulate_grad_hook`` runs an SGD step per parameter as soon as its
  gradient is ready (the "optimizer in backward" recipe of the PyTorch tutorials).

Prints a table of gradient norms per parameter and writes ``gradient_monitoring.png``
(the loss and every parameter's gradient norm over the steps) into ``--out DIR``, by
default a folder under the system's temporary directory that it names when it starts.

Run: python examples/gradient_monitoring.py [--steps N] [--out DIR]
"""
import argparse
import os
import tempfile

import hookgrad as torch
import hookgrad.nn as nn


def save_png(path, losses, norms):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no picture written (pip install matplotlib)")
        return None
    fig, (a, b) = plt.subplots(1, 2, figsize=(8, 3.2))
    a.plot(losses)
    a.set(xlabel="step", ylabel="MSE", yscale="log", title="loss")
    for name, ns in norms.items():
        b.plot(ns, label=name)
    b.set(xlabel="step", ylabel="|grad|", yscale="log", title="gradient norm per parameter")
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(steps=60, out=None, verbose=True):
    """Train, then write ``gradient_monitoring.png`` into the folder ``out`` (None: a folder
    under the system's temporary directory, never the working directory)."""
    out = out or os.path.join(tempfile.gettempdir(), "hookgrad-examples", "gradient_monitoring")
    os.makedirs(out, exist_ok=True)
    if verbose:
        print(f"writing gradient_monitoring.png to {out} (--out DIR to choose)")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
    x = torch.randn(64, 4)
    y = (x[:, :1] * 2 - x[:, 1:2]).tanh()
    norms = {name: [] for name, _ in model.named_parameters()}
    for name, p in model.named_parameters():
        # keep the norm as a Tensor: .item() here would wait for every step's gradient
        p.register_hook(lambda g, name=name: norms[name].append(g.norm()))

    lr = 0.2

    def sgd_in_backward(p):
        with torch.no_grad():
            p.sub_(lr * p.grad)
        p.grad = None

    for p in model.parameters():
        p.register_post_accumulate_grad_hook(sgd_in_backward)

    losses = []
    for _ in range(steps):
        loss = ((model(x) - y) ** 2).mean()
        loss.grad_fn.register_prehook(lambda go: (go[0].clamp(-1.0, 1.0),))
        loss.backward()
        losses.append(loss.item())
    norms = {name: [n.item() for n in ns] for name, ns in norms.items()}
    path = save_png(os.path.join(out, "gradient_monitoring.png"), losses, norms)
    if verbose:
        print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f} in {steps} steps "
              "(SGD run by post-accumulate-grad hooks)")
        print(f"  {'parameter':10s} {'first':>8s} {'min':>8s} {'max':>8s} {'last':>8s}")
        for name, ns in norms.items():
            print(f"  {name:10s} {ns[0]:8.4f} {min(ns):8.4f} {max(ns):8.4f} {ns[-1]:8.4f}")
        if path:
            print(f"wrote {path}")
    return losses, norms, path


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--out", metavar="DIR", default=None,
                   help="folder for gradient_monitoring.png (default: one under the temporary "
                        "directory)")
    a = p.parse_args()
    main(a.steps, a.out)
