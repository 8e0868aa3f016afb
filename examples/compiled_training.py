"""A hook-laden training step compiled end to end with ``hookgrad.compile``.

The same PyTorch-style step runs eagerly and compiled; forward hooks, a full backward
hook clipping grad_input and a tensor hook are traced into one XLA program with the
backward pass and the AdamW update.

Run: python examples/compiled_training.py
"""
import hookgrad as torch
import hookgrad.nn as nn


def main(steps=20, verbose=True):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    # clip the gradient flowing out of the last layer into the hidden activations
    model[2].register_full_backward_hook(
        lambda m, gin, gout: tuple(None if g is None else g.clamp(-1, 1) for g in gin))
    model[0].register_forward_hook(lambda m, i, o: o * 1.0)
    x = torch.randn(64, 8)
    y = x.sum(dim=1, keepdim=True).sin()

    @torch.compile
    def step(x, y):
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    losses = [step(x, y).item() for _ in range(steps)]
    if verbose:
        print(f"compiled loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    return losses


if __name__ == "__main__":
    main()
