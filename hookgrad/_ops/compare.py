"""Whole-tensor comparisons: ``isclose``, ``allclose``, ``equal`` (no gradient, no node).

``allclose`` and ``equal`` return Python bools, so they need concrete values: inside
``hookgrad.compile`` they raise as ``bool(tensor)`` does; use ``isclose(...).all()`` there.
"""
from __future__ import annotations

import jax.numpy as jnp

from .._tensor import Tensor
from .._dtype import torch_kind as _torch_kind
from .dispatch import apply
from .promotion import refuses_complex
from .registry import defop, export

ISCLOSE = defop("isclose", lambda a, b, rtol, atol, equal_nan: jnp.isclose(
    a, b, rtol=rtol, atol=atol, equal_nan=equal_nan), None)
EQUAL_ELEMENTS = defop("isclose_bool", jnp.equal, None)  # tolerances mean nothing for bools
# NOTE: PyTorch's equal compares values after type promotion (1 == 1.0 == True)
EQUAL = defop("equal", lambda a, b: jnp.array_equal(a, b), None)


def _check_other(name, other):
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")


@export
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    """``isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False)``: elementwise
    ``|input - other| <= atol + rtol * |other|`` (broadcast), as a bool tensor.

    >>> hookgrad.isclose(hookgrad.tensor([1.0, 2.0]), hookgrad.tensor([1.0 + 1e-7, 2.1]))
    tensor([ True, False])
    """
    _check_other("isclose", other)
    if input.dtype != other.dtype:
        raise RuntimeError(f"{_torch_kind(input._data.dtype)} did not match "
                           f"{_torch_kind(other._data.dtype)}")
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if tol < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {tol}")
    if input.dtype.name == "bool":
        return apply(EQUAL_ELEMENTS, (input, other))
    return apply(ISCLOSE, (input, other), {"rtol": float(rtol), "atol": float(atol),
                                           "equal_nan": bool(equal_nan)})


@export
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """``allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool``: whether
    :func:`isclose` holds everywhere (eager only: it returns a Python bool).

    >>> hookgrad.allclose(hookgrad.tensor([1.0, 2.0]), hookgrad.tensor([1.0, 2.0 + 1e-6]))
    True
    """
    _check_other("allclose", other)
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


@export
def equal(input, other) -> bool:
    """``equal(input, other) -> bool``: True if both have the same size and elements
    (False on a shape mismatch; NaN equals nothing). Eager only: it returns a Python bool.
    """
    _check_other("equal", other)
    if input.shape != other.shape:
        return False
    return bool(apply(EQUAL, (input, other)))




ISIN = defop("isin", refuses_complex(lambda e, t, invert: jnp.isin(e, t, invert=invert),
                                     RuntimeError,
                                     "Unsupported input type encountered for isin(): {kind}"),
             None)


@export(method=False)  # PyTorch has no Tensor.isin
def isin(elements, test_elements, *, assume_unique=False, invert=False) -> Tensor:
    """``isin(elements, test_elements, *, assume_unique=False, invert=False) -> Tensor``:
    a bool tensor shaped like ``elements``, True where the element occurs in
    ``test_elements`` (False there if ``invert``). Either argument may be a scalar.

    >>> hookgrad.isin(hookgrad.tensor([[1, 2], [3, 4]]), hookgrad.tensor([2, 3]))
    tensor([[False,  True],
            [ True, False]])
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments - got "
                        f"({type(elements).__name__}, {type(test_elements).__name__}), but "
                        "expected at least one of elements and test_elements to be a Tensor")
    like = elements if isinstance(elements, Tensor) else test_elements
    as_t = lambda x: x if isinstance(x, Tensor) else Tensor._wrap(jnp.asarray(x,
                                                                            like._data.dtype))
    if any(x.__class__ is bool or isinstance(x, Tensor) and x._arr.dtype.kind == "b"
           for x in (elements, test_elements)):
        raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    return apply(ISIN, (as_t(elements), as_t(test_elements)), {"invert": bool(invert)})
