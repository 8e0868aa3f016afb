"""Run one program under hookgrad and PyTorch and compare what they return.

A scenario is ``fn(L)`` taking the library module (``hookgrad`` or ``torch``) and returning
plain Python built with ``py`` (tensors become lists). ``same_as_torch(fn)`` returns
hookgrad's result after checking it equals PyTorch's when torch is installed, so callers
can also assert exact values that hold without torch.
"""
import math

import pytest

import hookgrad

try:
    import torch
except ImportError:  # differential checks skip; the explicit asserts still run
    torch = None


def py(x):
    if x is None or isinstance(x, (bool, str, int)):
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else str(x)
    if isinstance(x, dict):
        return {str(k): py(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [py(v) for v in x]
    if hasattr(x, "detach") and hasattr(x, "tolist"):
        return py(x.detach().tolist())
    if hasattr(x, "tolist"):
        return py(x.tolist())
    raise TypeError(f"cannot convert {type(x).__name__}")


def graph(t):
    """The node names below ``t``'s ``grad_fn``, depth first in the edges' order, indented
    by depth (PyTorch's ``torch::autograd::`` prefix dropped)."""
    out = []

    def walk(fn, depth):
        if fn is not None:
            out.append("  " * depth + fn.name().replace("torch::autograd::", ""))
            for nxt, _ in fn.next_functions:
                walk(nxt, depth + 1)
    walk(t.grad_fn, 0)
    return out


def raises(fn, *args):
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001
        return {"raises": type(e).__name__, "message": str(e)}
    return {"returned": True}


def close(a, b, tol=1e-5):
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
            not isinstance(a, bool) and abs(a - b) <= tol + tol * abs(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) == {"raises", "message"} and set(b) == {"raises", "message"}:
            return a["raises"] == b["raises"]
        return a.keys() == b.keys() and all(close(a[k], b[k], tol) for k in a)
    return a == b


def same_as_torch(fn, tol=1e-5, names=True):
    """hookgrad's ``fn(hookgrad)``, checked against ``fn(torch)`` when torch is installed."""
    got = fn(hookgrad)
    if torch is not None:
        want = fn(torch)
        if not names:
            got_c, want_c = _strip(got), _strip(want)
        else:
            got_c, want_c = got, want
        assert close(got_c, want_c, tol), f"hookgrad: {got!r}\n   torch: {want!r}"
    return got


def raises_as_torch(call, exc, match):
    """``call(L)`` raises ``exc`` with a message matching ``match`` under hookgrad, and
    under PyTorch when it is installed."""
    for L in (hookgrad,) if torch is None else (hookgrad, torch):
        with pytest.raises(exc, match=match):
            call(L)


def _strip(x):
    if isinstance(x, str):
        return x.replace("torch::autograd::", "")
    if isinstance(x, list):
        return [_strip(v) for v in x]
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items()}
    return x


needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")
