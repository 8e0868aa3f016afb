"""PyTorch's random layer kernels as top-level functions: ``torch.dropout_``,
``torch.feature_dropout``, ``torch.alpha_dropout``, ``torch.native_dropout``,
``torch.rrelu``, ... (ATen's signatures: ``train`` is positional, no ``inplace``).

Randomness comes from ``hookgrad.random`` (or the given ``generator``): the numbers differ
from PyTorch's, the laws, the shapes of the masks and the recorded nodes do not.
"""
from __future__ import annotations

import jax.numpy as jnp

from .. import _dtype
from .._generator import Generator
from .._tensor import Tensor
from .dispatch import apply
from .nn_layers import _dropout_impl, _random_key
from .nn_noise import RRELU, RRELU_, alpha_dropout as _alpha, \
    feature_alpha_dropout as _feature_alpha, rrelu_statics
from .registry import defop, export


def _check_p(p):
    # ATen's check: a RuntimeError (``nn.functional``'s is a ValueError), p as C++ prints it
    if p < 0.0 or p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")


@export(method=False)
def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place ``dropout``: zeroes each element with probability ``p``, scales the rest by
    ``1 / (1 - p)``."""
    _check_p(p)
    return _dropout_impl(input, p, train, True, None)


def _channels(input):
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return tuple(input.shape[:2]) + (1,) * (input.ndim - 2)


def _feature_dropout(input, p, train, inplace):
    _check_p(p)
    if not train or p == 0.0 or input.numel() == 0:
        return input
    return _dropout_impl(input, p, train, inplace, _channels(input))


@export(method=False)
def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Zeroes whole channels (dim 1) of ``(N, C, *)`` with probability ``p``, scaling the
    rest by ``1 / (1 - p)``."""
    return _feature_dropout(input, p, train, False)


@export(method=False)
def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place ``feature_dropout``."""
    return _feature_dropout(input, p, train, True)


def _alpha_kernel(fn, input, p, train, inplace):
    # ATen's RuntimeError for p first; then nn.functional's alpha dropout (whole or by channel)
    _check_p(p)
    return fn(input, p, train, inplace)


@export(method=False)
def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Dropout keeping SELU's zero mean and unit variance (``nn.functional.alpha_dropout``)."""
    return _alpha_kernel(_alpha, input, p, train, False)


@export(method=False)
def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place ``alpha_dropout``."""
    return _alpha_kernel(_alpha, input, p, train, True)


@export(method=False)
def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``alpha_dropout`` of whole channels (dim 1) of ``(N, C, *)``."""
    return _alpha_kernel(_feature_alpha, input, p, train, False)


@export(method=False)
def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place ``feature_alpha_dropout``."""
    return _alpha_kernel(_feature_alpha, input, p, train, True)


def _native_dropout(x, keep, scale):
    return x * (keep.astype(x.dtype) * jnp.asarray(scale, x.dtype))


NATIVE_DROPOUT = defop("native_dropout", _native_dropout, "NativeDropoutBackward0",
                       {0: (1,)}, nondiff=(1,))


@export(method=False)
def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:
    """``(output, mask)``: ``input`` with each element zeroed with probability ``p`` (kept
    ones scaled by ``1 / (1 - p)``) and the bool mask of the kept ones; when ``train`` is
    False, ``input``'s values and an all-True mask."""
    from .._factory import ones
    if train is None or train:
        if not 0.0 <= 1.0 - p <= 1.0:  # ATen draws the mask with bernoulli_(1 - p)
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1.0 - p:g}")
        keep = ones(tuple(input.shape)).bernoulli_(1.0 - p).bool()
        scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
    else:
        keep, scale = ones(tuple(input.shape), dtype=_dtype.bool), 1.0
    return apply(NATIVE_DROPOUT, (input, keep), {"scale": float(scale)}), keep


def _rrelu(input, lower, upper, training, generator, inplace):
    statics = rrelu_statics(lower, upper, training)  # before a key is drawn
    key = None
    if training:
        key = _random_key() if generator is None else _key_of(generator)
    return apply(RRELU_ if inplace else RRELU, (input, key), statics,
                 out=input if inplace else None)


def _key_of(generator):
    if not isinstance(generator, Generator):
        raise TypeError(f"rrelu(): argument 'generator' (position 5) must be "
                        f"torch.Generator, not "
                        f"{type(generator).__name__}")
    return generator.next_key()


@export(method=False)
def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          generator=None) -> Tensor:
    """Randomized leaky ReLU: negative inputs times a slope drawn from ``U(lower, upper)``
    in training, times ``(lower + upper) / 2`` otherwise."""
    return _rrelu(input, lower, upper, training, generator, False)


@export(method=False)
def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
           generator=None) -> Tensor:
    """In-place ``rrelu``."""
    return _rrelu(input, lower, upper, training, generator, True)
