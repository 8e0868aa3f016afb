"""``torch.utils.flop_counter``: count the FLOPs of matrix products, convolutions and
attention, forward and backward, per module.

:class:`FlopCounterMode` is a dispatch mode (``torch.utils._python_dispatch``): it counts
each op-table row it sees with PyTorch's formulas; a node's backward runs PyTorch's ops
(``mm``, ``convolution_backward``: ``_ops/derivatives.py``), and one without a PyTorch
formula there runs as one row, ``<op>_backward``, counted as PyTorch counts the products
its derivative runs (docs/differences.md). Attention (``scaled_dot_product_attention``) is counted with PyTorch's
attention formula, as PyTorch counts its GPU kernels (it does not count its CPU kernel).
"""
from __future__ import annotations

from collections import defaultdict
from math import prod
from typing import Any

from .._ops.op import Op
from .._tensor import Tensor
from ._python_dispatch import TorchDispatchMode
from .mod_tracker import ModTracker
from .. import _errors

__all__ = ["FlopCounterMode", "register_flop_formula"]


def _product(shapes, out, k_from):
    """``2 * out elements * contracted size`` of a product whose operand ``k_from`` is
    the left factor (0 for ``mm``, 1 for ``addmm``); a vector operand is PyTorch's
    ``mv``/``dot``, which it does not count."""
    a, b = shapes[k_from], shapes[k_from + 1]
    if len(a) < 2 or len(b) < 2:
        return 0
    return 2 * prod(out) * a[-1]


def _conv(shapes, out, statics, transposed):
    x, w = shapes[0], shapes[1]
    spatial = x[2:] if transposed else out[2:]  # PyTorch's: the input's for a transposed one
    return 2 * x[0] * prod(spatial) * prod(w[2:]) * w[0] * w[1]


def _attention(shapes):
    """``(batch*heads, query length, key length, head dim, value dim)``."""
    q, k, v = shapes[0], shapes[1], shapes[2]
    return prod(q[:-2]), q[-2], k[-2], q[-1], v[-1]


def _sdpa(shapes):
    bh, sq, sk, d, dv = _attention(shapes)
    return 2 * bh * sq * sk * (d + dv)  # scores = q k^T, then scores v


def _sdpa_backward(shapes):
    bh, sq, sk, d, dv = _attention(shapes)
    # PyTorch's: the scores again, the gradients of scores and v, then of q and k
    return 2 * bh * sq * sk * (3 * d + 2 * dv)


# row -> (forward FLOPs(shapes, out shape, statics), positions of the factors whose
# gradient is a product as large as the forward)
_ROWS = {
    "mm": (lambda s, o, st: _product(s, o, 0), (0, 1)),
    "bmm": (lambda s, o, st: _product(s, o, 0), (0, 1)),
    "matmul": (lambda s, o, st: _product(s, o, 0), (0, 1)),
    "linear": (lambda s, o, st: _product(s, o, 0), (0, 1)),
    "addmm": (lambda s, o, st: _product(s, o, 1), (1, 2)),
    "baddbmm": (lambda s, o, st: _product(s, o, 1), (1, 2)),
    "convolution": (lambda s, o, st: _conv(s, o, st, False), (0, 1)),
    "conv_transpose": (lambda s, o, st: _conv(s, o, st, True), (0, 1)),
    "scaled_dot_product_attention": (lambda s, o, st: _sdpa(s), ()),
}


def _backward_flops(op, statics, shapes, want, out):
    if op.name == "scaled_dot_product_attention":
        return _sdpa_backward(shapes)
    forward, factors = _ROWS[op.name]
    flops = forward(shapes, out, statics)
    total = 0
    for i in want:
        if i in factors:
            # a convolution's weight gradient sums over groups: PyTorch counts it once per group
            scale = statics.get("groups", 1) if op.name.startswith("conv") and i == 1 else 1
            total += flops * scale
    return total


def _shape(a):
    return tuple(a.shape) if isinstance(a, Tensor) else a


def _row_flops(func, args, kwargs, out):
    """The FLOPs of one op-table row call, or None for a row that is not counted."""
    op = getattr(func, "_op", None)
    if not isinstance(op, Op):  # a custom operator's
        return None
    if op.grad_of is None:
        found = _ROWS.get(op.name)
        if found is None:
            return None
        res = out[0] if isinstance(out, tuple) else out
        return found[0]([_shape(a) for a in args], tuple(res.shape), kwargs)
    forward, ck = op.grad_of
    if forward.name not in _ROWS or len(ck) != 3:
        return None
    statics, layout, want = dict(ck[0]), ck[1], ck[2]
    it = iter(args)
    shapes = [tuple(s[0]) if s.__class__ is tuple else _shape(next(it)) for s in layout]
    grad = next(it)
    return _backward_flops(forward, statics, shapes, want, tuple(grad.shape))


_REGISTRY = {}  # an OpOverloadPacket -> formula(*shapes, out_shape=..., **kwargs)


def register_flop_formula(targets, get_raw=False):
    """Register ``formula(*arg shapes, out_shape=..., **kwargs) -> int`` as the FLOP
    count of the ops ``targets`` (an ``OpOverloadPacket`` or a list of them); with
    ``get_raw``, the formula receives the arguments themselves and ``out_val``."""
    def register(formula):
        for target in targets if isinstance(targets, (list, tuple)) else [targets]:
            _REGISTRY[getattr(target, "overloadpacket", target)] = _wrap(formula, get_raw)
        return formula
    return register


def _wrap(formula, get_raw):
    if get_raw:
        return formula

    def on_shapes(*args, out_val=None, **kwargs):
        out = out_val[0] if isinstance(out_val, (tuple, list)) else out_val
        return formula(*[_shape(a) for a in args], out_shape=_shape(out), **kwargs)
    return on_shapes


class FlopCounterMode:
    """Counts the FLOPs run inside the block, in total and per module (a module's name
    is its path from the root module, ``"Global"`` the total).

    Example::

        >>> with FlopCounterMode(display=False) as counter:
        ...     model(x).sum().backward()
        >>> counter.get_total_flops()
    """

    def __init__(self, mods=None, depth: int = 2, display: bool = True,
                 custom_mapping: dict | None = None) -> None:
        self.flop_counts: dict[str, dict[Any, int]] = defaultdict(lambda: defaultdict(int))
        self.depth, self.display = depth, display
        self.mode = None
        if mods is not None:
            _errors.warn("mods argument is not needed anymore, you can stop passing it",
                         UserWarning)
        self.flop_registry = {**_REGISTRY, **{
            getattr(k, "overloadpacket", k): v if getattr(v, "_get_raw", False)
            else _wrap(v, False) for k, v in (custom_mapping or {}).items()}}
        self.mod_tracker = ModTracker()

    def get_total_flops(self) -> int:
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self) -> dict[str, dict[Any, int]]:
        """The counts, ``{module name: {op packet: FLOPs}}``."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth=None) -> str:
        """The counts as text: per module (to ``depth`` levels) and op, with its share of
        the total."""
        depth = self.depth if depth is None else depth
        total = max(self.get_total_flops(), 1)
        rows = [("Module", "FLOP", "% Total")]
        for mod, counts in self.flop_counts.items():
            if mod != "Global" and mod.count(".") + 1 > (depth or 999):
                continue
            n = sum(counts.values())
            rows.append((mod, str(n), f"{100 * n / total:.2f}%"))
            rows += [(f" - {op}", str(c), f"{100 * c / total:.2f}%") for op, c in counts.items()]
        width = [max(len(r[i]) for r in rows) for i in range(3)]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, width)) for r in rows)

    def __enter__(self):
        self.flop_counts.clear()
        self.mod_tracker.__enter__()
        self.mode = _FlopCounterMode(self)
        self.mode.__enter__()
        return self

    def __exit__(self, *args):
        self.mode.__exit__(*args)
        self.mode = None
        self.mod_tracker.__exit__()
        if self.display:
            print(self.get_table(self.depth))
        return False

    def _count(self, func, args, kwargs, out):
        packet = func.overloadpacket
        formula = self.flop_registry.get(packet)
        flops = formula(*args, **kwargs, out_val=out) if formula is not None \
            else _row_flops(func, args, kwargs, out)
        if flops:
            for parent in set(self.mod_tracker.parents):
                self.flop_counts[parent][packet] += flops


class _FlopCounterMode(TorchDispatchMode):
    def __init__(self, counter: FlopCounterMode) -> None:
        super().__init__()
        self.counter = counter

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        self.counter._count(func, args, kwargs, out)
        return out


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
