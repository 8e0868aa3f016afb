"""In-place random fills of a Tensor: ``normal_``, ``uniform_``, ``bernoulli_``.

The samples come from hookgrad's generator (``hookgrad.random.draw``: on the host
eagerly, traced under ``hookgrad.compile``) and are copied in with ``copy_``, so the
in-place rules hold (a leaf that requires grad refuses; a view writes through to its base)
and the gradient to the overwritten value is zero, as PyTorch's is.
"""
from __future__ import annotations

import jax.numpy as jnp

from .. import random
from .._tensor import Tensor
from .pointwise import copy_
from .registry import export


def _fill(self, values):
    return copy_(self, Tensor._wrap(jnp.asarray(values, self._data.dtype)))


@export(function=False)
def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """``normal_(mean=0, std=1, *, generator=None)``: fills ``self`` with samples of
    N(mean, std ** 2)."""
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return _fill(self, random.draw("normal", tuple(self.shape), generator=generator) * std
                 + mean)


@export(function=False)
def uniform_(self, from_: float = 0.0, to: float = 1.0, *, generator=None,
             **kwargs) -> Tensor:
    """``uniform_(from=0, to=1, *, generator=None)``: fills ``self`` with samples of
    U(from, to)."""
    from_ = kwargs.pop("from", from_)  # PyTorch's keyword is the reserved word ``from``
    if kwargs:
        raise TypeError(f"uniform_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_} > to={to}")
    u = random.draw("uniform", tuple(self.shape), generator=generator)
    return _fill(self, from_ + (to - from_) * u)


@export(function=False)
def bernoulli_(self, p=0.5, *, generator=None) -> Tensor:
    """``bernoulli_(p=0.5, *, generator=None)``: fills ``self`` with 1 with probability
    ``p`` (a number, or a Tensor broadcast to ``self``) and 0 otherwise."""
    if isinstance(p, Tensor):
        prob = p._data
    else:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        prob = p
    u = random.draw("uniform", tuple(self.shape), generator=generator)
    return _fill(self, jnp.asarray(u) < prob)
