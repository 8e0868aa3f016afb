"""Saved-tensor hooks: see what autograd keeps for backward, and move it off the device.

Ports PyTorch's saved-tensor hooks tutorial ("Hooks for saved tensors") with only the
import changed:

- a pack/unpack pair that keeps the saved tensors as they are, counting their bytes;
- a pack/unpack pair that offloads them to host memory (NumPy) in the forward and brings
  them back in the backward: between forward and backward the device holds none of them;
- ``torch.autograd.graph.save_on_cpu``, PyTorch's ready-made offload (on an accelerator it
  frees device memory; on a CPU-only machine the tensors already live on the host);
- ``torch.utils.checkpoint``, which saves the block's input only and recomputes the rest.

Prints a table: per strategy, the tensors saved, the bytes left on the device and on the
host between forward and backward, and whether the gradients equal the plain run's.

Run: python examples/saved_tensor_offload.py
"""
import numpy as np

import hookgrad as torch
import hookgrad.nn as nn
from hookgrad.utils.checkpoint import checkpoint


def nbytes(t):
    return t.numel() * t.element_size()


def run(model, x, strategy):
    """Forward and backward under ``strategy``; returns (count, device bytes, host bytes
    held between forward and backward, gradients)."""
    held = {"count": 0, "device": 0, "host": 0}

    def keep(t):
        held["count"] += 1
        held["device"] += nbytes(t)
        return t

    def offload(t):
        held["count"] += 1
        host = np.asarray(t.detach().cpu().numpy())   # a host copy; the device array can go
        held["host"] += host.nbytes
        return host, t.dtype

    def reload(packed):
        host, dtype = packed
        return torch.from_numpy(host).to(dtype)

    model.zero_grad()
    if strategy == "plain":
        with torch.autograd.graph.saved_tensors_hooks(keep, lambda t: t):
            loss = model(x).pow(2).mean()
    elif strategy == "offload hooks":
        with torch.autograd.graph.saved_tensors_hooks(offload, reload):
            loss = model(x).pow(2).mean()
    elif strategy == "save_on_cpu":
        # NOTE: hooks nested inside would replace save_on_cpu's own pair (the innermost
        # pair packs), so nothing counts here: main() fills in what it packs, every tensor
        with torch.autograd.graph.save_on_cpu(pin_memory=True):
            loss = model(x).pow(2).mean()
    else:   # checkpoint: only the block's input is saved; the block reruns in backward
        with torch.autograd.graph.saved_tensors_hooks(keep, lambda t: t):
            loss = checkpoint(model, x, use_reentrant=False).pow(2).mean()
    loss.backward()
    return held, [p.grad.clone() for p in model.parameters()]


def main(verbose=True, width=256, batch=64):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.Linear(width, width),
                          nn.GELU(), nn.Linear(width, 1))
    x = torch.randn(batch, width)
    rows = {}
    _, plain_grads = run(model, x, "plain")
    for strategy in ("plain", "offload hooks", "save_on_cpu", "checkpoint"):
        held, grads = run(model, x, strategy)
        same = all(bool(torch.allclose(a, b, atol=1e-6)) for a, b in zip(plain_grads, grads))
        rows[strategy] = dict(held, same=same)
    plain = rows["plain"]
    rows["save_on_cpu"].update(count=plain["count"], host=plain["device"])
    if verbose:
        print(f"{'strategy':14s} {'saved':>6s} {'device bytes':>13s} {'host bytes':>11s} "
              f"{'same grads':>10s}")
        for name, r in rows.items():
            print(f"{name:14s} {r['count']:6d} {r['device']:13,d} {r['host']:11,d} "
                  f"{str(r['same']):>10s}")
        saved = rows["plain"]["device"] - rows["offload hooks"]["device"]
        print(f"offloading frees {saved:,} bytes of device memory between forward and "
              f"backward ({saved / rows['plain']['device']:.0%}); checkpointing keeps "
              f"{rows['checkpoint']['device']:,} bytes and recomputes the rest")
    return rows


if __name__ == "__main__":
    main()
