"""What the tour prints and draws: the per-module table, Grad-CAM and the PNGs."""
import math
import os

import numpy as np

import hookgrad.nn.functional as F


def _fmt(v, spec):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-".rjust(int(spec.split(".")[0]))
    return format(v, spec)


def module_table(model, summary, timer=None):
    """One line per module: forward/backward ms (ModTracker), mean |grad_output| (full
    backward hook), activation mean and dead-unit fraction (forward hook)."""
    lines = [f"  {'module':10s} {'type':10s} {'fwd ms':>7s} {'bwd ms':>7s} "
             f"{'|grad out|':>10s} {'act mean':>9s} {'dead':>5s}"]
    for name, m in model.named_children():
        fw, bw = timer.mean_ms(name) if timer is not None else (None, None)
        s = summary[name]
        lines.append(f"  {name:10s} {type(m).__name__:10s} {_fmt(fw, '7.3f')} {_fmt(bw, '7.3f')} "
                     f"{_fmt(s['grad'], '10.4f')} {_fmt(s['act_mean'], '9.4f')} "
                     f"{_fmt(s['dead'], '5.0%')}")
    if timer is not None:
        fw, bw = timer.mean_ms(type(model).__name__)
        lines.append(f"  {'(model)':10s} {'':10s} {_fmt(fw, '7.3f')} {_fmt(bw, '7.3f')}")
    return "\n".join(lines)


def grad_cam(model, layer, images, targets):
    """Grad-CAM of each picture in ``images`` (N, C, H, W) for its class in ``targets``
    (N,) at ``layer``: a forward hook keeps the activation, a full backward hook its
    gradient. Returns the logits and the maps, (N, H, W) arrays in [0, 1] upsampled to the
    pictures' size. The pictures do not interact, so one backward gives every map."""
    store = {}
    handles = [layer.register_forward_hook(lambda m, i, o: store.__setitem__("act", o)),
               layer.register_full_backward_hook(
                   lambda m, gi, go: store.__setitem__("grad", go[0]))]
    try:
        images = images.clone().requires_grad_(True)   # so every backward hook has a grad_input
        model.zero_grad()
        logits = model(images)
        logits.gather(1, targets[:, None]).sum().backward()
    finally:
        for h in handles:
            h.remove()
        model.zero_grad()
    weights = store["grad"].mean(dim=(2, 3), keepdim=True)       # one weight per channel
    cam = F.relu((weights * store["act"]).sum(dim=1, keepdim=True))
    cam = F.interpolate(cam, size=tuple(images.shape[-2:]), mode="bilinear",
                        align_corners=False)
    cam = to_numpy(cam[:, 0])
    return to_numpy(logits), cam / (cam.max(axis=(1, 2), keepdims=True) + 1e-8)


def heat_on_shape(cam, mask):
    """The fraction of the Grad-CAM heat that lies on the drawn shape (per picture)."""
    return (cam * mask).sum(axis=(-2, -1)) / (cam.sum(axis=(-2, -1)) + 1e-8)
def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def write_plots(outdir, history, cam_example):
    """``loss.png``, ``grad_norms.png`` and ``grad_cam.png`` in ``outdir``; their paths."""
    import matplotlib
    matplotlib.use("Agg")   # files only: no window, no display needed
    import matplotlib.pyplot as plt

    os.makedirs(outdir, exist_ok=True)
    paths = []
    fig, ax = plt.subplots(figsize=(6, 3.5))
    start = 0
    for mode, losses in history["losses"].items():
        ax.plot(range(start, start + len(losses)), losses, label=mode)
        start += len(losses)
    ax.set(xlabel="step", ylabel="cross-entropy loss", title="Training loss", yscale="log")
    ax.legend()
    _mark_switch(ax, history)
    paths.append(_save(fig, outdir, "loss.png"))

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for name, norms in history["grad_norms"].items():
        if norms:
            ax.plot(norms, label=name, lw=1)
    ax.set(xlabel="step", ylabel="|grad_output|", yscale="log",
           title="Per-layer gradient norm (register_full_backward_hook)")
    ax.legend(fontsize=7, ncol=2)
    _mark_switch(ax, history)
    paths.append(_save(fig, outdir, "grad_norms.png"))

    image, cam, title = cam_example
    fig, axes = plt.subplots(1, 2, figsize=(6, 3.2))
    axes[0].imshow(image, cmap="gray")
    axes[0].set_title("input")
    axes[1].imshow(image, cmap="gray")
    axes[1].imshow(cam, cmap="jet", alpha=0.5)
    axes[1].set_title(title, fontsize=9)
    for ax in axes:
        ax.axis("off")
    paths.append(_save(fig, outdir, "grad_cam.png"))
    return paths


def _mark_switch(ax, history):
    if len(history["losses"]) == 2:   # eager, then compiled from where eager stopped
        ax.axvline(len(history["losses"]["eager"]), color="gray", ls=":", lw=1)


def _save(fig, outdir, name):
    import matplotlib.pyplot as plt
    path = os.path.join(outdir, name)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def to_numpy(t):
    return np.asarray(t.detach().cpu().numpy())
