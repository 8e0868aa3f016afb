"""Activation patching on a tiny transformer, TransformerLens-style ``run_with_hooks``.

Ports the activation-patching loop of TransformerLens / ARENA's interpretability
tutorials (``model.run_with_hooks(corrupt, fwd_hooks=[(name, patch_fn)])`` over every
layer and position, written with plain ``register_forward_hook``) with only the import
changed.

The task: read the token at position ``SRC`` and predict it at the last position. The
model has three blocks, but only block ``PLANTED`` may attend across positions (the
others are MLP-only), so one layer must move the answer. For a corrupted input (the token
at ``SRC`` changed) each residual-stream activation of the clean run is patched in, one
layer and position at a time, and we measure how much of the clean-vs-corrupt logit
difference it restores. The answer lives at ``SRC`` up to the planted block and at the
last position from it on; every other cell restores nothing. Prints a table and writes
``activation_patching.png`` into ``--out DIR``, by default a folder under the system's
temporary directory that it names when it starts.

Run: python examples/activation_patching.py [--steps N] [--out DIR]
"""
import argparse
import os
import tempfile
import math

import numpy as np

import hookgrad as torch
import hookgrad.nn as nn
import hookgrad.nn.functional as F

VOCAB, SEQ, SRC, D, LAYERS, PLANTED = 8, 5, 1, 32, 3, 1


class HookPoint(nn.Identity):
    """A named place to hook, as TransformerLens's ``HookPoint``."""


class Block(nn.Module):
    def __init__(self, attends):
        super().__init__()
        self.attends = attends
        if attends:
            self.qkv = nn.Linear(D, 3 * D)
            self.proj = nn.Linear(D, D)
        self.mlp = nn.Sequential(nn.Linear(D, 2 * D), nn.ReLU(), nn.Linear(2 * D, D))
        self.hook_resid_post = HookPoint()

    def forward(self, x):
        if self.attends:
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            att = (q @ k.transpose(1, 2) / math.sqrt(D)).softmax(dim=-1)
            x = x + self.proj(att @ v)
        return self.hook_resid_post(x + self.mlp(x))


class TinyTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        self.pos = nn.Parameter(torch.randn(SEQ, D) * 0.5)
        self.hook_embed = HookPoint()
        self.blocks = nn.ModuleList([Block(i == PLANTED) for i in range(LAYERS)])
        self.unembed = nn.Linear(D, VOCAB)

    def forward(self, tokens):
        x = self.hook_embed(self.embed(tokens) + self.pos)
        for b in self.blocks:
            x = b(x)
        return self.unembed(x[:, -1])


def run_with_hooks(model, tokens, fwd_hooks):
    """``model(tokens)`` with forward hooks ``[(module name, fn(module, input, output))]``
    added for this call only, as TransformerLens's ``run_with_hooks``."""
    modules = dict(model.named_modules())
    handles = [modules[name].register_forward_hook(fn) for name, fn in fwd_hooks]
    try:
        return model(tokens)
    finally:
        for h in handles:
            h.remove()


def hook_names():
    return ["hook_embed"] + [f"blocks.{i}.hook_resid_post" for i in range(LAYERS)]


def train(model, steps, rng, batch=64):
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(steps):
        tokens = torch.from_numpy(rng.integers(0, VOCAB, size=(batch, SEQ)))
        loss = F.cross_entropy(model(tokens), tokens[:, SRC])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@torch.no_grad()
def patching_grid(model, rng, n=64):
    """restored[layer, position]: the fraction of the logit difference that patching the
    clean residual stream in at (layer, position) restores, averaged over ``n`` pairs."""
    clean = rng.integers(0, VOCAB, size=(n, SEQ))
    corrupt = clean.copy()
    corrupt[:, SRC] = (clean[:, SRC] + rng.integers(1, VOCAB, size=n)) % VOCAB
    clean, corrupt = torch.from_numpy(clean), torch.from_numpy(corrupt)
    rows = torch.arange(n)

    def logit_diff(logits):   # clean answer minus corrupted answer
        return logits[rows, clean[:, SRC]] - logits[rows, corrupt[:, SRC]]

    cache = {}
    run_with_hooks(model, clean, [(name, lambda m, i, o, name=name: cache.__setitem__(name, o))
                                  for name in hook_names()])
    clean_diff = logit_diff(model(clean))
    corrupt_diff = logit_diff(model(corrupt))
    restored = np.zeros((len(hook_names()), SEQ))
    for li, name in enumerate(hook_names()):
        for pos in range(SEQ):
            def patch(m, i, out, name=name, pos=pos):
                out = out.clone()
                out[:, pos] = cache[name][:, pos]
                return out
            diff = logit_diff(run_with_hooks(model, corrupt, [(name, patch)]))
            restored[li, pos] = ((diff - corrupt_diff) / (clean_diff - corrupt_diff)).mean().item()
    return restored


def save_png(path, restored):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no picture written (pip install matplotlib)")
        return None
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    im = ax.imshow(restored, cmap="RdBu", vmin=-1, vmax=1)
    labels = ["embedding"] + [f"after block {i}" for i in range(LAYERS)]
    ax.set(xticks=range(SEQ), yticks=range(len(restored)), yticklabels=labels,
           xlabel="position", title="fraction of the logit difference restored")
    fig.colorbar(im, ax=ax)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(steps=300, out=None, verbose=True):
    """Train, then write ``activation_patching.png`` into the folder ``out`` (None: a folder
    under the system's temporary directory, never the working directory)."""
    out = out or os.path.join(tempfile.gettempdir(), "hookgrad-examples", "activation_patching")
    os.makedirs(out, exist_ok=True)
    if verbose:
        print(f"writing activation_patching.png to {out} (--out DIR to choose)")
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = TinyTransformer()
    losses = train(model, steps, rng)
    restored = patching_grid(model, rng)
    last = SEQ - 1
    # the layer that moves the answer: the first whose last position carries it
    found = next((li - 1 for li in range(len(restored)) if restored[li, last] > 0.5), None)
    path = save_png(os.path.join(out, "activation_patching.png"), restored)
    if verbose:
        print(f"trained {steps} steps: loss {losses[0]:.3f} -> {losses[-1]:.3f}")
        print("fraction of the clean-vs-corrupt logit difference restored by patching:")
        print(f"  {'':26s}" + "".join(f"{'pos ' + str(p):>7s}  " for p in range(SEQ)))
        for name, row in zip(hook_names(), restored):
            print(f"  {name:26s}" + "".join(f"{v:7.0%}  " for v in row))
        print(f"the answer moves from position {SRC} to position {last} in block {found} "
              f"(planted: block {PLANTED})")
        if path:
            print(f"wrote {path}")
    return {"losses": losses, "restored": restored, "found_layer": found, "png": path}


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--out", metavar="DIR", default=None,
                   help="folder for activation_patching.png (default: one under the temporary "
                        "directory)")
    a = p.parse_args()
    main(a.steps, a.out)
