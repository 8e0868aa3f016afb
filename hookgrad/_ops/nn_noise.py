"""Layers with random noise behind ``hookgrad.nn.functional``: ``rrelu`` (random leaky
slopes) and ``alpha_dropout`` / ``feature_alpha_dropout`` (dropout that keeps SELU's
self-normalization). Randomness from ``hookgrad.random``: the numbers differ from PyTorch's,
the distributions and the recorded nodes do not.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .._tensor import Tensor
from .dispatch import apply
from .nn_layers import _check_p, _random_key
from .registry import defop

# SELU's negative saturation value, -scale * alpha
_ALPHA_P = -1.7580993408473766


def _rrelu(x, key, lower, upper, training):
    if training:
        slope = jax.random.uniform(key, x.shape, x.dtype, lower, upper)
    else:
        slope = jnp.asarray((lower + upper) / 2, x.dtype)
    return jnp.where(x >= 0, x, x * slope)


def _alpha_dropout(x, key, p, mask_shape):
    keep = jax.random.bernoulli(key, 1.0 - p, mask_shape).astype(x.dtype)
    a = ((1 - p) * (1 + p * _ALPHA_P ** 2)) ** -0.5
    b = -a * _ALPHA_P * p
    return (x * keep + _ALPHA_P * (1 - keep)) * a + b


RRELU = defop("rrelu_with_noise", _rrelu, "RreluWithNoiseBackward0", nondiff=(1,))
# PyTorch's in-place form records its own node
RRELU_ = defop("rrelu_with_noise_", _rrelu, "RreluWithNoiseBackward1", nondiff=(1,))
# PyTorch composes alpha dropout from arithmetic; the last op is the shift
ALPHA_DROPOUT = defop("alpha_dropout", _alpha_dropout, "AddBackward0", nondiff=(1,))


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: negative inputs times a slope drawn from
    ``U(lower, upper)`` in training, times ``(lower + upper) / 2`` in evaluation."""
    statics = rrelu_statics(lower, upper, training)  # before a key is drawn
    return apply(RRELU_ if inplace else RRELU, (input, _random_key() if training else None),
                 statics, out=input if inplace else None)


def rrelu_statics(lower, upper, training):
    """rrelu's static arguments, or PyTorch's error for bounds out of order (raised in
    evaluation too)."""
    lower, upper = float(lower), float(upper)
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    return {"lower": lower, "upper": upper, "training": bool(training)}


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    """In-place ``rrelu``."""
    return rrelu(input, lower, upper, training, inplace=True)


def _alpha_dropout_impl(input, p, training, inplace, mask_shape):
    _check_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        return input.mul_(0.0) if inplace else input.mul(0.0)
    return apply(ALPHA_DROPOUT, (input, _random_key()), {"p": float(p), "mask_shape": mask_shape},
                 out=input if inplace else None)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout for SELU networks: dropped elements are set to SELU's negative saturation and
    the result is rescaled to keep zero mean and unit variance."""
    return _alpha_dropout_impl(input, p, training, inplace, tuple(input.shape))


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """``alpha_dropout`` of whole channels of ``(N, C, *)``."""
    _check_p(p)
    if training and p not in (0.0, 1.0) and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    return _alpha_dropout_impl(input, p, training, inplace, shape)
