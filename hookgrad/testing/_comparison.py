"""``assert_close``: Tensors, NumPy arrays, numbers and nested sequences or mappings of
them compared elementwise within dtype-dependent tolerances, with PyTorch's messages."""
from __future__ import annotations

import collections.abc
from typing import Any, Callable

import numpy as np

from .._tensor import Tensor

# (rtol, atol) by dtype name, as torch.testing's defaults; exact for other dtypes
_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5),
               "float32": (1.3e-6, 1e-5), "complex64": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7), "complex128": (1e-7, 1e-7)}


def _tolerances(*dtype_names):
    pairs = [_TOLERANCES.get(n, (0.0, 0.0)) for n in dtype_names]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _fail(text, msg, where):
    if where:
        text += f"\n\nThe failure occurred for item {''.join(f'[{w!r}]' for w in where)}"
    if callable(msg):
        text = msg(text)
    elif msg is not None:
        text = msg
    raise AssertionError(text)


def _is_number(x):
    return isinstance(x, (bool, int, float, complex, np.number))


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, msg: str | Callable[[str], str] | None = None):
    """Asserts that ``actual`` and ``expected`` are close: ``|actual - expected| <= atol +
    rtol * |expected|`` elementwise, with tolerances chosen by dtype when both are omitted.
    Tensors must also agree in shape and (``check_dtype``) dtype; sequences and mappings are
    compared item by item.

    Example::

        >>> hookgrad.testing.assert_close(x.grad, hookgrad.full_like(x, 2.0))
    """
    if (rtol is None) != (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, but "
                         f"got no {'rtol' if rtol is None else 'atol'}.")
    _compare(actual, expected, (), dict(rtol=rtol, atol=atol, equal_nan=equal_nan,
                                        check_dtype=check_dtype, check_stride=check_stride,
                                        check_device=check_device), msg)


def _compare(actual, expected, where, opts, msg):
    if isinstance(actual, (Tensor, np.ndarray)) and isinstance(expected, (Tensor, np.ndarray)):
        return _compare_arrays(actual, expected, where, opts, msg)
    if _is_number(actual) and _is_number(expected):
        return _compare_numbers(actual, expected, where, opts, msg)
    if (isinstance(actual, collections.abc.Sequence) and not isinstance(actual, str)
            and isinstance(expected, collections.abc.Sequence) and not isinstance(expected, str)):
        if len(actual) != len(expected):
            _fail(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                  msg, where)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, where + (i,), opts, msg)
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            _fail(f"The keys of the mappings do not match:\nMissing keys in the actual "
                  f"mapping: {sorted(set(expected) - set(actual), key=repr)}\nAdditional keys "
                  f"in the actual mapping: {sorted(set(actual) - set(expected), key=repr)}",
                  msg, where)
        for k in expected:
            _compare(actual[k], expected[k], where + (k,), opts, msg)
        return
    if actual is None and expected is None:
        return
    raise TypeError("No comparison pair was able to handle inputs of type "
                    f"{type(actual)} and {type(expected)}.")


def _attribute(name, a, e, msg, where):
    _fail(f"The values for attribute '{name}' do not match: {a} != {e}.", msg, where)


def _host(x):
    return np.asarray(x.detach().cpu().numpy()) if isinstance(x, Tensor) else np.asarray(x)


def _compare_arrays(actual, expected, where, opts, msg):
    from .. import _dtype
    a_dt = actual.dtype if isinstance(actual, Tensor) else _dtype.from_jax(actual.dtype)
    e_dt = expected.dtype if isinstance(expected, Tensor) else _dtype.from_jax(expected.dtype)
    a_shape, e_shape = tuple(actual.shape), tuple(expected.shape)
    if a_shape != e_shape:
        _attribute("shape", f"torch.Size({list(a_shape)})", f"torch.Size({list(e_shape)})",
                   msg, where)
    if opts["check_dtype"] and a_dt != e_dt:
        _attribute("dtype", str(a_dt).replace("hookgrad.", "torch."),
                   str(e_dt).replace("hookgrad.", "torch."), msg, where)
    if (opts["check_stride"] and isinstance(actual, Tensor) and isinstance(expected, Tensor)
            and actual.stride() != expected.stride()):
        _attribute("stride()", actual.stride(), expected.stride(), msg, where)
    rtol, atol = opts["rtol"], opts["atol"]
    if rtol is None:
        rtol, atol = _tolerances(a_dt.name, e_dt.name)
    a, e = _host(actual), _host(expected)
    exact = not (a_dt.is_floating_point or a_dt.is_complex
                 or e_dt.is_floating_point or e_dt.is_complex)
    _check_values(a, e, rtol, atol, opts["equal_nan"], exact, "Tensor-likes", msg, where)


def _compare_numbers(actual, expected, where, opts, msg):
    rtol, atol = opts["rtol"], opts["atol"]
    floating = isinstance(actual, (float, complex, np.floating, np.complexfloating)) or \
        isinstance(expected, (float, complex, np.floating, np.complexfloating))
    if rtol is None:
        rtol, atol = (1e-7, 1e-7) if floating else (0.0, 0.0)
    _check_values(np.asarray(actual), np.asarray(expected), rtol, atol, opts["equal_nan"],
                  not floating, "Scalars", msg, where)


def _check_values(a, e, rtol, atol, equal_nan, exact, kind, msg, where):
    # NOTE: differences in the pair's common floating dtype (float32 for integers), as
    # PyTorch prints them
    wide = np.result_type(a.dtype, e.dtype)
    if not np.issubdtype(wide, np.inexact):
        wide = np.float32
    a64, e64 = a.astype(wide), e.astype(wide)
    close = np.abs(a64 - e64) <= atol + rtol * np.abs(e64)
    if equal_nan:
        close |= np.isnan(a64) & np.isnan(e64)
    close |= (a64 == e64)  # equal infinities
    if close.all():
        return
    adiff = np.abs(a64 - e64)
    with np.errstate(divide="ignore", invalid="ignore"):
        rdiff = adiff / np.abs(e64)
    word = "equal" if exact else "close"
    allowed = (lambda tol: "") if exact else (lambda tol: f" (up to {tol} allowed)")
    if a.size == 1:
        ad, rd = adiff.reshape(()).item(), rdiff.reshape(()).item()
        if exact:
            ad = int(ad) if float(ad).is_integer() else ad
        text = (f"Scalars are not {word}!\n\nExpected {e.reshape(()).item()} but got "
                f"{a.reshape(()).item()}.\nAbsolute difference: {ad}{allowed(atol)}\n"
                f"Relative difference: {rd}{allowed(rtol)}")
        return _fail(text, msg, where)
    bad = ~close
    ai = np.unravel_index(np.nanargmax(np.where(bad, adiff, -1.0)) if not np.isnan(adiff[bad]).any()
                          else np.flatnonzero(bad & np.isnan(adiff))[0], a.shape)
    ri = np.unravel_index(np.nanargmax(np.where(bad, rdiff, -1.0)) if not np.isnan(rdiff[bad]).any()
                          else np.flatnonzero(bad & np.isnan(rdiff))[0], a.shape)
    amax, rmax = adiff[ai].item(), rdiff[ri].item()
    if exact:
        amax = int(amax) if float(amax).is_integer() else amax
    n, total = int(bad.sum()), a.size
    text = (f"{kind} are not {word}!\n\nMismatched elements: {n} / {total} "
            f"({100.0 * n / total:.1f}%)\nGreatest absolute difference: {amax} at index "
            f"{tuple(int(i) for i in ai)}{allowed(atol)}\nGreatest relative difference: {rmax} "
            f"at index {tuple(int(i) for i in ri)}{allowed(rtol)}")
    _fail(text, msg, where)
