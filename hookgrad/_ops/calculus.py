"""Numerical calculus along a dim: ``cumulative_trapezoid`` (the running trapezoidal
integral) and ``gradient`` (central differences, one-sided at the edges). Both are
compositions of recorded ops, in the order PyTorch's kernels apply them, so their graphs
are PyTorch's (``CumsumBackward0 <- MulBackward1 <- AddBackward0``, ``CatBackward0`` of
``DivBackward1`` nodes)."""
from __future__ import annotations

import numbers

from .._tensor import Tensor
from .dispatch import apply
from .registry import export
from .shape import narrow, wrap_dim
from .stacking import cat
from .statistics import _DIV_SCALAR, _MUL_SCALAR, diff


@export(method=False)
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1) -> Tensor:
    """``cumulative_trapezoid(y, x=None, *, dx=None, dim=-1)``: the running trapezoidal
    integral of ``y`` along ``dim`` (one element shorter), at points ``x`` (a Tensor) or
    spacing ``dx`` (1 by default)."""
    if x is not None and not isinstance(x, Tensor):
        raise TypeError(f"cumulative_trapezoid() received an invalid combination of arguments "
                        f"- got (Tensor, {type(x).__name__}), but expected one of:\n * (Tensor "
                        "y, Tensor x, *, int dim = -1)\n * (Tensor y, *, Number dx = 1, int dim "
                        "= -1)\n")
    given, dim = int(dim), wrap_dim(dim, y.ndim)  # cumsum's node saves the dim as given
    n = y.shape[dim]
    if not (y.dtype.is_floating_point or y.dtype.is_complex):
        y = y.float()
    if n == 0:
        return y
    pair = narrow(y, dim, 1, n - 1) + narrow(y, dim, 0, n - 1)
    if x is None:
        step = 1.0 if dx is None else dx
        return apply(_MUL_SCALAR, (pair,), {"other": step / 2}).cumsum(given)
    if x.ndim == 1 and x.shape[0] != n:
        raise RuntimeError("cumulative_trapezoid: There must be one `x` value for each sample "
                           "point")
    dxs = diff(x, dim=-1 if x.ndim == 1 else dim)
    if x.ndim == 1:
        dxs = dxs.reshape(*(n - 1 if k == dim else 1 for k in range(y.ndim)))
    return apply(_DIV_SCALAR, ((dxs * pair).cumsum(given),), {"other": 2.0})


def _uniform(f, d, h, edge_order):
    """The gradient of ``f`` along ``d`` for samples ``h`` apart."""
    n = f.shape[d]

    def sl(start, length):
        return narrow(f, d, start, length)

    def div(t, s):
        return apply(_DIV_SCALAR, (t,), {"other": s})

    def mul(t, s):
        return apply(_MUL_SCALAR, (t,), {"other": s})
    interior = div(div(sl(2, n - 2) - sl(0, n - 2), 2.0), h)
    if edge_order == 1:
        first, last = div(sl(1, 1) - sl(0, 1), h), div(sl(n - 1, 1) - sl(n - 2, 1), h)
    else:
        first = div(mul(sl(0, 1), -1.5) + mul(sl(1, 1), 2.0) - mul(sl(2, 1), 0.5), h)
        last = div(mul(sl(n - 3, 1), 0.5) - mul(sl(n - 2, 1), 2.0) + mul(sl(n - 1, 1), 1.5), h)
    return cat([first, interior, last], d)


def _coordinates(f, d, x, edge_order):
    """The gradient of ``f`` along ``d`` sampled at the coordinates ``x`` (1-D): second
    order accurate inside, as NumPy's ``gradient``."""
    n = f.shape[d]
    shape = [1] * f.ndim

    def along(t):  # a 1-D tensor laid along d
        shape[d] = t.shape[0]
        return t.reshape(shape)

    def sl(start, length):
        return narrow(f, d, start, length)
    h = diff(x)
    h1, h2 = along(h[:-1]), along(h[1:])
    a, b, c = -h2 / (h1 * (h1 + h2)), (h2 - h1) / (h1 * h2), h1 / (h2 * (h1 + h2))
    # PyTorch's C++ sum a*f0 + b*f1 + c*f2 evaluates its products right to left: saved
    # tensors are packed (and nodes numbered) in that order
    fc = c * sl(2, n - 2)
    fb = b * sl(1, n - 2)
    interior = a * sl(0, n - 2) + fb + fc
    if edge_order == 1:
        first = (sl(1, 1) - sl(0, 1)) / h[0]  # the edges' spacings: 0-d, as PyTorch's
        last = (sl(n - 1, 1) - sl(n - 2, 1)) / h[-1]
    else:
        a, b = h[0], h[1]
        first = (sl(0, 1) * (-(2 * a + b) / (a * (a + b))) + sl(1, 1) * ((a + b) / (a * b))
                 + sl(2, 1) * (-a / (b * (a + b))))
        a, b = h[-2], h[-1]
        last = (sl(n - 3, 1) * (b / (a * (a + b))) + sl(n - 2, 1) * (-(a + b) / (a * b))
                + sl(n - 1, 1) * ((2 * b + a) / (b * (a + b))))
    return cat([first, interior, last], d)


def _spacings(input, spacing, dims, given_dim):
    if isinstance(spacing, (numbers.Number, Tensor)) and not (
            isinstance(spacing, Tensor) and spacing.ndim > 0):
        return [float(spacing)] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        if given_dim:
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or "
                               f"it's spacing and dim arguments to have the same length, but "
                               f"got a spacing argument of length {len(spacing)} and a dim "
                               f"argument of length {len(dims)}.")
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a "
                           f"list of length equal to 'self.dim() = {input.ndim}', since dim "
                           f"argument was not given, but got a list of length {len(spacing)}")
    return spacing


@export(method=False)
def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """``gradient(input, *, spacing=1, dim=None, edge_order=1)``: a tuple of the
    derivatives of ``input`` along each of ``dim`` (every dim by default), estimated by
    central differences inside and one-sided differences of order ``edge_order`` (1 or 2)
    at the edges. ``spacing``: the sample distance (a number, one per dim), or the sample
    coordinates (one 1-D Tensor per dim)."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    given = dim is not None
    dims = list(range(input.ndim)) if dim is None else (
        [dim] if isinstance(dim, int) else list(dim))
    dims = [wrap_dim(d, input.ndim) for d in dims]
    spacing = _spacings(input, spacing, dims, given)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    f = input if input.dtype.is_floating_point or input.dtype.is_complex else input.float()
    return tuple(_coordinates(f, d, s, edge_order) if isinstance(s, Tensor)
                 else _uniform(f, d, float(s), edge_order) for d, s in zip(dims, spacing))
