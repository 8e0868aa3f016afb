"""Shared by the nn tests: run a scenario under hookgrad and torch, compare as plain Python."""
import numpy as np
import pytest

import hookgrad

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="differential test needs torch")


def conv(x):
    """Hook logs and results as plain Python (tensors -> rounded nested lists)."""
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, (list, tuple)):
        return [conv(v) for v in x]
    if isinstance(x, dict):
        return {k: conv(v) for k, v in x.items()}
    if hasattr(x, "detach"):
        return np.round(np.asarray(x.detach().tolist(), dtype=float), 5).tolist()
    raise TypeError(type(x))


def both(fn):
    """Run ``fn(L)`` with hookgrad and torch; return the two results as plain Python."""
    return conv(fn(hookgrad)), conv(fn(torch))
