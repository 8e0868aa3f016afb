"""Tiny models whose weights come from NumPy, built with whichever ``torch`` is imported
(real PyTorch, or hookgrad bound as ``torch``), so both runs compute the same function."""
import numpy as np


def load_weights(model, seed):
    """Overwrite every parameter with N(0, 0.5) values drawn from ``seed``."""
    import torch
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in model.named_parameters():
            p.copy_(torch.tensor(rng.normal(0, 0.5, tuple(p.shape)).astype(np.float32)))
    return model


def tiny_cnn(seed=0, classes=3):
    """conv(1->3) relu conv(3->4) relu [features] -> pool -> linear: input (N, 1, 8, 8)."""
    import torch.nn as nn

    class TinyCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 3, 3, padding=1)
            self.relu1 = nn.ReLU()
            self.conv2 = nn.Conv2d(3, 4, 3, padding=1)
            self.relu2 = nn.ReLU()
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(4, classes)

        def forward(self, x):
            x = self.relu2(self.conv2(self.relu1(self.conv1(x))))
            return self.fc(self.pool(x).flatten(1))

    return load_weights(TinyCNN(), seed).eval()


def images(n=2, seed=1, size=8):
    import torch
    rng = np.random.default_rng(seed)
    return torch.tensor(rng.normal(0, 1, (n, 1, size, size)).astype(np.float32))
