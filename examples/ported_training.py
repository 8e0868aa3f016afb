"""A whole PyTorch training script, ported to hookgrad by changing its imports.

The script is what a PyTorch user writes: a ``DataLoader`` with workers, a gradient-norm
hook, ``clip_grad_norm_``, ``StepLR``, a checkpoint saved and loaded back, evaluation
under ``no_grad`` and a ``tqdm`` progress bar. Its first lines are the port (``import
torch`` became ``import hookgrad as torch``, and so on); ``--compile`` runs the same
training step through ``torch.compile`` (``hookgrad.compile``), the one line that
changes. docs/porting.md walks through it line by line; tests/test_examples.py runs it
and, with PyTorch installed, runs the unported script under PyTorch beside it.

The checkpoint goes into ``--out DIR``, by default a folder under the system's
temporary directory that the script names when it starts.

Run: python examples/ported_training.py [--epochs N] [--compile] [--out DIR]
"""
import argparse
import os
import tempfile

import hookgrad as torch
import hookgrad.nn as nn
import hookgrad.nn.functional as F
from hookgrad.utils.data import DataLoader, TensorDataset
from tqdm import tqdm


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 64)
        self.fc2 = nn.Linear(64, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def make_data(n, generator):
    x = torch.randn(n, 20, generator=generator)
    w = torch.randn(20, 4, generator=generator)
    y = (x @ w).argmax(dim=1)           # a rule the model can learn
    return TensorDataset(x[:-512], y[:-512]), TensorDataset(x[-512:], y[-512:])


def train_step(model, opt, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()
    opt.zero_grad()
    return loss


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    correct = sum((model(x).argmax(dim=1) == y).sum().item() for x, y in loader)
    model.train()
    return correct / len(loader.dataset)


def main(epochs=3, compile=False, out=None, verbose=True):
    out = out or os.path.join(tempfile.gettempdir(), "hookgrad-examples", "ported_training")
    os.makedirs(out, exist_ok=True)
    if verbose:
        print(f"writing the checkpoint to {out} (--out DIR to choose)")
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    train_set, test_set = make_data(2560, g)
    train = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=2, drop_last=True)
    test = DataLoader(test_set, batch_size=256)
    model = Net()
    grad_norms = []   # a gradient-norm logger: a full backward hook reading a value
    model.fc2.register_full_backward_hook(
        lambda m, gin, gout: grad_norms.append(gout[0].norm().item()))
    opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    step = torch.compile(train_step) if compile else train_step
    losses = []
    for epoch in range(epochs):
        for x, y in tqdm(train, desc=f"epoch {epoch}", disable=not verbose):
            losses.append(step(model, opt, x, y).item())
        scheduler.step()
    path = os.path.join(out, "model.pt")
    torch.save(model.state_dict(), path)
    restored = Net()
    restored.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    acc = evaluate(restored, test)
    if verbose:
        print(f"loss {losses[0]:.3f} -> {losses[-1]:.3f}, {len(grad_norms)} gradient norms "
              f"logged, lr now {scheduler.get_last_lr()[0]:.3f}, test accuracy {acc:.1%} "
              f"(from {path})")
    return {"losses": losses, "grad_norms": grad_norms, "accuracy": acc,
            "lr": scheduler.get_last_lr()[0], "checkpoint": path}


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--compile", action="store_true", help="compile the training step")
    p.add_argument("--out", metavar="DIR", default=None,
                   help="folder for model.pt (default: one under the temporary directory)")
    a = p.parse_args()
    main(a.epochs, a.compile, a.out)
