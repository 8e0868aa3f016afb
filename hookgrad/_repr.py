"""``repr`` of a Tensor, formatted as PyTorch prints it."""
import jax
import numpy as np

from . import _dtype


def _float_formatter(values):
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return lambda v: str(v)
    absmax = np.abs(finite).max()
    nonzero = np.abs(finite[finite != 0])
    absmin = nonzero.min() if nonzero.size else 0.0
    if np.all(finite == np.round(finite)) and absmax < 1e8:
        width = max(len(f"{v:.0f}") for v in finite) + 1
        return lambda v: (f"{v:.0f}." if np.isfinite(v) else str(v)).rjust(width)
    if absmax >= 1e8 or (absmin and (absmin < 1e-4 or absmax / absmin > 1e3)):
        return lambda v: f"{v:.4e}"
    width = max(len(f"{v:.4f}") for v in finite)
    return lambda v: (f"{v:.4f}" if np.isfinite(v) else str(v)).rjust(width)


def _body(arr):
    if arr.dtype == np.bool_:
        fmt = {"bool": lambda v: (" True" if v else "False") if arr.size > 1 else str(bool(v))}
    elif arr.dtype.kind in "f" or arr.dtype.name == "bfloat16":
        arr = arr.astype(np.float64)
        fmt = {"float_kind": _float_formatter(arr.reshape(-1))}
    elif arr.dtype.kind == "c":
        fmt = None
    else:
        fmt = None
    if arr.ndim == 0:
        return fmt["float_kind"](arr.item()).strip() if fmt and "float_kind" in fmt else \
            (fmt["bool"](arr.item()) if fmt else str(arr.item()))
    return np.array2string(arr, separator=", ", prefix="tensor(", formatter=fmt,
                           threshold=1000, edgeitems=3, max_line_width=80)


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
