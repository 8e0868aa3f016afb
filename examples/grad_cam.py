"""Grad-CAM with a forward hook and a full backward hook, as in the PyTorch recipe.

Ports the usual PyTorch Grad-CAM code (``layer.register_forward_hook`` keeps the
activation, ``layer.register_full_backward_hook`` its gradient; the channel weights are the
gradient's spatial mean) — the code in jacobgil/pytorch-grad-cam and the PyTorch forum
recipes — with only the import changed.

A small CNN learns to tell pictures of noise from pictures of noise with a bright square
planted somewhere; Grad-CAM on a test picture then lights up the square. Writes
``grad_cam.png`` (the picture, the heat map over it) into ``--out DIR``, by default a folder
under the system's temporary directory that it names when it starts.

Run: python examples/grad_cam.py [--steps N] [--out DIR]
"""
import argparse
import os
import tempfile

import numpy as np

import hookgrad as torch
import hookgrad.nn as nn
import hookgrad.nn.functional as F

SIZE, PATCH = 16, 4


def make_data(n, rng):
    """Half the pictures hold a bright PATCH x PATCH square; returns pictures, labels and
    where each square is (a boolean mask, all False for label 0)."""
    x = rng.normal(0.0, 0.5, size=(n, 1, SIZE, SIZE)).astype(np.float32)
    y = rng.integers(0, 2, size=n)
    masks = np.zeros((n, SIZE, SIZE), bool)
    for i in np.flatnonzero(y):
        r, c = rng.integers(0, SIZE - PATCH + 1, size=2)
        masks[i, r:r + PATCH, c:c + PATCH] = True
    x[:, 0][masks] += 2.0
    return torch.from_numpy(x), torch.from_numpy(y), masks


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        return self.head(self.features(x).amax(dim=(2, 3)))   # global max pool


def grad_cam(model, layer, image, target_class):
    """Grad-CAM of ``image`` (1, C, H, W) at ``layer`` for ``target_class``: (H, W) in [0, 1]."""
    store = {}
    h1 = layer.register_forward_hook(lambda m, inp, out: store.__setitem__("act", out))
    h2 = layer.register_full_backward_hook(
        lambda m, gin, gout: store.__setitem__("grad", gout[0]))
    try:
        logits = model(image)
        model.zero_grad()
        logits[0, target_class].backward()
    finally:
        h1.remove()
        h2.remove()
    weights = store["grad"].mean(dim=(2, 3), keepdim=True)      # channel importance
    cam = F.relu((weights * store["act"]).sum(dim=1))[0]        # (H, W)
    return (cam / (cam.max() + 1e-8)).detach().numpy()


def train(model, x, y, steps, batch=32):
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for step in range(steps):
        i = (step * batch) % (len(x) - batch)
        loss = F.cross_entropy(model(x[i:i + batch]), y[i:i + batch])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def save_png(path, image, cam, mask):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no picture written (pip install matplotlib)")
        return None
    fig, axes = plt.subplots(1, 2, figsize=(6, 3.2))
    axes[0].imshow(image, cmap="gray")
    axes[0].contour(mask, levels=[0.5], colors="lime", linewidths=1)
    axes[0].set_title("input (planted square in green)", fontsize=9)
    axes[1].imshow(image, cmap="gray")
    axes[1].imshow(cam, cmap="jet", alpha=0.5)
    axes[1].set_title("Grad-CAM, class 'square'", fontsize=9)
    for ax in axes:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(steps=120, out=None, verbose=True):
    """Train, then write ``grad_cam.png`` into the folder ``out`` (None: a folder
    under the system's temporary directory, never the working directory)."""
    out = out or os.path.join(tempfile.gettempdir(), "hookgrad-examples", "grad_cam")
    os.makedirs(out, exist_ok=True)
    if verbose:
        print(f"writing grad_cam.png to {out} (--out DIR to choose)")
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x, y, _ = make_data(512, rng)
    model = SmallCNN()
    losses = train(model, x, y, steps)
    test_x, _, test_mask = make_data(8, rng)
    i = int(np.flatnonzero(test_mask.any(axis=(1, 2)))[0])     # a picture with a square
    cam = grad_cam(model, model.features[2], test_x[i:i + 1], target_class=1)
    mask = test_mask[i]
    peak = np.unravel_index(cam.argmax(), cam.shape)
    path = save_png(os.path.join(out, "grad_cam.png"), test_x[i, 0].numpy(), cam, mask)
    if verbose:
        print(f"trained {steps} steps: loss {losses[0]:.3f} -> {losses[-1]:.3f}")
        print(f"Grad-CAM peak at {tuple(int(v) for v in peak)}, inside the planted square: "
              f"{bool(mask[peak])}; mean heat inside {cam[mask].mean():.2f}, outside "
              f"{cam[~mask].mean():.2f}")
        if path:
            print(f"wrote {path}")
    return {"losses": losses, "cam": cam, "mask": mask, "png": path}


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=120)
    p.add_argument("--out", metavar="DIR", default=None,
                   help="folder for grad_cam.png (default: one under the temporary "
                        "directory)")
    a = p.parse_args()
    main(a.steps, a.out)
