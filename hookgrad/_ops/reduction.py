"""Reductions and normalisations along dimensions (sum, mean, max, softmax, ...)."""
import collections

import jax
import jax.numpy as jnp

from .._dtype import to_jax
from .dispatch import OUT, apply
from .registry import defop, inplace_of, norm_dim, register

# NOTE: max/min over all elements split the gradient evenly among ties (JAX's rule and
# PyTorch's evenly_distribute_backward); with ``dim`` it goes to the returned index only.


def _take(x, idx, dim, keepdim):
    vals = jnp.take_along_axis(x, jnp.expand_dims(idx, dim), axis=dim)
    return vals if keepdim else jnp.squeeze(vals, dim)


def _max_dim(x, dim, keepdim):
    idx = jnp.argmax(x, axis=dim)
    return _take(x, idx, dim, keepdim), (jnp.expand_dims(idx, dim) if keepdim else idx)


def _min_dim(x, dim, keepdim):
    idx = jnp.argmin(x, axis=dim)
    return _take(x, idx, dim, keepdim), (jnp.expand_dims(idx, dim) if keepdim else idx)


def _var(x, dim, correction, keepdim):
    return jnp.var(x, axis=dim, ddof=correction, keepdims=keepdim)


def _std(x, dim, correction, keepdim):
    return jnp.std(x, axis=dim, ddof=correction, keepdims=keepdim)


def _norm(x, p, dim, keepdim):
    if p == "fro" or p == 2:
        return jnp.sqrt(jnp.sum(jnp.abs(x) ** 2, axis=dim, keepdims=keepdim))
    if p == float("inf"):
        return jnp.max(jnp.abs(x), axis=dim, keepdims=keepdim)
    if p == float("-inf"):
        return jnp.min(jnp.abs(x), axis=dim, keepdims=keepdim)
    if p == 0:
        return jnp.sum(x != 0, axis=dim, keepdims=keepdim).astype(x.dtype)
    if p == 1:
        return jnp.sum(jnp.abs(x), axis=dim, keepdims=keepdim)
    return jnp.sum(jnp.abs(x) ** p, axis=dim, keepdims=keepdim) ** (1.0 / p)


# name: (forward(x, **statics), node name, save)
SUM = defop("sum", lambda x, dim, keepdim, dtype: jnp.sum(x, axis=dim, keepdims=keepdim,
                                                          dtype=dtype), "SumBackward0", ())
SUM_DIM = defop("sum_dim", lambda x, dim, keepdim, dtype: jnp.sum(x, axis=dim, keepdims=keepdim,
                                                                  dtype=dtype), "SumBackward1", ())
MEAN = defop("mean", lambda x, dim, keepdim, dtype: jnp.mean(x, axis=dim, keepdims=keepdim,
                                                             dtype=dtype), "MeanBackward0", ())
MEAN_DIM = defop("mean_dim", lambda x, dim, keepdim, dtype: jnp.mean(
    x, axis=dim, keepdims=keepdim, dtype=dtype), "MeanBackward1", ())
PROD = defop("prod", lambda x, dim, keepdim: jnp.prod(x, axis=dim, keepdims=keepdim),
             "ProdBackward0")
VAR = defop("var", _var, "VarBackward0")
STD = defop("std", _std, "StdBackward0")
AMAX = defop("amax", lambda x, dim, keepdim: jnp.max(x, axis=dim, keepdims=keepdim),
             "AmaxBackward0")
AMIN = defop("amin", lambda x, dim, keepdim: jnp.min(x, axis=dim, keepdims=keepdim),
             "AminBackward0")
MAX_ALL = defop("max_all", jnp.max, "MaxBackward1")
MIN_ALL = defop("min_all", jnp.min, "MinBackward1")
MAX_DIM = defop("max_dim", _max_dim, "MaxBackward0")
MIN_DIM = defop("min_dim", _min_dim, "MinBackward0")
ARGMAX = defop("argmax", lambda x, dim, keepdim: jnp.argmax(x, axis=dim, keepdims=keepdim), None)
ARGMIN = defop("argmin", lambda x, dim, keepdim: jnp.argmin(x, axis=dim, keepdims=keepdim), None)
LOGSUMEXP = defop("logsumexp", lambda x, dim, keepdim: jax.nn.logsumexp(
    x, axis=dim, keepdims=keepdim), "LogsumexpBackward0")
CUMSUM = defop("cumsum", lambda x, dim: jnp.cumsum(x, axis=dim), "CumsumBackward0", ())
CUMPROD = defop("cumprod", lambda x, dim: jnp.cumprod(x, axis=dim), "CumprodBackward0")
NORM = defop("norm", _norm, "LinalgVectorNormBackward0")
ALL_ = defop("all", lambda x, dim, keepdim: jnp.all(x, axis=dim, keepdims=keepdim), None)
ANY_ = defop("any", lambda x, dim, keepdim: jnp.any(x, axis=dim, keepdims=keepdim), None)
COUNT_NONZERO = defop("count_nonzero", lambda x, dim: jnp.count_nonzero(x, axis=dim), None)
# NOTE: PyTorch saves softmax's result; backward from it: y * (g - sum(g * y))
SOFTMAX = defop("softmax", lambda x, dim: jax.nn.softmax(x, axis=dim), "SoftmaxBackward0", OUT,
                lambda y, g, dim: y * (g - jnp.sum(g * y, axis=dim, keepdims=True)))
LOG_SOFTMAX = defop("log_softmax", lambda x, dim: jax.nn.log_softmax(x, axis=dim),
                    "LogSoftmaxBackward0", OUT,
                    lambda y, g, dim: g - jnp.exp(y) * jnp.sum(g, axis=dim, keepdims=True))

values_indices = collections.namedtuple("return_types", ["values", "indices"])


def _jdtype(dtype):
    return None if dtype is None else to_jax(dtype)


def sum(input, dim=None, keepdim=False, *, dtype=None):
    dim = norm_dim(dim)
    op = SUM if dim is None else SUM_DIM
    return apply(op, (input,), {"dim": dim, "keepdim": keepdim, "dtype": _jdtype(dtype)})


def mean(input, dim=None, keepdim=False, *, dtype=None):
    dim = norm_dim(dim)
    if not (input.dtype.is_floating_point or input.dtype.is_complex) and dtype is None:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {_kind(input)}")
    op = MEAN if dim is None else MEAN_DIM
    return apply(op, (input,), {"dim": dim, "keepdim": keepdim, "dtype": _jdtype(dtype)})


def _kind(t):
    return t.dtype.name.capitalize()


def prod(input, dim=None, keepdim=False, *, dtype=None):
    x = input if dtype is None else input.to(dtype)
    return apply(PROD, (x,), {"dim": norm_dim(dim), "keepdim": keepdim})


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased in (None, True) else 0


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(unbiased, bool) is False and unbiased is not None and dim is None:
        dim, unbiased = unbiased, None
    return apply(VAR, (input,), {"dim": norm_dim(dim), "correction": _correction(unbiased,
                                                                                correction),
                                 "keepdim": keepdim})


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(unbiased, bool) is False and unbiased is not None and dim is None:
        dim, unbiased = unbiased, None
    return apply(STD, (input,), {"dim": norm_dim(dim), "correction": _correction(unbiased,
                                                                                correction),
                                 "keepdim": keepdim})


def _extreme(all_op, dim_op, pair_fn, input, dim, keepdim):
    from .._tensor import Tensor
    if isinstance(dim, Tensor):  # max(a, b): elementwise
        return pair_fn(input, dim)
    if dim is None:
        return apply(all_op, (input,))
    values, indices = apply(dim_op, (input,), {"dim": int(dim), "keepdim": keepdim})
    return values_indices(values, indices)


def max(input, dim=None, keepdim=False):
    from .pointwise import BINARY_FN
    return _extreme(MAX_ALL, MAX_DIM, BINARY_FN["maximum"], input, dim, keepdim)


def min(input, dim=None, keepdim=False):
    from .pointwise import BINARY_FN
    return _extreme(MIN_ALL, MIN_DIM, BINARY_FN["minimum"], input, dim, keepdim)


def amax(input, dim=(), keepdim=False):
    return apply(AMAX, (input,), {"dim": norm_dim(dim) or None, "keepdim": keepdim})


def amin(input, dim=(), keepdim=False):
    return apply(AMIN, (input,), {"dim": norm_dim(dim) or None, "keepdim": keepdim})


def argmax(input, dim=None, keepdim=False):
    return apply(ARGMAX, (input,), {"dim": norm_dim(dim), "keepdim": keepdim})


def argmin(input, dim=None, keepdim=False):
    return apply(ARGMIN, (input,), {"dim": norm_dim(dim), "keepdim": keepdim})


def logsumexp(input, dim, keepdim=False):
    return apply(LOGSUMEXP, (input,), {"dim": norm_dim(dim), "keepdim": keepdim})


def cumsum(input, dim, *, dtype=None):
    x = input if dtype is None else input.to(dtype)
    return apply(CUMSUM, (x,), {"dim": int(dim)})


def cumprod(input, dim, *, dtype=None):
    x = input if dtype is None else input.to(dtype)
    return apply(CUMPROD, (x,), {"dim": int(dim)})


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    if p is None:
        p = "fro"
    x = input if dtype is None else input.to(dtype)
    return apply(NORM, (x,), {"p": p, "dim": norm_dim(dim), "keepdim": keepdim})


def all(input, dim=None, keepdim=False):
    return apply(ALL_, (input,), {"dim": norm_dim(dim), "keepdim": keepdim})


def any(input, dim=None, keepdim=False):
    return apply(ANY_, (input,), {"dim": norm_dim(dim), "keepdim": keepdim})


def count_nonzero(input, dim=None):
    return apply(COUNT_NONZERO, (input,), {"dim": norm_dim(dim)})


def softmax(input, dim=None, dtype=None, _stacklevel=3):
    x = input if dtype is None else input.to(dtype)
    if dim is None:
        dim = 0 if x.ndim in (0, 1, 3) else 1  # PyTorch's legacy implicit choice
    return apply(SOFTMAX, (x,), {"dim": int(dim)})


def log_softmax(input, dim=None, dtype=None, _stacklevel=3):
    x = input if dtype is None else input.to(dtype)
    if dim is None:
        dim = 0 if x.ndim in (0, 1, 3) else 1
    return apply(LOG_SOFTMAX, (x,), {"dim": int(dim)})


for _f in (sum, mean, prod, var, std, max, min, amax, amin, argmax, argmin, logsumexp, cumsum,
           cumprod, norm, all, any, count_nonzero, softmax, log_softmax):
    register(_f)


def _cumsum_(self, dim):
    return apply(CUMSUM, (self,), {"dim": int(dim)}, out=self)


register(_cumsum_, "cumsum_", function=False)
del inplace_of
