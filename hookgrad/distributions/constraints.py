"""Constraints on distribution parameters and values (``torch.distributions.constraints``):
``check(value)`` gives a bool Tensor, ``repr`` is PyTorch's (it appears in error messages)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["Constraint", "real", "real_vector", "positive", "unit_interval", "simplex",
           "boolean", "greater_than", "less_than", "interval", "integer_interval",
           "independent", "dependent", "dependent_property", "is_dependent", "nonnegative",
           "greater_than_eq", "nonnegative_integer"]


class Constraint:
    """A region of values; ``check(value)`` is elementwise over the batch dimensions."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__[1:] + "()"


def _fields(obj, **kw):
    return type(obj).__name__[1:] + "(" + ", ".join(f"{k}={v}" for k, v in kw.items()) + ")"


class _Real(Constraint):
    def check(self, value: Tensor) -> Tensor:
        return value == value  # False only for NaN


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value == 0) | (value == 1)


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value: Tensor) -> Tensor:
        return self.lower_bound < value

    def __repr__(self):
        return _fields(self, lower_bound=self.lower_bound)


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value: Tensor) -> Tensor:
        return value < self.upper_bound

    def __repr__(self):
        return _fields(self, upper_bound=self.upper_bound)


class _GreaterThanEq(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value: Tensor) -> Tensor:
        return self.lower_bound <= value

    def __repr__(self):
        return _fields(self, lower_bound=self.lower_bound)


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self):
        return _fields(self, lower_bound=self.lower_bound)


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Tensor) -> Tensor:
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return _fields(self, lower_bound=self.lower_bound, upper_bound=self.upper_bound)


class _IntegerInterval(_Interval):
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & super().check(value)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _IndependentConstraint(Constraint):
    """``base`` over the last ``reinterpreted_batch_ndims`` dimensions taken as one event."""

    def __init__(self, base, reinterpreted_batch_ndims):
        self.base_constraint = base
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        self.event_dim = base.event_dim + reinterpreted_batch_ndims

    def check(self, value: Tensor) -> Tensor:
        result = self.base_constraint.check(value)
        for _ in range(self.reinterpreted_batch_ndims):
            result = result.all(-1)
        return result

    def __repr__(self):
        return (f"IndependentConstraint({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


class _Dependent(Constraint):
    """A constraint that depends on other parameters: not checked at construction."""

    def __init__(self, *, is_discrete=False, event_dim=0):
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def check(self, value: Tensor) -> Tensor:
        raise ValueError("Cannot determine validity of dependent constraint")


class dependent_property(property):
    """A property whose value is a constraint that depends on the instance (``support``)."""

    def __init__(self, fn=None, *, is_discrete=False, event_dim=0):
        super().__init__(fn)
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def __call__(self, fn):
        return dependent_property(fn, is_discrete=self.is_discrete, event_dim=self.event_dim)


def is_dependent(constraint: object) -> bool:
    return isinstance(constraint, _Dependent)


real = _Real()
real_vector = _IndependentConstraint(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
nonnegative_integer = _IntegerGreaterThan(0)
greater_than_eq = _GreaterThanEq
unit_interval = _Interval(0.0, 1.0)
simplex = _Simplex()
boolean = _Boolean()
dependent = _Dependent()
greater_than = _GreaterThan
less_than = _LessThan
interval = _Interval
integer_interval = _IntegerInterval
independent = _IndependentConstraint


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
