"""Shared pieces of the location-scale and rate distributions: a constructor that
broadcasts the parameters and sets the batch shape, and ``expand``."""
from __future__ import annotations

from .._tensor import Tensor  # noqa: F401 - annotations

import numbers

from .._tensor import Size, Tensor
from . import constraints
from .distribution import Distribution, broadcast_all


class _CentredAtLoc:
    """``mean`` and ``mode`` are ``loc`` (symmetric unimodal laws)."""

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc


class _Params(Distribution):
    """A distribution of the broadcast parameters named in ``_params`` (in order)."""

    _params: tuple = ()

    def __init__(self, *values, validate_args=None):
        tensors = broadcast_all(*values)
        for name, t in zip(self._params, tensors):
            setattr(self, name, t)
        if all(isinstance(v, numbers.Number) for v in values):
            batch_shape = Size()
        else:
            batch_shape = tensors[0].size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Distribution:
        shape = Size(batch_shape)
        new = self._new_expanded(type(self), shape,
                                 {n: getattr(self, n).expand(shape) for n in self._params})
        new._params = self._params
        return new


class _LocScale(_Params):
    """A real location-scale family: ``(loc, scale)``, reparameterised samples."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(loc, scale, validate_args=validate_args)

    @property
    def mode(self) -> Tensor:
        return self.loc
