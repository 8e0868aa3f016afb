"""``LKJCholesky(dim, concentration)``: the LKJ law of correlation matrices, over their
lower Cholesky factors."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import jax.numpy as jnp

from .._factory import arange, ones, randn
from .._ops.stacking import cat
from .._tensor import Size
from . import constraints
from .beta import Beta
from .distribution import Distribution, broadcast_all

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    r"""The LKJ distribution of ``dim x dim`` correlation matrices, density proportional
    to ``det(M) ** (concentration - 1)``, over their lower Cholesky factors, as
    ``torch.distributions.LKJCholesky``.

    .. code-block:: python

        LKJCholesky(dim, concentration=1.0, validate_args=None)

    ``sample`` uses the onion method (beta and normal draws from hookgrad's global key).
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        marginal = self.concentration + 0.5 * (dim - 2)
        offset = arange(dim - 1, dtype=self.concentration.dtype)
        offset = cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), Size((dim, dim)),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> LKJCholesky:
        shape = Size(batch_shape)
        return self._new_expanded(LKJCholesky, shape, {
            "dim": self.dim, "concentration": self.concentration.expand(shape),
            "_beta": self._beta.expand(shape + (self.dim,))})

    def sample(self, sample_shape=Size()) -> Tensor:
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        normal = randn(self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
        sphere = normal / normal.norm(dim=-1, keepdim=True)
        first_row_zero = ones(self.dim, 1, dtype=y.dtype)
        first_row_zero[0] = 0.0
        w = y.sqrt() * (sphere * first_row_zero).nan_to_num()
        tiny = float(jnp.finfo(w._data.dtype).tiny)
        diag = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
        return w + diag.diag_embed()

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, self.dim + 1, dtype=value.dtype)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalizer = (0.5 * dm1 * math.log(math.pi) + (alpha - 0.5).mvlgamma(dm1)
                      - alpha.lgamma() * dm1)
        return unnormalized - normalizer


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
