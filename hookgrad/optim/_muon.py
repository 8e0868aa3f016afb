"""``Muon``: momentum orthogonalised by a Newton-Schulz iteration, for 2-D parameters, as
PyTorch 2.13 computes it."""
from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from .._tensor import Tensor
from ._blocks import Params
from ._transform import TransformOptimizer

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


class MuonState(NamedTuple):
    momentum_buffer: optax.Updates


def _bf16(x):
    # PyTorch iterates on bfloat16 Tensors: each op's float32 result rounded to bfloat16.
    # NOTE: float32 arrays rounded with reduce_precision, not bfloat16 arrays: inside jit,
    # XLA's CPU backend computes chains of bfloat16 ops in float32 and skips the roundings
    return jax.lax.reduce_precision(x, exponent_bits=8, mantissa_bits=7)


def _mm(x, y):
    # bfloat16 operands multiply exactly in float32, and accumulate in float32
    return jnp.matmul(x, y, precision=jax.lax.Precision.HIGHEST)


def _lerp(start, end, weight):
    # PyTorch's lerp rounds from the nearer end: the bits decide a bfloat16 rounding later
    return jnp.where(jnp.abs(weight) < 0.5, start + weight * (end - start),
                     end - (end - start) * (1.0 - weight))


def _newton_schulz(g, a, b, c, steps, eps):
    """``steps`` quintic Newton-Schulz iterations on ``g`` in bfloat16 (an approximate
    ``U V^T`` of ``g = U S V^T``), as float32 arrays of bfloat16 values."""
    x = _bf16(g.astype(jnp.float32))
    wide = g.shape[0] <= g.shape[1]
    if not wide:
        x = x.T
    x = _bf16(x / jnp.maximum(_bf16(jnp.sqrt(jnp.sum(x * x))), _bf16(jnp.float32(eps))))
    for _ in range(steps):
        gram = _bf16(_mm(x, x.T))
        # addmm rounds once: beta * input + alpha * (m1 @ m2)
        poly = _bf16(b * gram + c * _mm(gram, gram))
        x = _bf16(a * x + _mm(poly, x))
    return x if wide else x.T


def _lr_ratio(shape, adjust_lr_fn) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return 0.2 * math.sqrt(max(rows, cols))
    return 1.0


def scale_by_pytorch_muon(lr, weight_decay, momentum, one_minus_momentum, a, b, c, eps, *,
                          nesterov, ns_steps, adjust_lr_fn) -> optax.GradientTransformation:
    """PyTorch's Muon step: ``B = lerp(B, g, 1-momentum)``; ``O = NS(lerp(g, B, momentum))``
    (``NS(B)`` without Nesterov); ``p' = p (1 - lr*weight_decay) - lr * ratio * O``.

    NOTE: ``optax.contrib.muon`` bias-corrects its momentum, iterates in the parameter's
    dtype and puts ``eps`` in the norm's denominator differently, so it cannot give
    PyTorch's trajectory; the iteration here is PyTorch's, in bfloat16.
    """

    def init_fn(params):
        return MuonState(optax.tree.zeros_like(params))

    def update_fn(updates, state, params):
        out, bufs = [], []
        for p, g, buf in zip(params, updates, state.momentum_buffer):
            buf = _lerp(buf, g, one_minus_momentum)
            u = _lerp(g, buf, momentum) if nesterov else buf
            o = _newton_schulz(u, a, b, c, ns_steps, eps).astype(p.dtype)
            ratio = _lr_ratio(p.shape, adjust_lr_fn)
            out.append(-lr * weight_decay * p - (lr * ratio) * o)
            bufs.append(buf)
        return Params(out), MuonState(Params(bufs))

    return optax.GradientTransformation(init_fn, update_fn)


def _check_step(group, params):
    """The errors PyTorch's step raises for a group, in its order (raised here before
    anything is written)."""
    for p in params:
        if p.is_complex():
            raise RuntimeError("Muon does not support complex parameters")
    for p in params:
        if p.grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        if group["ns_steps"] >= 100:
            raise ValueError("Number of steps must be less than 100 for computational "
                             "efficiency")
        if len(group["ns_coefficients"]) != 3:
            raise ValueError("Coefficients must be a tuple of exactly 3 values")


class Muon(TransformOptimizer):
    r"""Muon, as ``torch.optim.Muon``: for the 2-D parameters of hidden layers (optimize
    biases, embeddings and the rest with another optimizer, such as ``AdamW``).

    .. code-block:: python

        Muon(params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
             ns_coefficients=(3.4445, -4.7750, 2.0315), eps=1e-7, ns_steps=5,
             adjust_lr_fn=None)

    Each step: ``B = momentum*B + (1-momentum)*g``; ``U = g + momentum*(B - g)`` with
    ``nesterov``, else ``B``; ``O``: ``ns_steps`` Newton-Schulz iterations with
    ``ns_coefficients`` on ``U / max(||U||, eps)`` in bfloat16;
    ``p = p (1 - lr*weight_decay) - lr * ratio * O``, where ``ratio`` is
    ``sqrt(max(1, A/B))`` for an ``A x B`` parameter (``adjust_lr_fn=None`` or
    ``"original"``) or ``0.2 * sqrt(max(A, B))`` (``"match_rms_adamw"``).

    Example::

        >>> opt = hookgrad.optim.Muon([p for p in model.parameters() if p.ndim == 2],
        ...                           lr=0.02)
    """

    _keeps_step = False  # PyTorch's Muon keeps only ``momentum_buffer``

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS,
                 ns_steps=DEFAULT_NS_STEPS, adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: torch.Size({list(p.shape)})")

    def _apply_updates(self):
        for group in self.param_groups:
            _check_step(group, [p for p in group["params"] if p.grad is not None])
        super()._apply_updates()

    def _static(self, group):
        return (bool(group["nesterov"]), int(group["ns_steps"]), group["adjust_lr_fn"])

    def _hyperparams(self, group):
        # a wrong length raises PyTorch's error in step() (_check_step)
        a, b, c = (tuple(group["ns_coefficients"]) + (0.0, 0.0, 0.0))[:3]
        # 1 - momentum in double precision, as PyTorch passes it to lerp: the float32
        # difference is an ulp off, enough to flip a bfloat16 rounding later
        return {"lr": group["lr"], "weight_decay": group["weight_decay"],
                "momentum": group["momentum"], "one_minus_momentum": 1.0 - group["momentum"],
                "a": a, "b": b, "c": c, "eps": group["eps"]}

    @staticmethod
    def _transformation(static, lr, weight_decay, momentum, one_minus_momentum, a, b, c, eps):
        nesterov, ns_steps, adjust_lr_fn = static
        return optax.named_chain(("muon", scale_by_pytorch_muon(
            lr, weight_decay, momentum, one_minus_momentum, a, b, c, eps, nesterov=nesterov,
            ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)))

    _torch_names = {"momentum_buffer": ("muon", "momentum_buffer")}

from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
