"""``MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril)``: the
Gaussian over vectors."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .._factory import eye, randn
from .._ops.shape import broadcast_shapes
from .._tensor import Size
from ..linalg import cholesky, solve_triangular
from . import constraints
from ._simple import _CentredAtLoc
from .distribution import Distribution
from .utils import lazy_property

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["MultivariateNormal"]


def _batch_mv(mat, vec):
    """``mat @ vec`` over broadcast batch dimensions."""
    return (mat @ vec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(tril, x):
    """``x^T (L L^T)^-1 x`` for a lower-triangular factor ``L``, ``L`` broadcast over
    ``x``'s batch."""
    n = x.shape[-1]
    tril = tril.expand(tuple(broadcast_shapes(tuple(tril.shape[:-2]), tuple(x.shape[:-1])))
                       + (n, n))
    x = x.expand(tuple(tril.shape[:-1]))
    return solve_triangular(tril, x.unsqueeze(-1), upper=False).squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(precision):
    # the Cholesky factor of P's reversal, reversed, is the inverse-transpose of the
    # covariance's lower factor: invert that triangle
    lf = cholesky(precision.flip((-2, -1)))
    l_inv = lf.flip((-2, -1)).mT
    return solve_triangular(l_inv, eye(precision.shape[-1], dtype=precision.dtype),
                            upper=False)


def _half_log_det(tril):
    return tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


class _CholeskyParametrized:
    """``scale_tril``, ``covariance_matrix`` and ``precision_matrix`` from
    ``_unbroadcasted_scale_tril``, expanded to ``_matrix_shape()`` (whichever was not
    given is computed on first use)."""

    _MATRICES = ("covariance_matrix", "scale_tril", "precision_matrix")

    def _given_matrices(self, shape):
        return {n: self.__dict__[n].expand(shape) for n in self._MATRICES
                if n in self.__dict__}

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        tril = self._unbroadcasted_scale_tril
        return (tril @ tril.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        return self._unbroadcasted_scale_tril.cholesky_inverse().expand(self._matrix_shape())


def _the_one_matrix(error, covariance_matrix, precision_matrix, scale_tril):
    """``(name, matrix)`` of the one parametrisation given; PyTorch's ``error`` (its type
    differs between the distributions) where not exactly one is."""
    given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix),
                                 ("precision_matrix", precision_matrix),
                                 ("scale_tril", scale_tril)) if m is not None]
    if len(given) != 1:
        raise error("Exactly one of covariance_matrix or precision_matrix or scale_tril may "
                    "be specified.")
    return given[0]


class MultivariateNormal(_CholeskyParametrized, _CentredAtLoc, Distribution):
    r"""The multivariate normal distribution of mean ``loc`` and a covariance given by
    one of ``covariance_matrix``, ``precision_matrix`` or its lower Cholesky factor
    ``scale_tril``, as ``torch.distributions.MultivariateNormal``.

    .. code-block:: python

        MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None,
                           scale_tril=None, validate_args=None)

    ``rsample`` is ``loc + scale_tril @ eps`` with standard normal ``eps`` from hookgrad's
    global key.
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        name, matrix = _the_one_matrix(ValueError, covariance_matrix, precision_matrix,
                                       scale_tril)
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{what} must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        batch_shape = Size(broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)

    def expand(self, batch_shape, _instance=None) -> MultivariateNormal:
        batch_shape = Size(batch_shape)
        cov_shape = batch_shape + self.event_shape + self.event_shape
        params = self._given_matrices(cov_shape)
        params["loc"] = self.loc.expand(batch_shape + self.event_shape)
        params["_unbroadcasted_scale_tril"] = self._unbroadcasted_scale_tril
        return self._new_expanded(MultivariateNormal, batch_shape, params)

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @property
    def variance(self) -> Tensor:
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=Size()) -> Tensor:
        eps = randn(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return (-0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m)
                - _half_log_det(self._unbroadcasted_scale_tril))

    def entropy(self) -> Tensor:
        h = (0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi))
             + _half_log_det(self._unbroadcasted_scale_tril))
        return h.expand(self._batch_shape) if len(self._batch_shape) else h


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
