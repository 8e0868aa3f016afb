"""``repr`` of a Tensor, formatted as PyTorch prints it."""
import math
import sys

import jax
import numpy as np

from . import _dtype


_DEFAULTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80}
_PROFILES = {"default": _DEFAULTS,
             "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
             "full": {**_DEFAULTS, "threshold": math.inf}}
_OPTS = {**_DEFAULTS, "sci_mode": None}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set how tensors print, as ``torch.set_printoptions``.

    ``profile`` (``"default"``, ``"short"``, ``"full"``) sets the first four at once; the
    arguments given override it. ``sci_mode`` True/False forces scientific notation on or
    off; None (also when left out) lets the values decide.

    Example::

        >>> hookgrad.set_printoptions(precision=2)
        >>> hookgrad.tensor([1.2345])
        tensor([1.23])
        >>> hookgrad.set_printoptions(profile="default")
    """
    if profile in _PROFILES:  # PyTorch ignores an unknown profile
        _OPTS.update(_PROFILES[profile])
    given = {"precision": precision, "threshold": threshold, "edgeitems": edgeitems,
             "linewidth": linewidth}
    _OPTS.update({k: v for k, v in given.items() if v is not None})
    _OPTS["sci_mode"] = sci_mode


def get_printoptions():
    """The current print options, a dict (``torch._tensor_str.get_printoptions``)."""
    return dict(_OPTS)


def _float_formatter(shown):
    """(format, width) for floats, by PyTorch's rules: integers print as ``3.``, wide
    ranges or large or tiny values in scientific notation, else ``precision`` digits."""
    nonzero = shown[np.isfinite(shown) & (shown != 0)]
    if nonzero.size == 0:  # zeros and non-finite only: PyTorch prints ``0.`` whatever the mode
        return (lambda v: f"{v:.0f}." if np.isfinite(v) else str(v)), 1
    absmax, absmin = np.abs(nonzero).max(), np.abs(nonzero).min()
    prec, sci = _OPTS["precision"], _OPTS["sci_mode"]
    if sci is None:
        sci = bool(absmax / absmin > 1e3 or absmax > 1e8 or absmin < 1e-4)
    if sci:
        fmt = lambda v: f"{v:.{prec}e}"  # noqa: E731
    elif np.all(nonzero == np.ceil(nonzero)):
        fmt = lambda v: f"{v:.0f}." if np.isfinite(v) else str(v)  # noqa: E731
    else:
        fmt = lambda v: f"{v:.{prec}f}"  # noqa: E731
    return fmt, max(len(fmt(v)) for v in nonzero)


def _formatter(shown):
    """(format, width) for the elements ``shown`` (all, or the edges when summarized)."""
    if shown.dtype.kind == "f":
        return _float_formatter(shown.reshape(-1))
    fmt = (lambda v: str(bool(v))) if shown.dtype == np.bool_ else str
    return fmt, max([len(fmt(v)) for v in shown.reshape(-1).tolist()] or [1])


def _complex_formatter(shown):
    """PyTorch's complex cells: the real part padded to the real parts' width, then the
    imaginary part with its sign and ``j`` (each part formatted by its own rules)."""
    fr, wr = _float_formatter(shown.real.astype(np.float64).reshape(-1))
    fi, wi = _float_formatter(shown.imag.astype(np.float64).reshape(-1))

    def fmt(v):
        im = (fi(v.imag).rjust(wi) + "j").lstrip()
        return fr(v.real).rjust(wr) + (im if im[0] in "+-" else "+" + im)
    return fmt, wr + wi + 1


def _body(arr):
    if arr.dtype.kind == "c":
        if arr.size == 0:
            return "[]"
        fmt, width = _complex_formatter(_shown(arr))
        if arr.ndim == 0:
            return fmt(arr.item())
        return _nested(arr, len("tensor("), arr.size > _threshold(), fmt, width, pad=False)
    if arr.dtype.kind == "f" or arr.dtype.name == "bfloat16":
        arr = arr.astype(np.float64)
    if arr.size == 0:
        return "[]"
    fmt, width = _formatter(_shown(arr))
    if arr.ndim == 0:
        return fmt(arr.item())
    return _nested(arr, len("tensor("), arr.size > _threshold(), fmt, width)


def _nested(arr, indent, summarize, fmt, width, pad=True):
    """PyTorch's layout: rows joined by ``,`` and one blank line per extra dimension
    (cells padded to ``width`` unless ``fmt`` pads its own parts: complex ones)."""
    edge = _OPTS["edgeitems"]
    cut = summarize and arr.shape[0] > 2 * edge
    if arr.ndim == 1:
        cells = [fmt(v).rjust(width) if pad else fmt(v) for v in arr.tolist()]
        if cut:
            cells = cells[:edge] + [" ..."] + cells[-edge:]
        per_line = max(1, (_OPTS["linewidth"] - indent) // (width + 2))
        lines = [", ".join(cells[i:i + per_line]) for i in range(0, len(cells), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = list(range(edge)) + [None] + list(range(arr.shape[0] - edge, arr.shape[0])) \
        if cut else range(arr.shape[0])
    parts = ["..." if i is None else _nested(arr[i], indent + 1, summarize, fmt, width, pad)
             for i in rows]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _threshold():
    threshold = _OPTS["threshold"]
    return sys.maxsize if threshold == math.inf else int(threshold)


def _shown(arr):
    """The elements a summarized print shows: PyTorch formats only those."""
    if arr.size <= _threshold():
        return arr
    edge = _OPTS["edgeitems"]
    for axis, n in enumerate(arr.shape):
        if n > 2 * edge:
            arr = np.concatenate([np.take(arr, range(edge), axis),
                                  np.take(arr, range(n - edge, n), axis)], axis)
    return arr


def _default_int():
    return _dtype.int64 if _dtype.x64_enabled() else _dtype.int32


def tensor_repr(t):
    arr = t._data
    if t.is_meta:  # as PyTorch: no values, the size always, the dtype unless the default
        dt = t.dtype
        extras = ["device='meta'", f"size={tuple(arr.shape)}"] + (
            [f"dtype={dt!r}"] if dt is not _dtype.get_default_dtype() else [])
        return "tensor(..." + "".join(", " + e for e in extras + _grad_extras(t)) + ")"
    if isinstance(arr, jax.core.Tracer):
        body = f"<traced {arr.aval.str_short()}>"
    else:
        body = _body(np.asarray(arr))
    extras = []
    dev = t.device
    if dev.type != "cpu":
        extras.append(f"device='{dev}'")
    if arr.size == 0 and arr.ndim != 1:
        extras.append(f"size={tuple(arr.shape)}")
    dt = t.dtype
    default = _dtype.get_default_dtype()
    complex_default = _dtype.complex128 if default is _dtype.float64 else _dtype.complex64
    # an empty tensor names any dtype but the default floating one, as PyTorch's
    if dt is not default and (arr.size == 0 or
                              dt not in (_default_int(), _dtype.bool, complex_default)):
        extras.append(f"dtype={dt!r}")
    return "tensor(" + body + "".join(", " + e for e in extras + _grad_extras(t)) + ")"


def _grad_extras(t):
    if t.grad_fn is not None:
        return [f"grad_fn=<{t.grad_fn.name()}>"]
    return ["requires_grad=True"] if t._requires_grad else []
