"""``torch.binomial``: samples of the binomial distribution, drawn from hookgrad's PRNG key
(``jax.random.binomial``), so they differ from PyTorch's for the same seed. As in PyTorch,
it has no derivative (its node raises when backward reaches it)."""
from __future__ import annotations

import jax

from .. import random
from .._dtype import TORCH_KINDS
from .._tensor import Tensor
from .dispatch import NOT_IMPLEMENTED, apply
from .registry import defop, export


def _binomial(count, prob, key_data):
    draws = jax.random.binomial(jax.random.wrap_key_data(key_data), count, prob)
    return jax.lax.stop_gradient(draws).astype(count.dtype)


_BINOMIAL = defop("binomial", _binomial, NOT_IMPLEMENTED, ())


@export(method=False)
def binomial(count, prob, generator=None) -> Tensor:
    """``binomial(count, prob, generator=None)``: the number of successes in ``count``
    trials of probability ``prob`` (floating Tensors of one dtype, broadcast)."""
    if not count.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{TORCH_KINDS[count.dtype.name]}")
    if prob.dtype != count.dtype:
        raise RuntimeError(f"Found dtype {TORCH_KINDS[prob.dtype.name]} but expected "
                           f"{TORCH_KINDS[count.dtype.name]}")
    key = random.next_key() if generator is None else generator.next_key()
    return apply(_BINOMIAL, (count, prob, Tensor._wrap(jax.random.key_data(key))))
