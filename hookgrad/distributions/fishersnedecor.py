"""``FisherSnedecor(df1, df2)``: the F distribution, a ratio of scaled chi-squares."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import jax.numpy as jnp

from .._ops.pointwise import where
from .._tensor import Size
from . import constraints
from ._simple import _Params
from .gamma import Gamma

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["FisherSnedecor"]


class FisherSnedecor(_Params, params=("df1", "df2")):
    r"""The Fisher-Snedecor (F) distribution with ``df1`` and ``df2`` degrees of freedom,
    as ``torch.distributions.FisherSnedecor``.

    .. code-block:: python

        FisherSnedecor(df1, df2, validate_args=None)

    ``rsample`` divides two reparameterised gamma samples.
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    @property
    def _gammas(self):
        return (Gamma(self.df1 * 0.5, self.df1, validate_args=False),
                Gamma(self.df2 * 0.5, self.df2, validate_args=False))

    @property
    def mean(self) -> Tensor:
        df2 = where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self) -> Tensor:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self) -> Tensor:
        df1, df2 = self.df1, where(self.df2 <= 4, math.nan, self.df2)
        return 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        g1, g2 = self._gammas
        tiny = float(jnp.finfo(self.df1._data.dtype).tiny)
        x1 = g1.rsample(sample_shape).view(shape)
        x2 = g2.rsample(sample_shape).view(shape).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        h1, h2, ratio = self.df1 * 0.5, self.df2 * 0.5, self.df1 / self.df2
        t1 = (h1 + h2).lgamma() - h1.lgamma() - h2.lgamma()
        t2 = h1 * ratio.log() + (h1 - 1) * value.log()
        t3 = (h1 + h2) * (ratio * value).log1p()
        return t1 + t2 - t3


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
