"""``StudentT(df, loc, scale)``: Student's t-distribution."""
from __future__ import annotations

from .._tensor import Tensor  # noqa: F401 - annotations

import math

from .._factory import randn
from .._ops.random_gamma import standard_gamma
from . import constraints
from ._simple import _Params

__all__ = ["StudentT"]


class StudentT(_Params, params=("df", "loc", "scale"), defaults=(0.0, 1.0)):
    r"""Student's t-distribution with df degrees of freedom, as
    torch.distributions.StudentT.

    .. code-block:: python

        StudentT(df, loc=0.0, scale=1.0, validate_args=None)

    rsample is loc + scale * z / sqrt(chi2 / df) (reparameterised).
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def mean(self) -> Tensor:
        return self.loc.masked_fill(self.df <= 1, math.nan)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        df = self.df
        v = self.scale.pow(2) * df / (df - 2)
        v = v.masked_fill((df <= 2) & (df > 1), math.inf)
        return v.masked_fill(df <= 1, math.nan)

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        z = randn(shape, dtype=self.df.dtype)
        chi2 = 2 * standard_gamma(0.5 * self.df.expand(shape))
        return self.loc + self.scale * z * (self.df / chi2).sqrt()

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + (0.5 * self.df).lgamma() - (0.5 * (self.df + 1.0)).lgamma())
        return -0.5 * (self.df + 1.0) * (y.pow(2) / self.df).log1p() - z

    def entropy(self) -> Tensor:
        lbeta = ((0.5 * self.df).lgamma() + math.lgamma(0.5)
                 - (0.5 * (self.df + 1)).lgamma())
        return (self.scale.log() + 0.5 * (self.df + 1) * ((0.5 * (self.df + 1)).digamma()
                                                          - (0.5 * self.df).digamma())
                + 0.5 * self.df.log() + lbeta)




from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
