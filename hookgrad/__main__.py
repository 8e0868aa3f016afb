"""``python -m hookgrad``: a tour of PyTorch's hooks on hookgrad, eager then compiled.

A small CNN learns to tell four shapes apart on pictures drawn with NumPy (nothing is
downloaded), carrying the hooks of a typical PyTorch script. It trains eagerly, then the
same step runs compiled by ``hookgrad.compile``; the tour prints a table per module and
the speed-up, and ``--plot DIR`` draws the loss, the gradient norms and a Grad-CAM.
"""
import argparse
import importlib.util

_EPILOG = """examples:
  python -m hookgrad                     eager then compiled: 22 s, 33 s the first time
  python -m hookgrad --quick             40 steps per mode: 8 s, 18 s the first time
  python -m hookgrad --plot plots        also write plots/loss.png, grad_norms.png, grad_cam.png
                                         (needs matplotlib: pip install 'hookgrad[plot]')

times measured with `time` on 2 busy CPU cores (jax 0.10.2); "the first time": XLA's
compilation cache (~/.cache/hookgrad/xla) empty
"""


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m hookgrad", epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="A tour of hookgrad: a small CNN with PyTorch's classic hooks "
                    "(gradient-norm logger, gradient clipping, activation statistics, "
                    "ModTracker timings) trained eagerly, then compiled by hookgrad.compile.")
    p.add_argument("--steps", type=int, default=None, metavar="N",
                   help="training steps per mode (default 300, or 40 with --quick)")
    p.add_argument("--mode", choices=("eager", "compiled", "both"), default="both",
                   help="run the step eagerly, compiled, or eagerly then compiled (default)")
    p.add_argument("--plot", metavar="DIR", default=None,
                   help="write PNGs (loss curve, per-layer gradient norms, Grad-CAM) to DIR; "
                        "needs matplotlib")
    p.add_argument("--quick", action="store_true",
                   help="a small dataset and 40 steps per mode (what the tests run)")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"),
                   help="where to train: cuda when a GPU is present and 'auto' (default)")
    p.add_argument("--seed", type=int, default=0, help="seed of the data and the model")
    args = p.parse_args(argv)
    if args.steps is None:
        args.steps = 40 if args.quick else 300
    if args.steps < 2:
        p.error(f"--steps must be at least 2, got {args.steps}")
    if args.plot is not None and importlib.util.find_spec("matplotlib") is None:
        # before training, not after it: the plots are what was asked for
        p.error(f"--plot {args.plot} needs matplotlib, which is not installed; install it with "
                "pip install 'hookgrad[plot]' (or pip install matplotlib), or drop --plot")
    return args, p


def main(argv=None):
    args, parser = parse_args(argv)
    from hookgrad._tour import DeviceError, tour
    try:
        return tour(args)
    except DeviceError as e:
        parser.error(str(e))


if __name__ == "__main__":
    main()
