"""A per-module memory and FLOP tracker built on ``ModTracker``.

Ports the idea of PyTorch's ``torch.distributed._tools.mem_tracker.MemTracker`` and
``FlopCounterMode`` — both built on ``ModTracker`` — in a few lines, with only the import
changed: ``ModTracker.register_user_hooks`` gives a callback around each module's forward
and backward, where the tracker reads what the module holds and produces:

- parameter bytes (its own parameters),
- activation bytes (the outputs its forward produced),
- gradient bytes in backward (the ``grad_input`` it sent on, and its parameters' ``.grad``),
- forward FLOPs of ``Linear`` and ``Conv2d`` (2 per multiply-add), from the shapes.

Prints the table for a small CNN.

Run: python examples/memory_tracker.py [--batch N]
"""
import argparse
import math

import hookgrad as torch
import hookgrad.nn as nn
from hookgrad.utils.mod_tracker import ModTracker


def nbytes(tree):
    if isinstance(tree, torch.Tensor):
        return tree.numel() * tree.element_size()
    if isinstance(tree, (tuple, list)):
        return sum(nbytes(t) for t in tree)
    return 0


def flops(module, inputs, output):
    if isinstance(module, nn.Linear):
        rows = inputs[0].numel() // module.in_features
        return 2 * rows * module.in_features * module.out_features
    if isinstance(module, nn.Conv2d):
        per_out = module.in_channels // module.groups * math.prod(module.kernel_size)
        return 2 * output.numel() * per_out
    return 0


class MemoryTracker:
    """``with MemoryTracker() as mt: model(x).sum().backward()``; then ``mt.table(model)``."""

    def __init__(self):
        self.tracker = ModTracker()
        self.stats = {}

    def _row(self, module):
        name = self.tracker.get_known_fqn(module)
        return self.stats.setdefault(name, {
            "module": module, "params": sum(nbytes(p) for p in module.parameters(recurse=False)),
            "activations": 0, "grad_input": 0, "param_grads": 0, "flops": 0})

    def _post_fw(self, module, inputs, output):
        row = self._row(module)
        row["activations"] += nbytes(output)
        row["flops"] += flops(module, inputs, output)

    def _post_bw(self, module, grad_input):
        if module is not None:
            self._row(module)["grad_input"] += nbytes(grad_input)

    def __enter__(self):
        self.tracker.__enter__()
        self.tracker.register_user_hooks(post_fw_hook=self._post_fw, post_bw_hook=self._post_bw)
        return self

    def __exit__(self, *exc):
        self.tracker.clear_user_hooks()
        self.tracker.__exit__(*exc)
        for row in self.stats.values():   # the .grad each module's parameters now hold
            row["param_grads"] = sum(nbytes(p.grad) for p in row["module"].parameters(recurse=False)
                                     if p.grad is not None)

    def table(self):
        cols = ("params", "activations", "grad_input", "param_grads", "flops")
        lines = [f"{'module':22s}" + "".join(f"{c:>13s}" for c in cols)]
        for name, row in self.stats.items():
            lines.append(f"{name:22s}" + "".join(f"{row[c]:13,d}" for c in cols))
        return "\n".join(lines)


def main(batch=32, verbose=True):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(8 * 8 * 8, 10))
    x = torch.randn(batch, 3, 16, 16, requires_grad=True)
    with MemoryTracker() as mt:
        model(x).logsumexp(dim=1).mean().backward()
    if verbose:
        print(f"per module, bytes (batch {batch}, float32); FLOPs of the forward")
        print(mt.table())
        acts = sum(r["activations"] for n, r in mt.stats.items() if "." in n)
        print(f"activations kept by the layers: {acts:,} bytes; parameters "
              f"{sum(nbytes(p) for p in model.parameters()):,} bytes")
    return mt.stats


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=32)
    main(p.parse_args().batch)
