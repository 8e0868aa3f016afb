"""A plain PyTorch training script: docs/features.md's "Porting a script" runs it on hookgrad by
changing only its import. test_clients.py runs it under both libraries.

A DataLoader over a TensorDataset, a per-layer gradient-norm logger (full backward hooks),
an activation-statistics forward hook, a gradient-clipping tensor hook, ``torch.compile``
of the model, an LR scheduler, a checkpoint saved and loaded, and the usual CUDA fallback.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(4 * 4 * 4, 16)
        self.fc2 = nn.Linear(16, 2)

    def forward(self, x):
        x = self.pool(F.relu(self.conv(x)))
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


def make_data(n=64, seed=0):
    """Images with a bright square in the left or the right half: the label says which."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 0.3, (n, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 2, n)
    for i in range(n):
        c = 1 if y[i] == 0 else 5
        x[i, 0, 3:5, c:c + 2] += 2.0
    return torch.tensor(x), torch.tensor(y)


def main(epochs=3, shuffle=True, checkpoint="checkpoint.pt", compile_model=True):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    x, y = make_data()
    loader = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=shuffle, drop_last=True)

    model = Net().to(device)
    rng = np.random.default_rng(1)  # weights from NumPy, so both libraries start equal
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.normal(0, 0.3, tuple(p.shape)).astype(np.float32)))

    grad_norms = {name: [] for name in ("conv", "fc1", "fc2")}
    for name in grad_norms:
        def log(module, grad_input, grad_output, name=name):
            grad_norms[name].append(grad_output[0].norm().item())
        getattr(model, name).register_full_backward_hook(log)
    dead = []
    model.fc1.register_forward_hook(lambda m, i, out: dead.append((out <= 0).float().mean().item()))
    for p in model.parameters():
        p.register_hook(lambda g: g.clamp(-1.0, 1.0))

    if compile_model:
        model = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

    losses = []
    for _ in range(epochs):
        model.train()
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        sched.step()

    torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, checkpoint)
    state = torch.load(checkpoint)
    fresh = Net()
    keys = list(state["model"])
    prefix = "_orig_mod." if compile_model else ""
    fresh.load_state_dict({k[len(prefix):]: v for k, v in state["model"].items()})
    model.eval()
    with torch.no_grad():
        same = torch.allclose(fresh(x[:8]), model(x[:8]))
        accuracy = (model(x).argmax(1) == y).float().mean().item()
    return {"losses": losses, "steps": len(losses), "batches": len(loader),
            "grad_norm_calls": {k: len(v) for k, v in grad_norms.items()},
            "grad_norms": grad_norms, "dead_fraction": dead[:4], "keys": keys,
            "lr": sched.get_last_lr(), "reloaded_same": same, "accuracy": accuracy}


def _run(compile_model):
    import os
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        return main(shuffle=False, checkpoint=os.path.join(d, "checkpoint.pt"),
                    compile_model=compile_model)


def unshuffled():
    """The script without shuffling (the two libraries' shuffles draw differently)."""
    return _run(True)


def unshuffled_eager():
    """The same without ``torch.compile``: PyTorch's Inductor needs a C++ toolchain and a
    minute; hookgrad's compiled model must give what an eager run gives."""
    return _run(False)


def shuffled():
    import os
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        return main(checkpoint=os.path.join(d, "checkpoint.pt"))
