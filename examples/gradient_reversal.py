"""A gradient-reversal layer (``autograd.Function``) for domain adaptation (DANN).

Ports the PyTorch gradient-reversal layer of Ganin & Lempitsky's domain-adversarial
training (the ``GradReverse(torch.autograd.Function)`` found in most DANN code: identity
forward, ``-lambda * grad`` backward) with only the import changed.

Synthetic data: two classes in 2-D, a labelled *source* domain and an unlabelled *target*
domain, which is the source shifted. A feature extractor feeds a label classifier and,
through the reversal layer, a domain classifier: the features learn to predict the label
while hiding the domain. The same network is trained with and without the reversal; the
table shows the domain classifier's accuracy (near 50%: the domains look alike) and the
accuracy on the target domain.

Run: python examples/gradient_reversal.py [--steps N]
"""
import argparse

import numpy as np

import hookgrad as torch
import hookgrad.nn as nn
import hookgrad.nn.functional as F


LR = 0.3


class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lambd):
        ctx.lambd = lambd
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return -ctx.lambd * grad_output, None


def grad_reverse(x, lambd=1.0):
    return GradReverse.apply(x, lambd)


def make_domains(n, rng, shift=(1.5, 1.5)):
    """Source and target points of two classes; the target is the source moved by ``shift``
    and turned a little."""
    y = rng.integers(0, 2, size=n)
    centers = np.array([[-1.0, 0.0], [1.0, 0.0]])
    src = centers[y] + 0.4 * rng.standard_normal((n, 2))
    turn = np.array([[0.9, -0.4], [0.4, 0.9]])
    tgt = (centers[y] + 0.4 * rng.standard_normal((n, 2))) @ turn.T + np.array(shift)
    f = lambda a: torch.from_numpy(a.astype(np.float32))  # noqa: E731
    return f(src), f(tgt), torch.from_numpy(y)


class DANN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU())
        self.label = nn.Linear(16, 2)
        self.domain = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 2))

    def forward(self, x, lambd):
        f = self.features(x)
        return self.label(f), self.domain(grad_reverse(f, lambd))


def train(src, tgt, y, steps, reverse, seed=0):
    """Train a DANN; ``reverse=False`` trains the same network with lambda = 0 (the domain
    classifier learns, the features ignore it). Plain SGD keeps no state, so the step,
    compiled by
    ``hookgrad.compile`` with the reversal layer, is one program; lambda is a Tensor so
    that its schedule does not compile a new program per value."""
    torch.manual_seed(seed)
    model = DANN()
    opt = torch.optim.SGD(model.parameters(), lr=LR)   # stateless: one compiled program
    both = torch.cat([src, tgt])
    domain = torch.cat([torch.zeros(len(src), dtype=torch.long),
                        torch.ones(len(tgt), dtype=torch.long)])

    @torch.compile
    def step(lambd):
        label_loss = F.cross_entropy(model(src, lambd)[0], y)
        loss = label_loss + F.cross_entropy(model(both, lambd)[1], domain)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return label_loss

    losses = []
    for i in range(steps):
        lambd = min(1.0, 2.0 * i / steps) if reverse else 0.0   # the usual ramp
        losses.append(step(torch.tensor(lambd)).item())
    return model, losses


@torch.no_grad()
def evaluate(model, src, tgt, y):
    zero = torch.tensor(0.0)
    label_tgt = (model(tgt, zero)[0].argmax(1) == y).float().mean().item()
    _, d = model(torch.cat([src, tgt]), zero)
    truth = torch.cat([torch.zeros(len(src)), torch.ones(len(tgt))])
    domain_acc = (d.argmax(1).float() == truth).float().mean().item()
    return label_tgt, domain_acc


def main(steps=300, verbose=True):
    rng = np.random.default_rng(0)
    src, tgt, y = make_domains(256, rng)
    rows = {}
    for reverse in (False, True):
        model, losses = train(src, tgt, y, steps, reverse)
        rows["with reversal" if reverse else "without"] = dict(
            zip(("target_acc", "domain_acc"), evaluate(model, src, tgt, y)), losses=losses)
    if verbose:
        print(f"{'training':14s} {'label loss':>17s} {'domain classifier':>18s} "
              f"{'target accuracy':>16s}")
        for name, r in rows.items():
            print(f"{name:14s} {r['losses'][0]:7.3f} -> {r['losses'][-1]:6.3f} "
                  f"{r['domain_acc']:18.0%} {r['target_acc']:16.0%}")
        print("(a domain classifier near 50% cannot tell the domains apart from the features)")
    return rows


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=300)
    main(p.parse_args().steps)
