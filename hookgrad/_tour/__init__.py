"""The tour behind ``python -m hookgrad`` (``hookgrad/__main__.py`` parses the options)."""
import os
import sys
import warnings

import jax

import hookgrad as torch
from hookgrad.utils.data import DataLoader, TensorDataset

from . import report
from .data import CLASSES, make_shapes
from .model import Instruments, ModuleTimer, ShapesCNN, quiet_first_layer_warning
from .train import accuracy, make_step, run_phase, steady_ms

__all__ = ["tour", "DeviceError"]


class DeviceError(ValueError):
    """The device asked for is not there."""


def _device(name):
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise DeviceError("--device cuda: JAX sees no GPU here (jax.devices() is "
                          f"{jax.devices()}); use --device cpu, or install jax[cuda12]")
    return torch.device(name)


def _header(device):
    jd = jax.devices("gpu" if device.type == "cuda" else "cpu")[0]
    where = f"{jd.device_kind}" if device.type == "cuda" else f"{os.cpu_count()} CPU cores"
    return (f"hookgrad {torch.__version__} · JAX {jax.__version__} "
            f"(jaxlib {jax.lib.__version__}) · device {device.type} ({jd}, {where})")


def _leading_s(times, ms):
    """Seconds of the first calls that ran well over the steady step time: the one-time
    compilations."""
    total = 0.0
    for t in times:
        if t < 5e-3 * ms:
            break
        total += t
    return total


def _phase(name, step, loader, args, device, timer, timed):
    losses, times = run_phase(step, loader, args.steps, device, name, timer, timed)
    ms = steady_ms(times, min(3, len(times) - 1), timed)
    return losses, ms, _leading_s(times, ms[0])


def tour(args):
    """Run the tour for the parsed ``args``; returns what it measured (for the tests)."""
    device = _device(args.device)
    print(_header(device), flush=True)
    with warnings.catch_warnings():
        quiet_first_layer_warning()
        model, inst, step, loader, test = _setup(args, device)
        out = {"losses": {}, "ms": {}, "first_s": {}, "accuracy": {}}
        timer = _train(args, device, model, inst, step, loader, test, out)
        print("\nper module (last 20 steps; times from ModTracker in eager mode):")
        print(report.module_table(model, inst.summary(), timer))
        if len(out["ms"]) == 2:
            _print_speedup(out)
        cam_example = _grad_cam(model, inst, *test, out)
    _plots(args, out, inst, cam_example)
    _where_next()
    return out


def _setup(args, device):
    n_train, n_test = (640, 192) if args.quick else (3000, 512)
    x, y, masks = make_shapes(n_train + n_test, seed=args.seed)
    print(f"data: {n_train} training + {n_test} test pictures of shapes "
          f"({', '.join(CLASSES)}), 1x16x16, drawn with NumPy")
    torch.manual_seed(args.seed)
    model = ShapesCNN().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    inst = Instruments(model, clip=1.0)
    loader = DataLoader(TensorDataset(torch.from_numpy(x[:n_train]), torch.from_numpy(y[:n_train])),
                        batch_size=64, shuffle=True, drop_last=True)
    test = (torch.from_numpy(x[n_train:]).to(device), torch.from_numpy(y[n_train:]).to(device),
            masks[n_train:])
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {type(model).__name__}, {n_params:,} parameters, Adam, batches of 64 from "
          "hookgrad.utils.data.DataLoader\nhooks: a gradient-norm logger on every module "
          "(register_full_backward_hook), activation\n       statistics of every ReLU "
          "(register_forward_hook), gradient clipping to +-1 on every parameter\n       "
          "(Tensor.register_hook), ModTracker timing each module's forward and backward")
    return model, inst, make_step(model, opt), loader, test


def _train(args, device, model, inst, step, loader, test, out):
    """The eager and/or compiled phases; returns the module timer (None without eager)."""
    timer = None
    if args.mode in ("eager", "both"):
        timed = min(20, args.steps // 4)
        print("\neager: the first steps are slower, once: each op's first calls on new shapes "
              "run in NumPy while XLA compiles it\n       in the background "
              "(HOOKGRAD_TIERED=0: compiled at first sight); later steps reuse those kernels.",
              flush=True)
        timer = ModuleTimer(model)
        _record(out, "eager", _phase("eager", step, loader, args, device, timer, timed),
                accuracy(model, inst, *test[:2]))
        _print_phase(out, "eager", f"{timed} steps timed per module with ModTracker")
    if args.mode in ("compiled", "both"):
        print("\ncompiled: hookgrad.compile traces the same step once (forward, backward, the "
              "hooks above, Adam) into one\n          XLA program; the first call pays for "
              "tracing and compiling it, later calls run it."
              + ("\n          It continues training the model eager left (not a fresh start), "
                 "so its loss\n          and accuracy are not a comparison of the two modes."
                 if args.mode == "both" else ""), flush=True)
        _record(out, "compiled", _phase("compiled", torch.compile(step), loader, args, device,
                                        None, 0), accuracy(model, inst, *test[:2]))
        _print_phase(out, "compiled", "the hooks ran inside the program; their statistics "
                     "came back to the host")
    return timer


def _print_speedup(out):
    (eager, eager_best), (comp, comp_best) = out["ms"]["eager"], out["ms"]["compiled"]
    out["speedup"] = eager / comp
    print(f"\nspeed-up of hookgrad.compile over eager, same step and hooks: "
          f"{out['speedup']:.1f}x per step (median {eager:.1f} -> {comp:.1f} ms; "
          f"best step {eager_best:.1f} -> {comp_best:.1f} ms, {eager_best / comp_best:.1f}x)")


def _record(out, mode, phase, acc):
    out["losses"][mode], out["ms"][mode], out["first_s"][mode] = phase
    out["accuracy"][mode] = acc


def _print_phase(out, mode, note):
    losses = out["losses"][mode]
    print(f"{mode}: {len(losses)} steps, loss {losses[0]:.3f} -> {losses[-1]:.3f}, test accuracy "
          f"{out['accuracy'][mode]:.1%}; first calls {out['first_s'][mode]:.1f} s (one-time "
          f"compilation), then {out['ms'][mode][0]:.1f} ms/step\n{' ' * (len(mode) + 2)}({note})")


def _grad_cam(model, inst, x_test, y_test, masks, out):
    n = 64   # the training batch size: no new compilations
    inst.recording = False
    try:
        logits, cams = report.grad_cam(model, model.conv2, x_test[:n], y_test[:n])
    finally:
        inst.recording = True
    labels = report.to_numpy(y_test[:n])
    on_shape = report.heat_on_shape(cams, masks[:n])
    out["cam_on_shape"] = float(on_shape.mean())
    out["shape_area"] = float(masks[:n].mean())
    right = (logits.argmax(axis=1) == labels).nonzero()[0]
    i = int(right[0]) if len(right) else 0
    label = CLASSES[labels[i]]
    print(f"\nGrad-CAM at conv2 (a forward hook keeps its output, a full backward hook its "
          f"gradient), on {n} test pictures:\n  on average {out['cam_on_shape']:.0%} of a "
          f"picture's heat lies on its shape, which covers {out['shape_area']:.0%} of the "
          f"picture\n  (the plotted {label}: {on_shape[i]:.0%} of its heat on the shape)")
    return report.to_numpy(x_test[:n])[i, 0], cams[i], label, float(on_shape[i])


def _plots(args, out, inst, cam_example):
    if args.plot is None:
        print("\nplots: pass --plot DIR to draw the loss, the gradient norms and the Grad-CAM")
        return
    history = {"losses": out["losses"], "grad_norms": inst.grad_norm_history()}
    out["plots"] = report.write_plots(args.plot, history, cam_example, ShapesCNN.GROUPS)
    print("\nplots: " + ", ".join(out["plots"]))


def _where_next():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    examples = os.path.join(root, "examples")
    where = examples if os.path.isdir(examples) else "examples/ in hookgrad's repository"
    print(f"\nnext: the examples ({where}: Grad-CAM, activation patching, DP-SGD, ...), "
          "the notebooks (notebooks/),\n      and the docs (README.md, docs/porting.md, "
          "docs/modes.md) show each hook idiom ported from PyTorch.")
    sys.stdout.flush()
