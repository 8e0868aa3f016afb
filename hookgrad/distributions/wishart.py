"""``Wishart(df, covariance_matrix | precision_matrix | scale_tril)``: the law of a scatter
matrix of ``df`` Gaussian vectors."""
from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import jax.numpy as jnp

from .._factory import arange, randn, tensor
from .._ops.pointwise import where
from .._ops.shape import broadcast_shapes
from .._tensor import Size
from ..linalg import cholesky, slogdet
from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import (_CholeskyParametrized, _precision_to_scale_tril,
                                  _the_one_matrix)
from .. import _errors

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    return (x.unsqueeze(-1) - arange(p, dtype=x.dtype) / 2).digamma().sum(-1)


class Wishart(_CholeskyParametrized, ExponentialFamily):
    r"""The Wishart distribution of positive-definite matrices with ``df`` degrees of
    freedom and scale given by one of ``covariance_matrix``, ``precision_matrix`` or
    ``scale_tril``, as ``torch.distributions.Wishart``.

    .. code-block:: python

        Wishart(df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                validate_args=None)

    ``rsample`` uses the Bartlett decomposition (chi-square and normal draws from
    hookgrad's global key), redrawing singular samples up to ``max_try_correction``
    times.
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict:
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        name, param = _the_one_matrix(AssertionError, covariance_matrix, precision_matrix,
                                      scale_tril)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = Size(param.shape[:-2])
            self.df = tensor(float(df), dtype=param.dtype)
        else:
            batch_shape = Size(broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{p - 1}.")
        setattr(self, name, param.expand(tuple(batch_shape) + (-1, -1)))
        if bool((self.df < p).any()):
            _errors.warn("Low df values detected. Singular samples are highly likely to "
                         "occur for ndim - 1 < df < ndim.")
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._unbroadcasted_scale_tril = (
            param if name == "scale_tril" else cholesky(param)
            if name == "covariance_matrix" else _precision_to_scale_tril(param))

    def expand(self, batch_shape, _instance=None) -> Wishart:
        shape = Size(batch_shape)
        cov_shape = shape + self.event_shape
        params = self._given_matrices(cov_shape)
        params["_unbroadcasted_scale_tril"] = self._unbroadcasted_scale_tril.expand(cov_shape)
        params["df"] = self.df.expand(shape)
        return self._new_expanded(Wishart, shape, params)

    @property
    def _chi2(self) -> Chi2:
        p = self._event_shape[-1]
        offset = arange(p, dtype=self.df.dtype).expand(tuple(self._batch_shape) + (-1,))
        return Chi2(self.df.unsqueeze(-1) - offset)

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape

    def _per_matrix(self, t):
        return t.view(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self) -> Tensor:
        return self._per_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        return self._per_matrix(where(factor <= 0, math.nan, factor)) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        v = self.covariance_matrix
        d = v.diagonal(dim1=-2, dim2=-1)
        return self._per_matrix(self.df) * (v.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape):
        eps = float(jnp.finfo(self.df._data.dtype).eps)
        diag = self._chi2.rsample(sample_shape).sqrt().clamp(min=eps).diag_embed()
        lower = randn(tuple(diag.shape), dtype=diag.dtype).tril(-1)
        chol = self._unbroadcasted_scale_tril @ (diag + lower)
        return chol @ chol.mT

    def rsample(self, sample_shape=Size(), max_try_correction=None) -> Tensor:
        tries = 10 if max_try_correction is None else max_try_correction
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        for _ in range(tries):
            singular = ~self.support.check(sample)
            if not bool(singular.any()):
                break
            fresh = self._bartlett_sampling(sample_shape)
            sample = where(singular.unsqueeze(-1).unsqueeze(-1), fresh, sample)
        return sample

    def _log_det_scale(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        trace = value.cholesky_solve(self._unbroadcasted_scale_tril).diagonal(
            dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * _LOG_2 / 2 + self._log_det_scale()) - (nu / 2).mvlgamma(p)
                + (nu - p - 1) / 2 * slogdet(value).logabsdet - trace / 2)

    def entropy(self) -> Tensor:
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * (p * _LOG_2 / 2 + self._log_det_scale()) + (nu / 2).mvlgamma(p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self) -> tuple:
        return -self.precision_matrix / 2, (self.df - self._event_shape[-1] - 1) / 2

    def _log_normalizer(self, x, y) -> Tensor:
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + (y + (p + 1) / 2).mvlgamma(p))


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
