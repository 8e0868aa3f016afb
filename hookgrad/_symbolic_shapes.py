"""PyTorch's symbolic-shape names on plain numbers: ``SymInt``/``SymFloat``/``SymBool`` and
the ``sym_*`` helpers.

PyTorch's compiler traces sizes as symbols (a ``SymInt``); eagerly a size is a plain
``int`` and the helpers compute on numbers. hookgrad traces with JAX, whose shapes are
static, so sizes are always ints: the three classes exist for ``isinstance`` checks and
annotations (``isinstance(3, SymInt)`` is False, as in PyTorch's eager mode) and are never
made (docs/differences.md).
"""
from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

_NUMBERS = (np.integer, np.floating, builtins.int, builtins.float)
_FLOATS = (np.floating, builtins.float)
_INT64 = (-2 ** 63, 2 ** 63 - 1)


class _SymNumber:
    """A symbolic number of PyTorch's compiler. hookgrad's sizes are plain numbers: making
    one raises."""

    def __init__(self, node: Any):
        raise NotImplementedError(f"hookgrad does not implement torch.{type(self).__name__}(...) "
                                  "yet: its sizes are plain ints, never symbols (JAX's shapes "
                                  "are static)")


class SymInt(_SymNumber):
    """A symbolic ``int`` (a size traced by PyTorch's compiler); never made by hookgrad."""


class SymFloat(_SymNumber):
    """A symbolic ``float``; never made by hookgrad."""


class SymBool(_SymNumber):
    """A symbolic ``bool``; never made by hookgrad."""


for _cls in (SymInt, SymFloat, SymBool):
    _cls.__module__ = "hookgrad"


def sym_not(a) -> Any:
    """Logical negation of a (symbolic) bool: ``not a``."""
    return not a


def sym_float(a) -> Any:
    """``float(a)`` for a (symbolic) number."""
    return builtins.float(a)


def sym_int(a) -> Any:
    """``int(a)`` for a (symbolic) number, rounding toward zero."""
    return builtins.int(a)


def _numbers(a, b):
    for x in (a, b):
        if not isinstance(x, _NUMBERS):
            raise AssertionError(f"expected {_NUMBERS}, got {type(x)}")
    return isinstance(a, _FLOATS) or isinstance(b, _FLOATS)


def sym_max(a, b) -> Any:
    """``max(a, b)`` of two numbers without branching on ``a < b``; a float if either is."""
    wide = _numbers(a, b)
    m = builtins.max(a, b)
    return builtins.float(m) if wide else m


def sym_min(a, b) -> Any:
    """``min(a, b)`` of two numbers; a float if either is."""
    wide = _numbers(a, b)
    m = builtins.min(a, b)
    return builtins.float(m) if wide else m


def sym_sum(*args) -> Any:
    """The sum of numbers, given as arguments or as one list or tuple."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return builtins.sum(args)


def sym_ite(b, t, f) -> Any:
    """``t if b else f``, for a (symbolic) bool ``b`` and ``t``, ``f`` of one type."""
    if not isinstance(b, builtins.bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    if type(t) is not type(f):
        raise AssertionError(f"type mismatch: {type(t)} vs {type(f)}")
    return t if b else f


def sym_sqrt(a) -> Any:
    """``math.sqrt(a)`` for a (symbolic) number."""
    return math.sqrt(a)


def sym_fresh_size(expr) -> Any:
    """A size equal to ``expr`` that the compiler may not specialise on: eagerly ``expr``
    as a Python number (``tensor(expr).item()``)."""
    return np.asarray(expr).item()


def _check_range(size, lo, hi):
    if hi < lo:
        raise RuntimeError(f"Max must be greater than or equal to min. Got min={lo} max={hi}")
    if not lo <= size <= hi:
        raise RuntimeError(f"Invalid value range for {size} between [{lo}, {hi}].")


def sym_constrain_range(size, *, min=None, max=None) -> None:  # noqa: A002 - PyTorch's names
    """Assert that ``min <= size <= max`` (either bound may be None): eagerly, a check that
    raises ``RuntimeError`` when it fails."""
    _check_range(size, _INT64[0] if min is None else min, _INT64[1] if max is None else max)


def sym_constrain_range_for_size(size, *, min=None, max=None) -> None:  # noqa: A002
    """:func:`sym_constrain_range` for a value used as a size: ``min`` defaults to 0 and
    ``max`` must be above 2."""
    if max is not None and max <= 2:
        raise RuntimeError(f"Max value to constrain_range_for_size must be greater than 2. got: "
                           f"{max}")
    _check_range(size, 0 if min is None else min, _INT64[1] if max is None else max)
