"""Shared pieces of the location-scale and rate distributions: a constructor that
broadcasts the parameters and sets the batch shape, and ``expand``; the declarations of
the parametrisations several distributions share."""
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

    mode = mean


class _Params(Distribution):
    """A distribution of the broadcast parameters named in ``_params`` (in order).

    A subclass declared ``class Gamma(_Params, params=("concentration", "rate"))`` gets
    PyTorch's ``__init__(self, concentration, rate, validate_args=None)``; ``defaults``
    gives the last parameters' default values (``StudentT``'s ``loc=0.0, scale=1.0``)."""

    _params: tuple = ()

    def __init_subclass__(cls, params=None, defaults=(), **kwargs):
        super().__init_subclass__(**kwargs)
        if params is not None:
            cls._params = params
            cls.__init__ = _init_taking(cls, params, defaults)

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


def _init_taking(cls, params, defaults):
    """``cls.__init__(self, *params, validate_args=None)``, passing the parameters on in
    order, written out (as ``dataclasses`` does) so that ``inspect.signature`` and the
    ``TypeError`` of a wrong call are those of PyTorch's hand-written ``__init__``."""
    first_default = len(params) - len(defaults)
    names = [n if i < first_default else f"{n}=_defaults[{i - first_default}]"
             for i, n in enumerate(params)]
    source = (f"def __init__(self, {', '.join(names)}, validate_args=None):\n"
              f"    super(_cls, self).__init__({', '.join(params)}, "
              "validate_args=validate_args)\n")
    scope = {"_cls": cls, "_defaults": defaults}
    exec(compile(source, f"<{cls.__module__}.{cls.__qualname__}.__init__>", "exec"), scope)
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    return init


class _LocScale(_Params):
    """A real location-scale family: ``(loc, scale)``, reparameterised samples. Each
    subclass declares ``params=("loc", "scale")``, so that its ``__init__`` is its own
    (named in a wrong call's ``TypeError``, as PyTorch's)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    mode = _CentredAtLoc.mode   # the peak of all but LogNormal, which has its own


class _UnitConcentrations:
    """Two positive concentrations ``(concentration1, concentration0)`` of a law on the
    unit interval, with reparameterised samples (``Beta``, ``Kumaraswamy``)."""

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True
