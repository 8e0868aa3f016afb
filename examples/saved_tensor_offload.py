"""Saved-tensor hooks: see what autograd keeps for backward, and offload it.

- a pack/unpack pair counts and measures the saved tensors of a model;
- ``save_on_cpu`` moves them to host memory (on an accelerator this lowers the device
  memory held between forward and backward; on CPU it is a no-op with the same gradients).

Run: python examples/saved_tensor_offload.py
"""
import hookgrad as torch
import hookgrad.nn as nn


def main(verbose=True):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 1))
    x = torch.randn(16, 32)
    stats = {"count": 0, "bytes": 0}

    def pack(t):
        stats["count"] += 1
        stats["bytes"] += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = model(x).pow(2).mean()
    loss.backward()
    plain = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    with torch.autograd.graph.save_on_cpu(pin_memory=True):
        loss = model(x).pow(2).mean()
    loss.backward()
    same = all(bool((a == p.grad).all()) for a, p in zip(plain, model.parameters()))
    if verbose:
        print(f"{stats['count']} tensors saved for backward, {stats['bytes']} bytes")
        print("save_on_cpu gives the same gradients:", same)
    return stats, same


if __name__ == "__main__":
    main()
