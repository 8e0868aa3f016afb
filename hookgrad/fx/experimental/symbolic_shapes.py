"""``torch.fx.experimental.symbolic_shapes``: questions about symbolic sizes.

hookgrad has no symbolic sizes: a shape is always Python ints (``hookgrad.compile`` traces
once per shape), so each question has its concrete answer: a condition is what ``bool``
says, an int is concrete, and there are no free symbols. ``ShapeEnv`` is not implemented.
"""
from ... import _missing

__all__ = ["guard_or_false", "guard_or_true", "statically_known_true",
           "statically_known_false", "guard_size_oblivious", "is_concrete_int",
           "is_concrete_bool", "free_symbols", "free_unbacked_symbols", "has_free_symbols",
           "has_free_unbacked_symbols", "expect_true", "guard_int", "guard_float",
           "GuardOnDataDependentSymNode", "ShapeEnv"]


class GuardOnDataDependentSymNode(RuntimeError):
    """A guard on a size that depends on data (never raised: hookgrad's sizes are ints)."""


class ConstraintViolationError(RuntimeError):
    """A ``dynamic_shapes`` range that the example input breaks (``torch.export``)."""


def guard_or_false(a) -> bool:
    """The condition's value (``False`` where it cannot be known: never, here)."""
    return bool(a)


def guard_or_true(a) -> bool:
    """The condition's value (``True`` where it cannot be known: never, here)."""
    return bool(a)


def statically_known_true(x) -> bool:
    return bool(x)


def statically_known_false(x) -> bool:
    return not bool(x)


def guard_size_oblivious(expr) -> bool:
    return bool(expr)


def expect_true(a, skip=0) -> bool:
    return bool(a)


def guard_int(a) -> int:
    return int(a)


def guard_float(a) -> float:
    return float(a)


def is_concrete_int(a) -> bool:
    """Whether ``a`` is an int (hookgrad has no symbolic ints)."""
    return isinstance(a, int) and not isinstance(a, bool)


def is_concrete_bool(a) -> bool:
    return isinstance(a, bool)


def free_symbols(val) -> set:
    """The symbols ``val``'s sizes depend on: none."""
    return set()


def free_unbacked_symbols(x) -> set:
    return set()


def has_free_symbols(val) -> bool:
    return False


def has_free_unbacked_symbols(x) -> bool:
    return False


ShapeEnv = _missing.not_implemented_class("torch.fx.experimental.symbolic_shapes.ShapeEnv")

__getattr__ = _missing.module_getattr(__name__)
