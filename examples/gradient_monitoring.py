"""Gradient monitoring and clipping with hooks, written as PyTorch code.

- a tensor hook on every parameter records its gradient norm;
- a node pre-hook clips the gradient flowing into the loss's last op;
- post-accumulate-grad hooks run an SGD step per parameter as soon as its gradient is
  ready (optimizer-in-backward).

Run: python examples/gradient_monitoring.py
"""
import hookgrad as torch
import hookgrad.nn as nn


def main(steps=30, verbose=True):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
    x = torch.randn(64, 4)
    y = (x[:, :1] * 2 - x[:, 1:2]).tanh()
    norms = {name: [] for name, _ in model.named_parameters()}
    for name, p in model.named_parameters():
        p.register_hook(lambda g, name=name: norms[name].append(g.norm().item()))

    lr = 0.2

    def sgd_in_backward(p):
        with torch.no_grad():
            p.sub_(lr * p.grad)
        p.grad = None

    for p in model.parameters():
        p.register_post_accumulate_grad_hook(sgd_in_backward)

    losses = []
    for _ in range(steps):
        loss = ((model(x) - y) ** 2).mean()
        loss.grad_fn.register_prehook(lambda go: (go[0].clamp(-1.0, 1.0),))
        loss.backward()
        losses.append(loss.item())
    if verbose:
        print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")
        for name, ns in norms.items():
            print(f"  {name:10s} grad norm first {ns[0]:.4f} last {ns[-1]:.4f}")
    return losses, norms


if __name__ == "__main__":
    main()
