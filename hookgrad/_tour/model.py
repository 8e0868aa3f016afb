"""The tour's model and the classic PyTorch hooks it carries.

Everything here is written as PyTorch code would be (``import hookgrad as torch``); the
hooks that read values on the host are marked ``@torch.compile.host_hook`` so the very
same hooks keep working when the step is compiled.
"""
import time
import warnings

import jax

import hookgrad as torch
import hookgrad.nn as nn
from hookgrad.utils.mod_tracker import ModTracker


class ShapesCNN(nn.Module):
    """Two conv blocks and a two-layer head: 16x16 grey pictures to 4 shape classes."""

    # the layer groups the tour's gradient-norm plot draws one panel each for; pool and
    # flatten are left out: their |grad_output| is the ReLU's before them, a hidden line
    GROUPS = {"conv block 1": ("conv1", "relu1"), "conv block 2": ("conv2", "relu2"),
              "head": ("fc1", "relu3", "fc2")}

    def __init__(self, classes=4, size=16):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.relu1 = nn.ReLU()
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.relu2 = nn.ReLU()
        self.pool2 = nn.MaxPool2d(2)
        self.flatten = nn.Flatten()
        self.fc1 = nn.Linear(16 * (size // 4) ** 2, 32)
        self.relu3 = nn.ReLU()
        self.fc2 = nn.Linear(32, classes)

    def forward(self, x):
        for m in self.children():
            x = m(x)
        return x


class Instruments:
    """The classic hooks of a PyTorch training script, on every child of ``model``:

    - a gradient-norm logger, ``register_full_backward_hook`` (``|grad_output|``);
    - activation statistics of the ReLUs, ``register_forward_hook`` (mean, fraction of
      dead units);
    - gradient clipping, ``Tensor.register_hook`` on every parameter (clamp to ``+-clip``).

    The statistics are computed on Tensors (so they trace into a compiled step) and handed
    to one host hook, which keeps them per module as a list with one entry per step.
    """

    def __init__(self, model, clip=1.0):
        self.grad_norms = {name: [] for name, _ in model.named_children()}
        self.act_stats = {name: [] for name, _ in model.named_children()}
        self.handles = []
        self.recording = True
        record = torch.compile.host_hook(self._record)
        for name, m in model.named_children():
            if isinstance(m, nn.ReLU):
                self.handles.append(m.register_forward_hook(
                    lambda m, inp, out, name=name: record("act_stats", name, _act_stats(out))))
            self.handles.append(m.register_full_backward_hook(
                lambda m, gin, gout, name=name: record("grad_norms", name, gout[0].norm())))
        for p in model.parameters():
            self.handles.append(p.register_hook(lambda g: g.clamp(-clip, clip)))

    def _record(self, table, name, value):
        # NOTE: a host hook's list and dict arguments are rebuilt from their leaves, so the
        # lists to append to are found by name, not passed
        if self.recording:
            getattr(self, table)[name].append(value)   # concrete: read later, no sync now

    def summary(self, last=20):
        """Per module: mean |grad_output|, activation mean and dead fraction over the
        ``last`` steps recorded."""
        out = {}
        for name in self.grad_norms:
            g = [float(v) for v in self.grad_norms[name][-last:]]
            a = [[float(s) for s in v.tolist()] for v in self.act_stats[name][-last:]]
            out[name] = {"grad": sum(g) / len(g) if g else float("nan"),
                         "act_mean": sum(s[0] for s in a) / len(a) if a else float("nan"),
                         "dead": sum(s[1] for s in a) / len(a) if a else float("nan")}
        return out

    def grad_norm_history(self):
        return {name: [float(v) for v in vs] for name, vs in self.grad_norms.items()}


@torch.no_grad()
def _act_stats(out):
    # a unit (a channel, or a feature) is dead when it is <= 0 for the whole batch
    dims = [d for d in range(out.dim()) if d != 1]
    dead = (out.amax(dim=dims) <= 0).float().mean()
    return torch.stack([out.mean(), dead])


def _sync(tree):
    """Wait for the arrays behind the Tensors in ``tree``: eager ops are dispatched
    asynchronously, so a wall-clock time means something only after they are done."""
    leaves = [t for t in jax.tree_util.tree_leaves(tree, is_leaf=lambda t: isinstance(
        t, torch.Tensor)) if isinstance(t, torch.Tensor)]
    jax.block_until_ready([t.detach()._data for t in leaves])


class ModuleTimer:
    """Forward and backward wall-clock time per module, from ``ModTracker``'s user hooks.

    ``with ModuleTimer(model) as timer:`` wraps the steps to time; every module boundary
    waits for its inputs and outputs, so the numbers are each module's own time (and the
    timed steps run a little slower than untimed ones).
    """

    def __init__(self, model):
        self.model = model
        self.fw, self.bw = {}, {}
        self._start = {}
        self._tracker = ModTracker()

    def _begin(self, key, mod, args):
        _sync(args)
        self._start[key, id(mod)] = time.perf_counter()

    def _end(self, key, table, mod, args):
        if mod is None or (key, id(mod)) not in self._start:
            return
        _sync(args)
        name = self._tracker.get_known_fqn(mod).split(".", 1)[-1]
        table.setdefault(name, []).append(time.perf_counter() - self._start.pop((key, id(mod))))

    def __enter__(self):
        self._tracker.__enter__()
        self._tracker.register_user_hooks(
            pre_fw_hook=lambda m, i: self._begin("fw", m, i),
            post_fw_hook=lambda m, i, o: self._end("fw", self.fw, m, o),
            pre_bw_hook=lambda m, g: self._begin("bw", m, g),
            post_bw_hook=lambda m, g: self._end("bw", self.bw, m, g))
        return self

    def __exit__(self, *exc):
        self._tracker.clear_user_hooks()
        self._tracker.__exit__(*exc)

    def mean_ms(self, name):
        """(forward ms, backward ms) per call of child ``name``, NaN when not timed."""
        def mean(v):
            return 1e3 * sum(v) / len(v) if v else float("nan")
        return mean(self.fw.get(name, [])), mean(self.bw.get(name, []))


def quiet_first_layer_warning():
    # NOTE: the first conv's input (the picture) does not require grad, so its full
    # backward hook sees grad_input None and PyTorch's (and hookgrad's) UserWarning says
    # so; the logger reads only grad_output, so the warning is noise here.
    warnings.filterwarnings("ignore", message="Full backward hook is firing when gradients")
