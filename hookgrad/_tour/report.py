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


def write_plots(outdir, history, cam_example, groups):
    """``loss.png``, ``grad_norms.png`` and ``grad_cam.png`` in ``outdir``; their paths.
    ``groups`` maps a panel title to the module names whose gradient norms it draws."""
    import matplotlib
    matplotlib.use("Agg")   # files only: no window, no display needed
    import matplotlib.pyplot as plt

    os.makedirs(outdir, exist_ok=True)
    return [_save(_loss_figure(plt, history), outdir, "loss.png"),
            _save(_grad_norm_figure(plt, history, groups), outdir, "grad_norms.png"),
            _save(_grad_cam_figure(plt, *cam_example), outdir, "grad_cam.png")]


def _phase_labels(history):
    # the compiled phase starts from the weights eager left: say so wherever it is drawn
    both = len(history["losses"]) == 2
    return {mode: f"{mode} (continues eager's training)" if both and mode == "compiled"
            else mode for mode in history["losses"]}


def _loss_figure(plt, history):
    fig, ax = plt.subplots(figsize=(7, 3.8))
    start, labels = 0, _phase_labels(history)
    for mode, losses in history["losses"].items():
        ax.plot(range(start, start + len(losses)), losses, label=labels[mode])
        start += len(losses)
    ax.set(xlabel="step (one training run: eager steps, then compiled steps)",
           ylabel="cross-entropy loss", title="Training loss", yscale="log")
    ax.legend()
    _mark_switch(ax, history)
    return fig


def _grad_norm_figure(plt, history, groups):
    fig, axes = plt.subplots(1, len(groups), figsize=(4 * len(groups), 3.8), sharey=True)
    for ax, (title, names) in zip(axes, groups.items()):
        for name in names:
            norms = np.asarray(history["grad_norms"].get(name, ()))
            if len(norms):
                raw, = ax.plot(norms, lw=0.8, alpha=0.3)
                smooth = _moving_average(norms, 10)    # drawn at the last step it averages
                ax.plot(np.arange(len(norms) - len(smooth), len(norms)), smooth, label=name,
                        lw=1.8, color=raw.get_color())
        ax.set(xlabel="step", yscale="log", title=title)
        ax.legend(fontsize=9, loc="best")
        _mark_switch(ax, history)
    axes[0].set_ylabel("|grad_output| (full backward hook)")
    fig.suptitle("Gradient norm per module, by layer group (thick: mean of the last 10 steps;"
                 " faint: each step" + ("; dotted: eager -> compiled)"
                                        if len(history["losses"]) == 2 else ")"))
    return fig


def _moving_average(values, n):
    n = max(1, min(n, len(values)))
    return np.convolve(values, np.ones(n) / n, mode="valid")


def _grad_cam_figure(plt, image, cam, label, on_shape):
    fig, axes = plt.subplots(1, 2, figsize=(7, 3.6), gridspec_kw={"width_ratios": [1, 1.25]})
    axes[0].imshow(image, cmap="gray")
    axes[0].set_title(f"input: a {label}")
    axes[1].imshow(image, cmap="gray")
    heat = axes[1].imshow(cam, cmap="jet", alpha=0.5, vmin=0, vmax=1)
    axes[1].set_title(f"Grad-CAM at conv2\n{on_shape:.0%} of the heat on the shape")
    fig.colorbar(heat, ax=axes[1], label="Grad-CAM (normalised)")
    for ax in axes:
        ax.axis("off")
    return fig


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
