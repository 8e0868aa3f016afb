"""Reductions and scans beyond ``reduction``: NaN-ignoring sums and means, aminmax,
cummax/cummin, logcumsumexp, quantiles, distances, diff, trapezoid, cov, corrcoef.

The ops PyTorch records as one node are table rows under its node names; the ones it
builds from other ops (nanmean, diff, quantile, cov, ...) are built here the same way.
"""
from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as np

from .._dtype import c_type_name, torch_kind
from .._tensor import Tensor
from .dispatch import apply
from .promotion import real_only, refuses_complex
from .parser_errors import not_a_dim
from .reduction import NOT_INT, _jdtype, _norm, _return_type, return_types
from .registry import FUNCTIONS, OpCall, defop, export, norm_dim, variants
from .shape import narrow, wrap_dim
from .stacking import cat

def _min_max_type():
    """``aminmax``'s ``(min, max)`` named tuple, printed as PyTorch's."""
    base = collections.namedtuple("aminmax", ["min", "max"])

    def __repr__(self):
        return f"hookgrad.return_types.aminmax(\nmin={self.min!r},\nmax={self.max!r})"
    return type("aminmax", (base,), {"__slots__": (), "__repr__": __repr__})


for _n in ("cummax", "cummin"):
    return_types[_n] = _return_type(_n)
return_types["aminmax"] = _min_max_type()


def _dims(input, dim):
    return None if dim is None or dim == () or dim == [] else norm_dim(dim)


_NANSUM = defop("nansum", refuses_complex(lambda x, dim, keepdim, dtype: jnp.nansum(
    x, axis=dim, keepdims=keepdim, dtype=dtype), RuntimeError,
    "nansum on CPU does not support complex inputs"), "NansumBackward0",
    names="self -> self dim=dim:tuple keepdim")


@export
def nansum(input, dim=None, keepdim=False, *, dtype=None) -> Tensor:
    """``nansum(input, dim=None, keepdim=False, *, dtype=None)``: :func:`sum` treating NaN
    as zero (its gradient there is zero)."""
    if dim.__class__ in NOT_INT:
        raise not_a_dim("nansum", dim, "tuple of ints")
    return apply(_NANSUM, (input,), {"dim": _dims(input, dim), "keepdim": bool(keepdim),
                                     "dtype": _jdtype(dtype)})


@export
def nanmean(input, dim=None, keepdim=False, *, dtype=None) -> Tensor:
    """``nanmean(input, dim=None, keepdim=False, *, dtype=None)``: the mean of the non-NaN
    elements (NaN where all are NaN)."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex "
                           f"dtype but got {_kind(input)}")
    count = FUNCTIONS["logical_not"](FUNCTIONS["isnan"](input)).sum(
        dim=dim, keepdim=keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def _kind(t):
    return torch_kind(t._data.dtype)


def _aminmax(x, dim, keepdim):
    return jnp.min(x, axis=dim, keepdims=keepdim), jnp.max(x, axis=dim, keepdims=keepdim)


_AMINMAX = defop("aminmax", real_only("aminmax_cpu", _aminmax), "AminmaxBackward0",
                 names="self -> self dim keepdim max=result1 min=result0")


@export
def aminmax(input, *, dim=None, keepdim=False):
    """``aminmax(input, *, dim=None, keepdim=False)``: ``(min, max)`` over ``dim`` (all
    elements without one), one node."""
    if dim.__class__ is bool:
        raise TypeError("aminmax(): argument 'dim' must be int, not bool")
    if input.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    d = None if dim is None else wrap_dim(dim, max(input.ndim, 1))
    if input.ndim == 0:
        d = None
    out = apply(_AMINMAX, (input,), {"dim": d, "keepdim": bool(keepdim)})
    return return_types["aminmax"](*out)


def _running_index(x, dim, better):
    """The index of the running extreme along ``dim`` (the last among ties, as PyTorch)."""
    idx = jax.lax.broadcasted_iota(jnp.int32, x.shape, dim)

    def pick(a, b):
        (va, ia), (vb, ib) = a, b
        take_b = better(vb, va) | (vb == va) | jnp.isnan(vb)
        take_b = take_b & ~(jnp.isnan(va) & ~jnp.isnan(vb))
        return jnp.where(take_b, vb, va), jnp.where(take_b, ib, ia)
    return jax.lax.associative_scan(pick, (x, idx), axis=dim)[1]


def _cum_extreme(better):
    def fwd(x, dim, index_dtype):
        if x.ndim == 0:
            return x, jnp.zeros((), index_dtype)
        idx = jax.lax.stop_gradient(_running_index(x, dim, better))
        return jnp.take_along_axis(x, idx, axis=dim), idx.astype(index_dtype)
    return fwd


_CUMMAX = defop("cummax", real_only("cummax_cpu", _cum_extreme(jnp.greater)), "CummaxBackward0",
                names="self -> self dim indices=result1")
_CUMMIN = defop("cummin", real_only("cummin_cpu", _cum_extreme(jnp.less)), "CumminBackward0",
                names="self -> self dim indices=result1")


def _index_dtype():
    from .. import _dtype
    return _dtype.to_jax(_dtype.int64)


@export
def cummax(input, dim):
    """``cummax(input, dim)``: ``(values, indices)`` of the running maximum along ``dim``
    (a NaN propagates; among ties the last index)."""
    out = apply(_CUMMAX, (input,), {"dim": wrap_dim(dim, max(input.ndim, 1)) if input.ndim
                                    else 0, "index_dtype": _index_dtype()})
    return return_types["cummax"](*out)


@export
def cummin(input, dim):
    """``cummin(input, dim)``: ``(values, indices)`` of the running minimum along ``dim``."""
    out = apply(_CUMMIN, (input,), {"dim": wrap_dim(dim, max(input.ndim, 1)) if input.ndim
                                    else 0, "index_dtype": _index_dtype()})
    return return_types["cummin"](*out)


_LOGCUMSUMEXP = defop("logcumsumexp", lambda x, dim: jax.lax.cumlogsumexp(x, axis=dim)
                      if x.ndim else x, "LogcumsumexpBackward0",
                      names="self -> self dim result")


@export
def logcumsumexp(input, dim) -> Tensor:
    """``logcumsumexp(input, dim)``: ``log(cumsum(exp(input), dim))``, computed stably."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for '
                                  f"'{_kind(input)}'")
    return apply(_LOGCUMSUMEXP, (input,), {"dim": wrap_dim(dim, max(input.ndim, 1))
                                           if input.ndim else 0})


# ---- distances
_DIST = defop("dist", lambda x, y, p: _norm(x - y, p, None, False), "DistBackward0",
              names="self other -> other p self result")


@export
def dist(input, other, p=2) -> Tensor:
    """``dist(input, other, p=2)``: the ``p``-norm of ``input - other`` (broadcast)."""
    return apply(_DIST, (input, other), {"p": float(p)})


def _cdist(x1, x2, p):
    return _norm(x1[..., :, None, :] - x2[..., None, :, :], p, -1, False)


_CDIST = defop("cdist", _cdist, "CdistBackward0", names="x1 x2 -> x1 x2 p result")


@export(method=False)
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """``cdist(x1, x2, p=2.0)``: the ``p``-norm distance between each row of ``x1``
    (``[..., P, M]``) and each row of ``x2`` (``[..., R, M]``): ``[..., P, R]``."""
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X{1 if x1.ndim < 2 else 2}"
                           f" got: {min(x1.ndim, x2.ndim)}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values")
    for i, x in ((1, x1), (2, x2)):
        if not x.dtype.is_floating_point:  # complex and integer tensors alike
            raise RuntimeError(f"cdist only supports floating-point dtypes, X{i} got: "
                               f"{torch_kind(x._arr.dtype)}")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {torch_kind(x1._arr.dtype)} but found "
                           f"{torch_kind(x2._arr.dtype)}")
    return apply(_CDIST, (x1, x2), {"p": float(p)})


# ---- built from other ops, as PyTorch builds them
@export
def diff(input, n=1, dim=-1, prepend=None, append=None) -> Tensor:
    """``diff(input, n=1, dim=-1, prepend=None, append=None)``: the ``n``-th forward
    difference along ``dim``, after concatenating ``prepend`` and ``append``."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    dim = wrap_dim(dim, input.ndim)
    parts = [t for t in (prepend, input, append) if t is not None]
    x = cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        m = x.shape[dim]
        if m == 0:
            break
        hi, lo = narrow(x, dim, 1, m - 1), narrow(x, dim, 0, m - 1)
        x = FUNCTIONS["logical_xor"](hi, lo) if x.dtype.name == "bool" else hi - lo
    return x


_QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(x, q, dim, keepdim, method, nan):
    fn = jnp.nanquantile if nan else jnp.quantile
    axis = None if dim is None else dim
    out = fn(x, q, axis=axis, keepdims=keepdim, method=method)
    if not nan:  # PyTorch's quantile is NaN where the slice has a NaN
        has = jnp.any(jnp.isnan(x), axis=axis, keepdims=keepdim)
        out = jnp.where(has, jnp.nan, out)
    return out


# NOTE: one node (JAX's quantile) where PyTorch records sort, gather and lerp nodes; it
# carries the name of PyTorch's last one
_QUANTILE = defop("quantile", _quantile, "SqueezeBackward4")


def _quantile_call(input, q, dim, keepdim, interpolation, nan):
    # NOTE: as PyTorch's, every refusal names quantile(), nanquantile's too
    if interpolation not in _QUANTILE_METHODS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if not input.dtype.is_floating_point:
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if not isinstance(q, Tensor):
        # checked in Python: under a trace (jax.jit of hookgrad.func) jnp would trace it
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {float(q):g}")
    elif not isinstance(qs := q._data, jax.core.Tracer) and np.any((np.asarray(qs) < 0) |
                                                                   (np.asarray(qs) > 1)):
        # (a traced q goes unchecked)
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    q_arg = q if isinstance(q, Tensor) else float(q)
    d = None if dim is None else wrap_dim(dim, max(input.ndim, 1))
    return apply(_QUANTILE, (input, q_arg), {"dim": d, "keepdim": bool(keepdim),
                                             "method": interpolation, "nan": nan})


@export
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear") -> Tensor:
    """``quantile(input, q, dim=None, keepdim=False, *, interpolation='linear')``: the
    ``q``-th quantiles (a number or a 1-d Tensor in ``[0, 1]``) over ``dim`` (all elements
    without one); NaN where the slice holds a NaN."""
    return _quantile_call(input, q, dim, keepdim, interpolation, False)


@export
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear") -> Tensor:
    """``nanquantile(...)``: :func:`quantile` ignoring NaNs."""
    return _quantile_call(input, q, dim, keepdim, interpolation, True)


# PyTorch's C++ scales by a number through the Scalar overloads, whose nodes are these
_MUL_SCALAR = defop("mul.Scalar", lambda x, other: x * other, "MulBackward1", (),
                    names="self -> other")
_DIV_SCALAR = defop("div.Scalar", lambda x, other: x / other, "DivBackward1", (),
                    names="self -> other")


@export(method=False)
def trapezoid(y, x=None, *, dx=None, dim=-1) -> Tensor:
    """``trapezoid(y, x=None, *, dx=None, dim=-1)``: the trapezoidal rule's integral of
    ``y`` along ``dim``, at points ``x`` or spacing ``dx`` (1 by default)."""
    dim = wrap_dim(dim, y.ndim)
    n = y.shape[dim]
    if n == 0:
        return y.sum(dim)
    pair = narrow(y, dim, 1, n - 1) + narrow(y, dim, 0, n - 1)
    if not isinstance(x, Tensor):
        step = (1.0 if dx is None else dx) if x is None else x
        return apply(_MUL_SCALAR, (pair.sum(dim),), {"other": step / 2})
    dxs = diff(x, dim=-1 if x.ndim == 1 else dim)
    if x.ndim == 1:
        dxs = dxs.reshape(*(n - 1 if k == dim else 1 for k in range(y.ndim)))
    return apply(_DIV_SCALAR, ((pair * dxs).sum(dim),), {"other": 2.0})


@export(method=False)
def trapz(y, x=None, *, dx=None, dim=-1) -> Tensor:
    """``trapz``: :func:`trapezoid`."""
    return trapezoid(y, x, dx=dx, dim=dim)


@export
def cov(input, *, correction=1, fweights=None, aweights=None) -> Tensor:
    """``cov(input, *, correction=1, fweights=None, aweights=None)``: the covariance matrix
    of the variables in the rows of ``input`` (observations in its columns)."""
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.ndim} dimensions")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = x.float()
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is None:
        avg = x.mean(1)
        norm = n - correction
    else:
        wsum = w.sum()
        avg = (x * w).sum(1) / wsum
        norm = wsum - correction * ((w * aweights).sum() / wsum if aweights is not None
                                    else 1)
    xc = x - avg[:, None]
    xw = xc if w is None else xc * w
    c = xw @ xc.t().conj() if x.dtype.is_complex else xw @ xc.t()
    c = c / FUNCTIONS["clamp_min"](Tensor._wrap(jnp.asarray(norm, x._data.dtype))
                                   if not isinstance(norm, Tensor) else norm, 0)
    return c.squeeze()


@export
def corrcoef(input) -> Tensor:
    """``corrcoef(input)``: Pearson's correlation coefficients of the rows of ``input``,
    clipped to ``[-1, 1]``."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    stddev = d.sqrt()
    c = c / stddev[:, None]
    c = c / stddev[None, :]
    return c.clamp(-1, 1)


def _renorm(x, p, dim, maxnorm):
    axes = tuple(d for d in range(x.ndim) if d != dim)
    norm = _norm(x, p, axes, True)
    # PyTorch's: slices over maxnorm scaled to it (with its 1e-7)
    return x * jnp.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).astype(x.dtype)


_RENORM = defop("renorm", _renorm, "RenormBackward0", names="self -> dim maxnorm p self")


@variants(inplace=True)
def renorm(input, p, dim, maxnorm) -> OpCall:
    """``renorm(input, p, dim, maxnorm)``: each slice along ``dim`` whose ``p``-norm exceeds
    ``maxnorm`` scaled down to norm ``maxnorm``."""
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    return _RENORM, (input,), {"p": float(p), "dim": wrap_dim(dim, input.ndim),
                               "maxnorm": float(maxnorm)}


return_types["histogram"] = collections.namedtuple("histogram", ["hist", "bin_edges"])


@export
def histogram(input, bins, *, range=None, weight=None, density=False):
    """``histogram(input, bins, *, range=None, weight=None, density=False)``: ``(hist,
    bin_edges)`` with ``bins`` equal bins over ``range`` (the data's by default) or the
    given 1-d edges; ``weight`` and ``density`` as NumPy's."""
    if isinstance(bins, Tensor) and bins.dtype != input.dtype:
        raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the "
                           f"same dtype, but got input with dtype {c_type_name(input.dtype)} "
                           f"and bins for dimension 0 with dtype {c_type_name(bins.dtype)}")
    if not input.dtype.is_floating_point:  # PyTorch's histogram is its histogramdd's kernel
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_kind(input)}'")
    edges = bins._data if isinstance(bins, Tensor) else int(bins)
    w = None if weight is None else weight._data
    hist, bin_edges = jnp.histogram(input._data.reshape(-1), edges, range=range,
                                    weights=None if w is None else w.reshape(-1),
                                    density=density)
    return return_types["histogram"](Tensor._wrap(hist.astype(input._data.dtype)),
                                     Tensor._wrap(bin_edges.astype(input._data.dtype)))
