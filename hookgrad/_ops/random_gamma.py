"""Reparameterised gamma samples (``torch._standard_gamma``): the op behind the
``Gamma``, ``Beta``, ``Dirichlet``, ``Chi2`` and ``StudentT`` samplers of
``hookgrad.distributions``. JAX's gamma sampler is differentiable in the concentration
(implicit reparameterisation), which is the gradient PyTorch's ``StandardGammaBackward0``
gives.
"""
from __future__ import annotations

import jax

from .._tensor import Tensor
from .dispatch import apply
from .registry import defop


def _standard_gamma(alpha, key):
    return jax.random.gamma(key, alpha, dtype=alpha.dtype)


STANDARD_GAMMA = defop("standard_gamma", _standard_gamma, "StandardGammaBackward0",
                       nondiff=(1,))


def standard_gamma(concentration: Tensor) -> Tensor:
    """One ``Gamma(concentration, 1)`` sample per element, from hookgrad's global key."""
    from .. import random
    return apply(STANDARD_GAMMA, (concentration, random.next_key()), None)
