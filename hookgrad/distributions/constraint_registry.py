"""``biject_to`` and ``transform_to`` (``torch.distributions.constraint_registry``): from a
constraint to a transform of unconstrained reals onto it. ``biject_to`` gives bijections
(for samplers that need the Jacobian of the inverse); ``transform_to`` may give cheaper,
non-bijective maps (for optimisers)."""
from __future__ import annotations

import numbers
from collections.abc import Callable

from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Links constraint classes to factories ``factory(constraint) -> Transform``."""

    def __init__(self) -> None:
        self._registry = {}

    def register(self, constraint, factory: Callable | None = None):
        """Registers ``factory`` for a ``Constraint`` subclass (or an instance's class);
        without ``factory``, a decorator."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not (isinstance(constraint, type) and
                issubclass(constraint, constraints.Constraint)):
            raise TypeError("Expected constraint to be either a Constraint subclass or "
                            f"instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint) -> transforms.Transform:
        """The transform for ``constraint``; ``NotImplementedError`` if none is
        registered for its class."""
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} "
                                      "constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _both(constraint):
    return lambda f: biject_to.register(constraint, transform_to.register(constraint, f))


@_both(constraints.real)
def _to_real(constraint):
    return transforms.identity_transform


@biject_to.register(constraints.independent)
def _biject_to_independent(constraint):
    return transforms.IndependentTransform(biject_to(constraint.base_constraint),
                                           constraint.reinterpreted_batch_ndims)


@transform_to.register(constraints.independent)
def _transform_to_independent(constraint):
    return transforms.IndependentTransform(transform_to(constraint.base_constraint),
                                           constraint.reinterpreted_batch_ndims)


# positive and nonnegative are greater_than(0) instances: the registry keys on classes,
# so the greater_than factories below serve them, as in PyTorch
@_both(constraints.positive)
@_both(constraints.nonnegative)
def _to_positive(constraint):
    return transforms.ExpTransform()


@_both(constraints.greater_than)
@_both(constraints.greater_than_eq)
def _to_greater_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.lower_bound, 1)])


@_both(constraints.less_than)
def _to_less_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.upper_bound, -1)])


@_both(constraints.interval)
@_both(constraints.half_open_interval)
def _to_interval(constraint):
    lower, upper = constraint.lower_bound, constraint.upper_bound
    numbers_ = isinstance(lower, numbers.Number) and isinstance(upper, numbers.Number)
    if numbers_ and lower == 0 and upper == 1:
        return transforms.SigmoidTransform()
    return transforms.ComposeTransform([transforms.SigmoidTransform(),
                                        transforms.AffineTransform(lower, upper - lower)])


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint):
    return transforms.StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint):
    return transforms.SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint):
    return transforms.LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _transform_to_positive_definite(constraint):
    return transforms.PositiveDefiniteTransform()


@_both(constraints.corr_cholesky)
def _to_corr_cholesky(constraint):
    return transforms.CorrCholeskyTransform()


def _blockwise(registry):
    def cat(constraint):
        return transforms.CatTransform([registry(c) for c in constraint.cseq],
                                       constraint.dim, constraint.lengths)

    def stack(constraint):
        return transforms.StackTransform([registry(c) for c in constraint.cseq],
                                         constraint.dim)
    registry.register(constraints.cat, cat)
    registry.register(constraints.stack, stack)


_blockwise(biject_to)
_blockwise(transform_to)


from .. import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
