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


def _float_formatter(values):
    nonzero = np.abs(values[np.isfinite(values) & (values != 0)])
    if nonzero.size == 0:
        return lambda v: f"{v:.0f}." if np.isfinite(v) else str(v)
    absmax, absmin = nonzero.max(), nonzero.min()
    prec, sci = _OPTS["precision"], _OPTS["sci_mode"]
    if sci is None:  # PyTorch's rule: wide ranges, large or tiny values go scientific
        sci = bool(absmax / absmin > 1e3 or absmax > 1e8 or absmin < 1e-4)
    if sci:
        fmt = lambda v: f"{v:.{prec}e}"  # noqa: E731
    elif np.all(nonzero == np.ceil(nonzero)):
        fmt = lambda v: f"{v:.0f}." if np.isfinite(v) else str(v)  # noqa: E731
    else:
        fmt = lambda v: f"{v:.{prec}f}" if np.isfinite(v) else str(v)  # noqa: E731
    finite = values[np.isfinite(values)]
    width = max(len(fmt(v)) for v in finite)
    return lambda v: fmt(v).rjust(width)


def _body(arr):
    if arr.dtype == np.bool_:
        fmt = {"bool": lambda v: (" True" if v else "False") if arr.size > 1 else str(bool(v))}
    elif arr.dtype.kind in "f" or arr.dtype.name == "bfloat16":
        arr = arr.astype(np.float64)
        fmt = {"float_kind": _float_formatter(_shown(arr).reshape(-1))}
    elif arr.dtype.kind == "c":
        fmt = None
    else:
        fmt = None
    if arr.ndim == 0:
        return fmt["float_kind"](arr.item()).strip() if fmt and "float_kind" in fmt else \
            (fmt["bool"](arr.item()) if fmt else str(arr.item()))
    text = np.array2string(arr, separator=", ", prefix="tensor(", formatter=fmt,
                           threshold=_threshold(), edgeitems=_OPTS["edgeitems"],
                           max_line_width=_OPTS["linewidth"])
    return text.replace(", ..., ", ",  ..., ")  # PyTorch's spacing around the ellipsis


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
    if isinstance(arr, jax.core.Tracer):
        body = f"<traced {arr.aval.str_short()}>"
    else:
        body = _body(np.asarray(arr))
    extras = []
    dev = t.device
    if dev.type != "cpu":
        extras.append(f"device='{dev}'")
    dt = t.dtype
    if dt not in (_dtype.get_default_dtype(), _default_int(), _dtype.bool):
        extras.append(f"dtype={dt!r}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._requires_grad:
        extras.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + e for e in extras) + ")"
