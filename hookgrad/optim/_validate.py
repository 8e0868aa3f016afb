"""Argument checks shared by the optimizers' constructors (PyTorch's errors and wording)."""
from __future__ import annotations

from .._tensor import Tensor


def check_lr(lr) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_nonnegative(value, what: str) -> None:
    """``what`` as PyTorch names it: "momentum value", "weight_decay value", "epsilon value"."""
    if not 0.0 <= value:
        raise ValueError(f"Invalid {what}: {value}")


def check_differentiable(differentiable: bool) -> None:
    if differentiable:
        raise NotImplementedError(
            "hookgrad optimizers do not support differentiable=True: the update runs as one "
            "jitted optax transformation outside the autograd tape")
