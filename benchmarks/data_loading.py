"""DataLoader throughput: hookgrad's vs PyTorch's, alone and feeding a training step.

A TensorDataset of 50,000 CIFAR-sized samples (3x32x32 float32) and int labels, batch 256,
``shuffle=True``, ``drop_last=True``. Figures, in samples/s:

  loader         one epoch of the DataLoader alone (the last batch ``block_until_ready``)
  step           the training step alone, on one fixed batch
  loader+step    the DataLoader feeding the step, for the first batches of an epoch
                 (as many as the step-alone run takes)

The step is a small CNN (Conv2d(3,8,3)-ReLU-MaxPool2d(2)-Flatten-Linear(1800,10), cross
entropy, SGD): hookgrad's under ``hookgrad.compile``, PyTorch's eagerly, both on the CPU
(or hookgrad's on JAX's default device). hookgrad's loader gathers each batch on the host
with one NumPy fancy-indexing call per field and puts it on the device once; PyTorch's
indexes and stacks sample by sample. Best of several rounds, hookgrad and PyTorch
interleaved.

    python benchmarks/data_loading.py [--quick]

The loader alone must deliver at least 5x what the step consumes (``loader_vs_step``); the
last line is ``dataloader_vs_torch: X``, hookgrad's loader-alone throughput over
PyTorch's (target >= 1.0).
"""
import argparse
import itertools
import time

import jax
import numpy as np

import hookgrad as hg
from hookgrad.utils.data import DataLoader, TensorDataset

try:
    import torch
    import torch.utils.data as tud
except ImportError:  # the PyTorch columns are left out
    torch = None

BATCH = 256
LR = 0.05


def make_data(n):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 3, 32, 32), dtype=np.float32)
    y = rng.integers(0, 10, n).astype(np.int64)
    return x, y


def train_step(L):
    """One SGD step of a small CNN, written once for ``L`` = hookgrad or torch."""
    L.manual_seed(0)
    model = L.nn.Sequential(L.nn.Conv2d(3, 8, 3), L.nn.ReLU(), L.nn.MaxPool2d(2),
                            L.nn.Flatten(), L.nn.Linear(8 * 15 * 15, 10))
    opt = L.optim.SGD(model.parameters(), lr=LR)

    def step(xb, yb):
        loss = L.nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    return step


def hookgrad_setup(x, y):
    loader = DataLoader(TensorDataset(hg.tensor(x), hg.tensor(y)), batch_size=BATCH,
                        shuffle=True, drop_last=True)
    return loader, hg.compile(train_step(hg)), lambda out: out._data.block_until_ready()


def torch_setup(x, y):
    loader = tud.DataLoader(tud.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)),
                            batch_size=BATCH, shuffle=True, drop_last=True)
    return loader, train_step(torch), lambda out: out


def loader_alone(loader, block):
    t0 = time.perf_counter()
    n, last = 0, None
    for xb, yb in loader:
        n += len(yb)
        last = xb
    block(last)
    return n / (time.perf_counter() - t0)


def step_alone(loader, step, block, steps):
    xb, yb = next(iter(loader))
    block(step(xb, yb))  # compiled (hookgrad) / warmed (PyTorch) outside the timing
    t0 = time.perf_counter()
    for _ in range(steps):
        out = step(xb, yb)
    block(out)
    return steps * len(yb) / (time.perf_counter() - t0)


def loader_and_step(loader, step, block, steps):
    t0 = time.perf_counter()
    n, out = 0, None
    for xb, yb in itertools.islice(loader, steps):
        out = step(xb, yb)
        n += len(yb)
    block(out)
    return n / (time.perf_counter() - t0)


def measure(n, rounds, steps):
    x, y = make_data(n)
    libs = {"hookgrad": hookgrad_setup(x, y)}
    if torch is not None:
        libs["torch"] = torch_setup(x, y)
    best = {name: {"loader": 0.0, "step": 0.0, "loader+step": 0.0} for name in libs}
    for name, (loader, step, block) in libs.items():  # first epoch: compile, page in
        loader_alone(loader, block)
        best[name]["step"] = step_alone(loader, step, block, 1)
    for _ in range(rounds):
        for name, (loader, step, block) in libs.items():
            b = best[name]
            b["loader"] = max(b["loader"], loader_alone(loader, block))
            b["step"] = max(b["step"], step_alone(loader, step, block, steps))
            b["loader+step"] = max(b["loader+step"], loader_and_step(loader, step, block, steps))
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="5,000 samples, fewer rounds")
    args = parser.parse_args()
    n, rounds, steps = (5_000, 2, 5) if args.quick else (50_000, 3, 30)
    print(f"jax {jax.__version__} on {jax.default_backend()}, "
          f"torch {torch.__version__ if torch is not None else 'not installed'}; "
          f"{n} samples of 3x32x32 float32, batch {BATCH}, shuffle, best of {rounds} rounds")
    best = measure(n, rounds, steps)
    print(f"\n{'samples/s':12s} {'loader':>12s} {'step':>12s} {'loader+step':>12s}"
          f" {'loader_vs_step':>15s}")
    for name, b in best.items():
        print(f"{name:12s} {b['loader']:12,.0f} {b['step']:12,.0f} {b['loader+step']:12,.0f}"
              f" {b['loader'] / b['step']:15.1f}")
    hb = best["hookgrad"]
    print(f"\nhookgrad loader_vs_step: {hb['loader'] / hb['step']:.1f} (target >= 5)")
    if "torch" in best:
        print(f"hookgrad loader+step vs torch loader+step: "
              f"{hb['loader+step'] / best['torch']['loader+step']:.2f}")
        print(f"dataloader_vs_torch: {hb['loader'] / best['torch']['loader']:.2f}")
    else:
        print("dataloader_vs_torch: n/a (torch not installed)")


if __name__ == "__main__":
    main()
