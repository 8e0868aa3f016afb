"""``hookgrad.distributions.transforms``: PyTorch's invertible maps between constrained
spaces (``torch.distributions.transforms``), with their log-Jacobians. They are what
``TransformedDistribution`` and ``biject_to``/``transform_to`` are built from. Every map
is hookgrad ops, so gradients and hooks flow through them."""
from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import jax.numpy as jnp

from .._factory import eye
from .._ops.shape import broadcast_shapes
from ..nn import functional as F
from . import constraints
from ._block_transforms import CatTransform, StackTransform
from ._transform import (ComposeTransform, IndependentTransform, ReshapeTransform,
                         Transform, identity_transform)
from .distribution import broadcast_all
from .utils import lazy_property, tril_matrix_to_vec, vec_to_tril_matrix

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftplusTransform",
           "TanhTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform",
           "Transform", "identity_transform"]


def _finfo(t):
    return jnp.finfo(t._data.dtype)


class _Stateless(Transform):
    """A transform without parameters: any two instances of its class are equal."""

    def __eq__(self, other):
        return isinstance(other, type(self))

    __hash__ = Transform.__hash__


class ExpTransform(_Stateless):
    r"""``y = exp(x)``."""

    domain, codomain = constraints.real, constraints.positive
    bijective, sign = True, +1

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y) -> Tensor:
        return x


class PowerTransform(Transform):
    r"""``y = x ** exponent`` on positive ``x``.

    .. code-block:: python

        PowerTransform(exponent, cache_size=0)
    """

    domain, codomain = constraints.positive, constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size=1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @lazy_property
    def sign(self) -> int | Tensor:
        return self.exponent.sign()

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and bool((self.exponent ==
                                                           other.exponent).all())

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y) -> Tensor:
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape) -> tuple:
        return broadcast_shapes(shape, tuple(self.exponent.shape))

    inverse_shape = forward_shape


def _clipped_sigmoid(x):
    info = _finfo(x)
    return x.sigmoid().clamp(min=float(info.tiny), max=1.0 - float(info.eps))


class SigmoidTransform(_Stateless):
    r"""``y = 1 / (1 + exp(-x))``, inverted by ``logit``; kept inside ``(0, 1)``."""

    domain, codomain = constraints.real, constraints.unit_interval
    bijective, sign = True, +1

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        info = _finfo(y)
        y = y.clamp(min=float(info.tiny), max=1.0 - float(info.eps))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y) -> Tensor:
        return -F.softplus(-x) - F.softplus(x)


class SoftplusTransform(_Stateless):
    r"""``y = log(1 + exp(x))`` (linear above 20)."""

    domain, codomain = constraints.real, constraints.positive
    bijective, sign = True, +1

    def _call(self, x):
        return F.softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y) -> Tensor:
        return -F.softplus(-x)


class TanhTransform(_Stateless):
    r"""``y = tanh(x)``; use ``cache_size=1`` where ``y`` reaches ``+-1``."""

    domain, codomain = constraints.real, constraints.interval(-1.0, 1.0)
    bijective, sign = True, +1

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return y.atanh()

    def log_abs_det_jacobian(self, x, y) -> Tensor:
        # log(1 - tanh(x)^2) without cancellation
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class AbsTransform(_Stateless):
    r"""``y = |x|`` (not bijective: the inverse is the identity)."""

    domain, codomain = constraints.real, constraints.positive

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


def _equal(a, b):
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return a == b
    return bool((a == b).all())


class AffineTransform(Transform):
    r"""``y = loc + scale * x`` elementwise; ``event_dim`` dimensions form one event.

    .. code-block:: python

        AffineTransform(loc, scale, event_dim=0, cache_size=0)
    """

    bijective = True

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self) -> constraints.Constraint:
        return constraints.independent(constraints.real, self.event_dim) \
            if self.event_dim else constraints.real

    codomain = domain

    def with_cache(self, cache_size=1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other):
        return (isinstance(other, AffineTransform) and _equal(self.loc, other.loc)
                and _equal(self.scale, other.scale))

    __hash__ = Transform.__hash__

    @property
    def sign(self) -> int | Tensor:
        if isinstance(self.scale, numbers.Number):
            return (self.scale > 0) - (self.scale < 0)
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y) -> Tensor:
        shape = tuple(x.shape)
        if isinstance(self.scale, numbers.Number):
            from .._factory import full_like
            result = full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self.event_dim:
            result = result.reshape(tuple(result.shape[:-self.event_dim]) + (-1,)).sum(-1)
            shape = shape[:-self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape) -> tuple:
        return broadcast_shapes(shape, tuple(getattr(self.loc, "shape", ())),
                                tuple(getattr(self.scale, "shape", ())))

    inverse_shape = forward_shape


def _last_dim(shape, change=0):
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")
    return tuple(shape[:-1]) + (shape[-1] + change,)


class SoftmaxTransform(_Stateless):
    r"""Unconstrained vectors to the simplex: ``exp`` then normalise (not bijective)."""

    domain, codomain = constraints.real_vector, constraints.simplex

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape) -> tuple:
        return _last_dim(shape)

    inverse_shape = forward_shape


def _stick_offset(x):
    # K - k for k = 1..K-1 (K = x.size(-1) + 1): centres the breaks at uniform weights
    return x.shape[-1] + 1 - x.new_ones(x.shape[-1]).cumsum(-1)


class StickBreakingTransform(_Stateless):
    r"""Unconstrained vectors of length ``K - 1`` to the ``K``-simplex by stick breaking
    (bijective: an iterated sigmoid)."""

    domain, codomain = constraints.real_vector, constraints.simplex
    bijective = True

    def _call(self, x):
        z = _clipped_sigmoid(x - _stick_offset(x).log())
        left = (1 - z).cumprod(-1)
        return F.pad(z, [0, 1], value=1) * F.pad(left, [1, 0], value=1)

    def _inverse(self, y):
        head = y[..., :-1]
        offset = y.shape[-1] - y.new_ones(head.shape[-1]).cumsum(-1)
        rest = (1 - head.cumsum(-1)).clamp(min=float(_finfo(y).tiny))
        return head.log() - rest.log() + offset.log()

    def log_abs_det_jacobian(self, x, y) -> Tensor:
        x = x - _stick_offset(x).log()
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape) -> tuple:
        return _last_dim(shape, +1)

    def inverse_shape(self, shape) -> tuple:
        return _last_dim(shape, -1)


class LowerCholeskyTransform(_Stateless):
    r"""Unconstrained matrices to lower-triangular ones with a positive diagonal: the
    strict lower triangle kept, the diagonal exponentiated."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(_Stateless):
    r"""Unconstrained matrices to positive-definite ones: ``L @ L.mT`` with ``L`` from
    ``LowerCholeskyTransform``."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x):
        lower = LowerCholeskyTransform()(x)
        return lower @ lower.mT

    def _inverse(self, y):
        from ..linalg import cholesky
        return LowerCholeskyTransform().inv(cholesky(y))


class CorrCholeskyTransform(_Stateless):
    r"""Unconstrained vectors of length ``D * (D - 1) / 2`` to Cholesky factors of
    ``D x D`` correlation matrices: each row of the strict lower triangle goes through
    ``tanh`` and a signed stick breaking to a unit-norm row."""

    domain, codomain = constraints.real_vector, constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        eps = float(_finfo(x).eps)
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        remaining = (1 - r ** 2).sqrt().cumprod(-1)
        r = r + eye(r.shape[-1], dtype=r.dtype)
        return r * F.pad(remaining[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        left = 1 - (y * y).cumsum(-1)
        left = F.pad(left[..., :-1], [1, 0], value=1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(left, diag=-1).sqrt()
        return (t.log1p() - t.neg().log1p()) / 2   # atanh, as the forward's tanh

    def log_abs_det_jacobian(self, x, y, intermediates=None) -> Tensor:
        left = tril_matrix_to_vec(1 - (y * y).cumsum(-1), diag=-2)
        stick = 0.5 * left.log().sum(-1)
        tanh = -2 * (x + F.softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick + tanh

    def forward_shape(self, shape) -> tuple:
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return tuple(shape[:-1]) + (d, d)

    def inverse_shape(self, shape) -> tuple:
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return tuple(shape[:-2]) + (d * (d - 1) // 2,)


class CumulativeDistributionTransform(Transform):
    r"""``y = distribution.cdf(x)``: the support of ``distribution`` to ``(0, 1)``
    (``log_abs_det_jacobian`` is its ``log_prob``).

    .. code-block:: python

        CumulativeDistributionTransform(distribution, cache_size=0)
    """

    bijective, sign = True, +1
    codomain = constraints.unit_interval

    def __init__(self, distribution, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self) -> constraints.Constraint:
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y) -> Tensor:
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
