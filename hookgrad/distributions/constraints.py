"""Constraints on distribution parameters and values (``torch.distributions.constraints``):
``check(value)`` gives a bool Tensor, ``repr`` is PyTorch's (it appears in error messages)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._arguments import own_init

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["Constraint", "real", "real_vector", "positive", "unit_interval", "simplex",
           "boolean", "greater_than", "less_than", "interval", "integer_interval",
           "independent", "dependent", "dependent_property", "is_dependent", "nonnegative",
           "greater_than_eq", "nonnegative_integer", "positive_integer", "one_hot",
           "multinomial", "half_open_interval", "lower_triangular", "lower_cholesky",
           "corr_cholesky", "square", "symmetric", "positive_semidefinite",
           "positive_definite", "cat", "stack", "MixtureSameFamilyConstraint"]


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


class _LowerBound(Constraint):
    """A constraint with one ``lower_bound`` (the ``greater_than`` family)."""

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def __repr__(self):
        return _fields(self, lower_bound=self.lower_bound)


@own_init
class _GreaterThan(_LowerBound):
    def check(self, value: Tensor) -> Tensor:
        return self.lower_bound < value


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value: Tensor) -> Tensor:
        return value < self.upper_bound

    def __repr__(self):
        return _fields(self, upper_bound=self.upper_bound)


@own_init
class _GreaterThanEq(_LowerBound):
    def check(self, value: Tensor) -> Tensor:
        return self.lower_bound <= value


@own_init
class _IntegerGreaterThan(_LowerBound):
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= self.lower_bound)


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value: Tensor) -> Tensor:
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return _fields(self, lower_bound=self.lower_bound, upper_bound=self.upper_bound)


@own_init
class _IntegerInterval(_Interval):
    is_discrete = True

    def check(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & super().check(value)


@own_init
class _HalfOpenInterval(_Interval):
    def check(self, value: Tensor) -> Tensor:
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value: Tensor) -> Tensor:
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class _Multinomial(Constraint):
    """Nonnegative counts summing to at most ``upper_bound`` (PyTorch's weaker check)."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value: Tensor) -> Tensor:
        return (value >= 0).all(-1) & (value.sum(-1) <= self.upper_bound)


def _some_false(mask: Tensor) -> bool:
    # a traced mask (inside hookgrad.compile) has no value to short-circuit on
    import jax
    return not isinstance(mask._data, jax.core.Tracer) and not bool(mask.all())


def _all_matrix(mask: Tensor) -> Tensor:
    return mask.all(-1).all(-1)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        return _all_matrix(value.tril() == value)


class _LowerCholesky(_LowerTriangular):
    def check(self, value: Tensor) -> Tensor:
        return super().check(value) & (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)


class _CorrCholesky(_LowerCholesky):
    """Cholesky factors of correlation matrices: rows of unit norm (up to ``10 * n``
    machine epsilons)."""

    def check(self, value: Tensor) -> Tensor:
        import jax.numpy as jnp
        tol = float(jnp.finfo(value._data.dtype).eps) * value.size(-1) * 10
        norm = value.detach().pow(2).sum(-1).sqrt()
        return super().check(value) & ((norm - 1.0).abs() <= tol).all(-1)


class _Square(Constraint):
    event_dim = 2

    def check(self, value: Tensor) -> Tensor:
        from .._factory import full
        from .._dtype import bool as bool_
        return full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1],
                    dtype=bool_)


class _Symmetric(_Square):
    def check(self, value: Tensor) -> Tensor:
        square = super().check(value)
        if _some_false(square):
            return square
        return _all_matrix((value - value.mT).abs() <= 1e-6 + 1e-5 * value.mT.abs())


class _PositiveSemidefinite(_Symmetric):
    def check(self, value: Tensor) -> Tensor:
        symmetric = super().check(value)
        if _some_false(symmetric):
            return symmetric
        from ..linalg import eigvalsh
        return (eigvalsh(value) >= 0).all(-1)


class _PositiveDefinite(_Symmetric):
    def check(self, value: Tensor) -> Tensor:
        symmetric = super().check(value)
        if _some_false(symmetric):
            return symmetric
        from ..linalg import cholesky_ex
        return cholesky_ex(value).info == 0


def _check_dim(dim, value):
    if not -value.dim() <= dim < value.dim():
        raise AssertionError(f"dim {dim} out of range for value with {value.dim()} "
                             "dimensions")


def _block_lengths(lengths, parts, what):
    """``cat``'s block lengths (1 each by default), as many as ``parts``, for the ``cat``
    constraint and ``CatTransform`` (as ``_blocks`` below)."""
    lengths = [1] * len(parts) if lengths is None else list(lengths)
    if len(lengths) != len(parts):
        raise AssertionError(f"lengths ({len(lengths)}) must match {what} ({len(parts)})")
    return lengths


def _blocks(value, dim, lengths):
    """The blocks of ``value`` along ``dim``, ``lengths[i]`` long, that ``cat`` joins."""
    starts = [sum(lengths[:i]) for i in range(len(lengths))]
    return [value.narrow(dim, s, n) for s, n in zip(starts, lengths)]


class _Joined(Constraint):
    """The constraints ``cseq`` over the parts of a value that ``cat`` or ``stack`` joins
    along ``dim``: discrete where any part is."""

    def __init__(self, cseq, dim):
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError("All elements of cseq must be Constraint instances")
        self.cseq, self.dim = list(cseq), dim

    @property
    def is_discrete(self) -> bool:
        return any(c.is_discrete for c in self.cseq)


class _Cat(_Joined):
    """``cseq[i]`` over the ``i``-th block (of ``lengths[i]``) along ``dim``, as
    ``cat`` joins them."""

    def __init__(self, cseq, dim=0, lengths=None):
        super().__init__(cseq, dim)
        self.lengths = _block_lengths(lengths, self.cseq, "cseq")

    @property
    def event_dim(self) -> int:
        return max(c.event_dim for c in self.cseq)

    def check(self, value: Tensor) -> Tensor:
        from .._ops.stacking import cat as cat_
        _check_dim(self.dim, value)
        blocks = _blocks(value, self.dim, self.lengths)
        return cat_([c.check(b) for c, b in zip(self.cseq, blocks)], self.dim)


class _Stack(_Joined):
    """``cseq[i]`` over the ``i``-th slice along ``dim``, as ``stack`` joins them."""

    def __init__(self, cseq, dim=0):
        super().__init__(cseq, dim)

    @property
    def event_dim(self) -> int:
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value: Tensor) -> Tensor:
        from .._ops.stacking import stack as stack_
        _check_dim(self.dim, value)
        return stack_([c.check(value.select(self.dim, i))
                       for i, c in enumerate(self.cseq)], self.dim)


class MixtureSameFamilyConstraint(Constraint):
    """The component support, checked with the component dimension put back."""

    def __init__(self, base_constraint):
        self.base_constraint = base_constraint
        self.is_discrete = base_constraint.is_discrete
        self.event_dim = base_constraint.event_dim

    def check(self, value: Tensor) -> Tensor:
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got "
                             f"{value.dim()}")
        keep = value.dim() - self.event_dim
        return result.reshape(tuple(result.shape[:keep]) + (-1,)).all(-1)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_constraint!r})"


class _IndependentConstraint(Constraint):
    """``base`` over the last ``reinterpreted_batch_ndims`` dimensions taken as one event."""

    def __init__(self, base, reinterpreted_batch_ndims):
        self.base_constraint = base
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        self.event_dim = base.event_dim + reinterpreted_batch_ndims
        self.is_discrete = base.is_discrete

    def check(self, value: Tensor) -> Tensor:
        result = self.base_constraint.check(value)
        for _ in range(self.reinterpreted_batch_ndims):
            result = result.all(-1)
        return result

    def __repr__(self):
        return (f"IndependentConstraint({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


def _static(attr):
    """A dependent constraint's ``is_discrete``/``event_dim``: as given, or, where none
    was, PyTorch's error (known only from an instance's constraint)."""
    def get(self) -> bool | int:
        value = self.__dict__[f"_{attr}"]
        if value is NotImplemented:
            raise NotImplementedError(f".{attr} cannot be determined statically")
        return value
    return property(get)


class _Dependent(Constraint):
    """A constraint that depends on other parameters: not checked at construction."""

    is_discrete, event_dim = _static("is_discrete"), _static("event_dim")

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete, self._event_dim = is_discrete, event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        """``dependent(is_discrete=..., event_dim=...)``: this constraint with those
        attributes known (the others kept)."""
        return _Dependent(
            is_discrete=self._is_discrete if is_discrete is NotImplemented else is_discrete,
            event_dim=self._event_dim if event_dim is NotImplemented else event_dim)

    def check(self, value: Tensor) -> Tensor:
        raise ValueError("Cannot determine validity of dependent constraint")


class _DependentProperty(property, _Dependent):
    """A property whose value is a constraint that depends on the instance (``support``):
    read on the class, it is a dependent constraint (``is_dependent`` is True)."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete,
                                  event_dim=self._event_dim)


dependent_property = _DependentProperty


def is_dependent(constraint: object) -> bool:
    return isinstance(constraint, _Dependent)


real = _Real()
real_vector = _IndependentConstraint(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
one_hot = _OneHot()
multinomial = _Multinomial
half_open_interval = _HalfOpenInterval
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
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
