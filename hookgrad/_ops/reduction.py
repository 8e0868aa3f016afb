"""Reductions and normalisations along dimensions (sum, mean, max, softmax, ...)."""
from __future__ import annotations

import collections
import inspect
import math
from typing import Any

import jax
import jax.numpy as jnp

from .. import _dtype, _errors
from .._dtype import to_jax
from .._host_value import Host
from .._tensor import Tensor
from .dispatch import OUT, apply, on_host
from .parser_errors import invalid_arguments, not_a, not_a_dim
from .linalg_decomp import check_floating
from .pointwise import _abs
from .promotion import REFUSED, bad_inplace_dtype, real_only
from .reduction_args import (ALL_DIMS, NOT_INT, _ALL_FORMS, _MAX_FORMS, _PROD_FORMS,
                             _SUM_FORMS, norm_dim_refused, not_an_int_dim, refused, with_extra)
from .registry import FUNCTIONS, defop, export, norm_dim
from .shape import wrap_dim

# NOTE: max/min over all elements split the gradient evenly among ties (JAX's rule and
# PyTorch's evenly_distribute_backward); with ``dim`` it goes to the returned index only.


def _take(x, idx, dim, keepdim):
    if x.ndim == 0:
        return x
    # with keepdim the indices keep the dim already (PyTorch saves them so shaped)
    vals = jnp.take_along_axis(x, idx if keepdim else jnp.expand_dims(idx, dim), axis=dim)
    return vals if keepdim else jnp.squeeze(vals, dim)


def _var(x, dim, correction, keepdim):
    # PyTorch divides by max(n - correction, 0) (NaN or inf when no degree of freedom is
    # left) but differentiates 2 (x - mean) / (n - correction) unclamped: below 0 the clamp
    # changes the value only
    dof = _count(x.shape, dim) - correction
    half = x.dtype if x.dtype in (jnp.float16, jnp.bfloat16) else None
    d = x.astype(jnp.float32) if half else x  # accumulated in float32, as jnp.var does
    d = d - jnp.mean(d, axis=dim, keepdims=True)
    sq = jnp.sum(jnp.square(d.real) + jnp.square(d.imag) if jnp.iscomplexobj(d) else d * d,
                 axis=dim, keepdims=keepdim)
    v = sq / dof if dof >= 0 else sq / dof + jax.lax.stop_gradient(sq / 0 - sq / dof)
    return v.astype(half) if half else v


def _count(shape, dim):
    """How many elements each result of a reduction over ``dim`` (int, tuple or None) takes."""
    dims = range(len(shape)) if dim is None else dim if isinstance(dim, tuple) else (dim,)
    return math.prod(shape[d] for d in dims)


def _safe_root(s, root):
    # root(s) whose gradient is 0 where s == 0 (PyTorch masks it there; JAX's is inf * 0);
    # NaN passes through, as PyTorch's does
    zero = s == 0
    return jnp.where(zero, jnp.zeros_like(s), root(jnp.where(zero, jnp.ones_like(s), s)))


def _std(x, dim, correction, keepdim):
    return _safe_root(_var(x, dim, correction, keepdim), jnp.sqrt)


def _norm(x, p, dim, keepdim):
    a = _abs(x)
    if p == "fro" or p == 2:
        return _safe_root(jnp.sum(a * a, axis=dim, keepdims=keepdim), jnp.sqrt)
    if p == float("inf"):
        return jnp.max(a, axis=dim, keepdims=keepdim)
    if p == float("-inf"):
        return jnp.min(a, axis=dim, keepdims=keepdim)
    if p == 0:
        return jnp.sum(x != 0, axis=dim, keepdims=keepdim).astype(x.dtype)
    if p == 1:
        return jnp.sum(a, axis=dim, keepdims=keepdim)
    return _safe_root(jnp.sum(a ** p, axis=dim, keepdims=keepdim), lambda s: s ** (1.0 / p))


# name: (forward(x, **statics), node name, save)
SUM = defop("sum", lambda x, dim, keepdim, dtype: jnp.sum(x, axis=dim, keepdims=keepdim,
                                                          dtype=dtype), "SumBackward0", (),
            names="self -> self_sym_sizes")
SUM_DIM = defop("sum_dim", lambda x, dim, keepdim, dtype: jnp.sum(x, axis=dim, keepdims=keepdim,
                                                                  dtype=dtype), "SumBackward1", (),
                names="self -> dim=dim:tuple keepdim self_sym_sizes")
MEAN = defop("mean", lambda x, dim, keepdim, dtype: jnp.mean(x, axis=dim, keepdims=keepdim,
                                                             dtype=dtype), "MeanBackward0", (),
             names="self -> self_sym_numel self_sym_sizes")
MEAN_DIM = defop("mean_dim", lambda x, dim, keepdim, dtype: jnp.mean(
    x, axis=dim, keepdims=keepdim, dtype=dtype), "MeanBackward1", (),
    names="self -> dim=dim:tuple keepdim self_sym_numel self_sym_sizes")
PROD = defop("prod", lambda x, dim, keepdim: jnp.prod(x, axis=dim, keepdims=keepdim),
             "ProdBackward0",
             names="self -> self result")
PROD_DIM = defop("prod_dim", lambda x, dim, keepdim: jnp.prod(x, axis=dim, keepdims=keepdim),
                 "ProdBackward1",
                 names="self -> self result dim keepdim")
VAR = defop("var", _var, "VarBackward0",
            names="self -> self dim=dim:tuple correction keepdim")
STD = defop("std", _std, "StdBackward0",
            names="self -> self result dim=dim:tuple correction keepdim")
AMAX = defop("amax", real_only("max_values_cpu", lambda x, dim, keepdim: jnp.max(
    x, axis=dim, keepdims=keepdim)),
             "AmaxBackward0",
             names="self -> self result dim=dim:tuple keepdim")
AMIN = defop("amin", real_only("min_values_cpu", lambda x, dim, keepdim: jnp.min(
    x, axis=dim, keepdims=keepdim)),
             "AminBackward0", names="self -> self result dim=dim:tuple keepdim")
MAX_ALL = defop("max_all", real_only("max_all", jnp.max), "MaxBackward1",
                 names="self -> self result")
MIN_ALL = defop("min_all", real_only("min_all", jnp.min), "MinBackward1",
                 names="self -> self result")
# NOTE: the values of max/min(dim) are a gather at the arg-extreme's indices (saved, as
# PyTorch saves ``indices``): the node has one output, as PyTorch's, not two
_DIM_NAMES = "self indices -> indices dim keepdim self_sym_sizes"
MAX_DIM = defop("max_dim", _take, "MaxBackward0", {0: (1,)}, nondiff=(1,), names=_DIM_NAMES)
MIN_DIM = defop("min_dim", _take, "MinBackward0", {0: (1,)}, nondiff=(1,), names=_DIM_NAMES)
_NO_COMPLEX = "{}(): does not support complex input"
ARGMAX = defop("argmax", real_only("argmax", lambda x, dim, keepdim: jnp.argmax(
    x, axis=dim, keepdims=keepdim), _NO_COMPLEX, RuntimeError), None)
ARGMIN = defop("argmin", real_only("argmin", lambda x, dim, keepdim: jnp.argmin(
    x, axis=dim, keepdims=keepdim), _NO_COMPLEX, RuntimeError), None)
LOGSUMEXP = defop("logsumexp", lambda x, dim, keepdim: jax.nn.logsumexp(
    x, axis=dim, keepdims=keepdim), "LogsumexpBackward0",
    names="self -> self result dim=dim:tuple keepdim")


def _running(f):
    # a 0-d input is its own running total
    return lambda x, dim: f(x, axis=dim) if x.ndim else x


def _given_dim(dim, ndim, name):
    """``dim`` of ``name`` range-checked and kept as given, as the running ops' nodes save
    it."""
    if dim.__class__ in NOT_INT or dim is None:
        raise not_a_dim(name, dim)
    wrap_dim(int(dim), ndim)
    return int(dim)


CUMSUM = defop("cumsum", _running(jnp.cumsum), "CumsumBackward0", (), names="self -> dim")
CUMPROD = defop("cumprod", _running(jnp.cumprod), "CumprodBackward0",
                names="self -> self result dim")
VAR_MEAN = defop("var_mean", lambda x, dim, correction, keepdim: (
    _var(x, dim, correction, keepdim), jnp.mean(x, axis=dim, keepdims=keepdim)),
    "VarMeanBackward0",
    names="self -> self dim=dim:tuple correction keepdim")
STD_MEAN = defop("std_mean", lambda x, dim, correction, keepdim: (
    _std(x, dim, correction, keepdim), jnp.mean(x, axis=dim, keepdims=keepdim)),
    "StdMeanBackward0", names="self -> self result0=result dim=dim:tuple correction keepdim")
NORM = defop("norm", _norm, "LinalgVectorNormBackward0",
             names="self -> self result ord=p dim=dim:tuple keepdim")
TRACE = defop("trace", lambda x, dtype: jnp.trace(x, dtype=dtype), "TraceBackward0", (),
              names="self -> self_sym_sizes")
# NOTE: of a uint8 input PyTorch gives uint8 (0 or 1), of any other dtype bool
_truth_of = lambda x, r: r.astype(jnp.uint8) if x.dtype == jnp.uint8 else r
ALL_ = defop("all", lambda x, dim, keepdim: _truth_of(x, jnp.all(x, axis=dim, keepdims=keepdim)),
             None)
ANY_ = defop("any", lambda x, dim, keepdim: _truth_of(x, jnp.any(x, axis=dim, keepdims=keepdim)),
             None)
COUNT_NONZERO = defop("count_nonzero", lambda x, dim: jnp.count_nonzero(x, axis=dim), None)
# NOTE: PyTorch saves softmax's result; backward from it: y * (g - sum(g * y))
SOFTMAX = defop("softmax", lambda x, dim: jax.nn.softmax(x, axis=dim), "SoftmaxBackward0", OUT,
                lambda y, g, dim: y * (g - jnp.sum(g * y, axis=dim, keepdims=True)),
                names="self -> result dim")
LOG_SOFTMAX = defop("log_softmax", lambda x, dim: jax.nn.log_softmax(x, axis=dim),
                    "LogSoftmaxBackward0", OUT,
                    lambda y, g, dim: g - jnp.exp(y) * jnp.sum(g, axis=dim, keepdims=True),
                    names="self -> result dim")


def _return_type(name):
    """A ``(values, indices)`` named tuple printed as PyTorch's ``torch.return_types.<name>``."""
    base = collections.namedtuple(name, ["values", "indices"])

    def __repr__(self):
        return f"hookgrad.return_types.{name}(\nvalues={self.values!r},\nindices={self.indices!r})"
    cls = type(name, (base,), {"__slots__": (), "__repr__": __repr__})
    cls.__module__ = "hookgrad.return_types"
    cls.__qualname__ = name
    return cls


return_types = {n: _return_type(n) for n in ("max", "min")}
values_indices = return_types["max"]  # kept for callers of the old name


def _jdtype(dtype):
    return None if dtype is None else to_jax(dtype)


def _dims(dim, ndim):
    """``dim`` (int, sequence or None) wrapped into ``[0, ndim)``, with PyTorch's IndexError;
    ``()`` for a 0-d tensor, which has no axis to name to JAX (its dim 0 or -1 is itself)."""
    if dim.__class__ is int and 0 <= dim < ndim:  # a loop's ``pred.argmax(1)``: as it is
        return dim  # (the general way costs a microsecond, more than the op on the host)
    dim = norm_dim(dim)
    if dim is None:
        return None
    if isinstance(dim, tuple):
        dim = tuple(wrap_dim(d, ndim) for d in dim)
    else:
        dim = wrap_dim(dim, ndim)
    return dim if ndim else ()


def _held_whole(op, input, keepdim):
    """``op`` (sum or mean) of all of ``input`` by its NumPy form when ``input`` is a plain
    float Tensor held on the host (``_host_value.py``): a loop's ``x.sum().item()``, with
    the statics the full path builds for it, less its parsing; else None (the full path,
    its checks and errors). An integer or bool input's sum too (a collate's
    ``labels.sum()``): the host rule sums it in int64, as ``_int_accumulator`` asks."""
    if input.__class__ is not Tensor or (a := input._arr).__class__ is not Host or \
            (k := a.np.dtype.kind) != "f" and (op is not SUM or k not in "biu"):
        return None
    return on_host(op, (input,), {"dim": None, "keepdim": keepdim, "dtype": None})


def _int_accumulator(input, dtype):
    # PyTorch accumulates integer and bool inputs in int64 (int32 without JAX's x64)
    if dtype is None and not (input.dtype.is_floating_point or input.dtype.is_complex):
        return _dtype.int64
    return dtype


_DIM_KEEPDIM = frozenset(("dim", "keepdim"))


def _sum_form(as_method):
    """``sum``'s function (``as_method``: its method): one body, whose parser errors differ
    by form (``with_extra``)."""
    by_keyword = _DIM_KEEPDIM if as_method else _DIM_KEEPDIM | {"input"}
    # NOTE: ``dim`` and ``keepdim`` positional only, a keyword one in ``kwargs``, so that a
    # refused call is worded as it was given (``sum(1, keepdim=1)`` against ``sum(1, 1)``):
    # a ``dim=`` pays a few tests and one C call
    def sum(input=ALL_DIMS, dim=ALL_DIMS, keepdim=False, /, *extra, dtype=None,
            **kwargs) -> Tensor:
        """``sum(input, dim=None, keepdim=False, *, dtype=None)``; integer and bool inputs
        are summed as int64."""
        given = kwargs
        if kwargs or extra:
            if extra or not kwargs.keys() <= by_keyword or "dim" in kwargs and (
                    dim is not ALL_DIMS) or "keepdim" in kwargs and keepdim is not False or \
                    ("input" in kwargs) == (input is not ALL_DIMS):  # (twice, or neither)
                raise with_extra("sum", _SUM_FORMS, as_method, input, dim, keepdim, extra,
                                 dtype, kwargs)
            if "dim" in kwargs:  # (no call: a ``dim=`` is common)
                dim = kwargs["dim"]
            if "keepdim" in kwargs:
                keepdim = kwargs["keepdim"]
            if "input" in kwargs:
                input = kwargs["input"]
        if dim is ALL_DIMS and keepdim is False and dtype.__class__ is not str and \
                input is not ALL_DIMS:
            dim = None
        elif dim is ALL_DIMS or dim.__class__ in NOT_INT or keepdim.__class__ is not bool \
                or dtype.__class__ is str:  # (those given by keyword named so)
            raise with_extra("sum", _SUM_FORMS, as_method,
                             ALL_DIMS if "input" in given else input,
                             ALL_DIMS if "dim" in given else dim,
                             False if "keepdim" in given else keepdim, (), dtype, given)
        if dim is None and dtype is None and \
                (res := _held_whole(SUM, input, keepdim)) is not None:
            return res
        dtype = _int_accumulator(input, dtype)
        dim = _dims(dim, input.ndim)
        op = SUM if dim is None else SUM_DIM
        if dim == ():  # an empty dim list reduces every dimension (PyTorch's legacy rule)
            dim = None
        return apply(op, (input,), {"dim": dim, "keepdim": keepdim, "dtype": _jdtype(dtype)})
    sum.__qualname__ = "sum"  # (Python's own errors name it)
    sum.__signature__ = inspect.signature(  # PyTorch's (for the stubs and ``inspect``)
        lambda input, dim=ALL_DIMS, keepdim=False, *, dtype=None: None).replace(
        return_annotation="Tensor")
    return sum


sum = export(_sum_form(False), method=False)
export(_sum_form(True), function=False)


@export
def trace(input) -> Tensor:
    """``trace(input)``: the sum of the main diagonal of a 2-D ``input`` (integer and bool
    inputs summed as int64)."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return apply(TRACE, (input,), {"dtype": _jdtype(_int_accumulator(input, None))})


@export
def mean(input, dim=ALL_DIMS, keepdim=False, *, dtype=None) -> Tensor:
    """``mean(input, dim=None, keepdim=False, *, dtype=None)`` (floating/complex only)."""
    if dim is ALL_DIMS and keepdim is False and dtype.__class__ is not str:
        dim = None
    elif dim is ALL_DIMS or dim.__class__ in NOT_INT or keepdim.__class__ is not bool \
            or dtype.__class__ is str:
        raise refused("mean", _SUM_FORMS, dim, keepdim, dtype)
    if dim is None and dtype is None and (res := _held_whole(MEAN, input, keepdim)) is not None:
        return res
    dim = _dims(dim, input.ndim)
    dt = input.dtype  # (read once: a model's norms call mean per layer)
    if not (dt.is_floating_point or dt.is_complex) and dtype is None:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {_kind(input)}")
    op = MEAN if dim is None else MEAN_DIM
    if dim == ():
        dim = None
    return apply(op, (input,), {"dim": dim, "keepdim": keepdim, "dtype": _jdtype(dtype)})


def _kind(t):
    from .._dtype import torch_kind as _torch_kind
    return _torch_kind(t._data.dtype)


@export
def prod(input, dim=ALL_DIMS, keepdim=False, *, dtype=None) -> Tensor:
    """``prod(input, dim=None, keepdim=False, *, dtype=None)`` (``dim`` an int, or left out:
    PyTorch's ``prod`` takes no None)."""
    if dim is ALL_DIMS and keepdim is False and dtype.__class__ is not str:
        dim = None
    elif dim is ALL_DIMS or dim is None or dim.__class__ in NOT_INT or keepdim.__class__ is not bool \
            or dtype.__class__ is str:
        raise refused("prod", _PROD_FORMS, dim, keepdim, dtype)
    dtype = _int_accumulator(input, dtype)
    x = input if dtype is None else input.to(dtype)
    if dim is None:
        return apply(PROD, (x,), {"dim": None, "keepdim": False})
    return apply(PROD_DIM, (x,), {"dim": wrap_dim(int(dim), x.ndim), "keepdim": keepdim})


_VAR_FORMS = ("(tuple of ints dim, bool unbiased = True, bool keepdim = False)",
              "(tuple of ints dim = None, *, Number correction = None, bool keepdim = False)",
              "(bool unbiased = True)")


def _var_refused(name, input, args, given):
    kw = {k: v for k, v in zip(("dim", "unbiased", "keepdim", "correction"), given)
          if v is not None and v is not ALL_DIMS}
    if name.endswith("_mean"):  # function forms only: PyTorch's message shows the input
        forms = tuple(f"(Tensor input, {f[1:]}" for f in _VAR_FORMS)
        return invalid_arguments(name, forms, input, *args, **kw)
    return invalid_arguments(name, _VAR_FORMS, *args, **kw)


def _var_args(name, input, args, dim, unbiased, keepdim, correction):
    """The statics of ``name`` (var, std, var_mean, std_mean) called with the positional
    ``args`` (``dim, unbiased, keepdim``) and the keywords: PyTorch's parser takes a bool
    first positional alone as the legacy ``unbiased`` and refuses a keyword ``dim=True``,
    so the functions take their positional arguments as ``*args`` to tell the two apart."""
    given = (dim, unbiased, keepdim, correction)  # NOTE: no call on a valid call's path
    if args:
        first, *rest = args
        if dim is not ALL_DIMS or rest[2:] or rest and unbiased is not None or \
                rest[1:] and keepdim is not None or first.__class__ is bool and (
                    rest or unbiased is not None or keepdim is not None or
                    correction is not None):
            raise _var_refused(name, input, args, given)
        if first.__class__ is bool:  # legacy var(input, unbiased)
            dim, unbiased = None, first
        else:
            dim = first
            if rest:
                unbiased = rest[0]
            if rest[1:]:
                keepdim = rest[1]
    if dim is ALL_DIMS:
        dim = None
    elif dim.__class__ in NOT_INT or dim.__class__ in (tuple, list) and dim and \
            dim[0].__class__ is bool:
        raise _var_refused(name, input, args, given)
    if keepdim is None:
        keepdim = False
    if correction is None:
        correction = 1 if unbiased in (None, True) else 0
    elif unbiased is not None:
        raise RuntimeError("var(): cannot pass both unbiased and correction")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dim = _dims(dim, input.ndim)
    if _count(tuple(input.shape), dim) - correction <= 0:
        _errors.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                     "less than the reduction factor (input numel divided by output numel).",
                     UserWarning)
    return {"dim": dim, "correction": correction, "keepdim": keepdim}


@export
def var(input, *args, dim=ALL_DIMS, unbiased=None, keepdim=None,
        correction=None) -> Tensor:
    """``var(input, dim=None, *, correction=1, keepdim=False)`` (also the legacy
    ``unbiased`` forms): variance with Bessel's correction by default."""
    return apply(VAR, (input,),
                 _var_args("var", input, args, dim, unbiased, keepdim, correction))


@export
def std(input, *args, dim=ALL_DIMS, unbiased=None, keepdim=None,
        correction=None) -> Tensor:
    """``std(input, dim=None, *, correction=1, keepdim=False)``: ``sqrt(var(...))``; its
    gradient is 0 where the result is 0."""
    return apply(STD, (input,),
                 _var_args("std", input, args, dim, unbiased, keepdim, correction))


@export(method=False)
def var_mean(input, *args, dim=ALL_DIMS, unbiased=None, keepdim=None,
             correction=None) -> tuple[Tensor, Tensor]:
    """``var_mean(input, dim=None, *, correction=1, keepdim=False)`` (also the legacy
    ``unbiased`` forms): the tuple ``(var(...), mean(...))`` over ``dim``, one node.

    >>> hookgrad.var_mean(hookgrad.tensor([1.0, 2.0, 3.0]))
    (tensor(1.), tensor(2.))
    """
    return apply(VAR_MEAN, (input,),
                 _var_args("var_mean", input, args, dim, unbiased, keepdim, correction))


@export(method=False)
def std_mean(input, *args, dim=ALL_DIMS, unbiased=None, keepdim=None,
             correction=None) -> tuple[Tensor, Tensor]:
    """``std_mean(input, dim=None, *, correction=1, keepdim=False)``: the tuple
    ``(std(...), mean(...))``; the std's gradient is 0 where it is 0."""
    return apply(STD_MEAN, (input,),
                 _var_args("std_mean", input, args, dim, unbiased, keepdim, correction))


def _extreme(name, all_op, dim_op, pair_fn, input, dim, keepdim):
    if isinstance(dim, Tensor):  # max(a, b): elementwise
        return pair_fn(input, dim)
    if dim is ALL_DIMS and keepdim is False:
        return apply(all_op, (input,))
    if dim is ALL_DIMS or dim is None or dim.__class__ in NOT_INT or \
            dim.__class__ in (list, tuple):
        raise refused(name, _MAX_FORMS, dim, keepdim)
    d = wrap_dim(int(dim), input.ndim)
    if input._arr.dtype.kind == "c":  # (ARGMAX's own refusal names argmax)
        raise RuntimeError(_NO_COMPLEX.format(name))
    if input.ndim == 0:  # a 0-d input is its own extreme, at index 0
        indices = Tensor._wrap(jnp.zeros((), to_jax(_dtype.int64)))
    else:
        arg = ARGMAX if name == "max" else ARGMIN
        indices = apply(arg, (input,), {"dim": d, "keepdim": bool(keepdim)})
    values = apply(dim_op, (input, indices), {"dim": d, "keepdim": keepdim})
    return return_types[name](values, indices)


@export
def max(input, dim=ALL_DIMS, keepdim=False) -> Any:
    """``max(input)``: the largest element (gradient split evenly among ties);
    ``max(input, dim, keepdim=False)``: a ``(values, indices)`` named tuple;
    ``max(input, other)``: ``maximum``."""
    return _extreme("max", MAX_ALL, MAX_DIM, FUNCTIONS["maximum"], input, dim, keepdim)


@export
def min(input, dim=ALL_DIMS, keepdim=False) -> Any:
    """``min(input)``, ``min(input, dim, keepdim=False)`` -> ``(values, indices)``,
    ``min(input, other)``: as :func:`max`."""
    return _extreme("min", MIN_ALL, MIN_DIM, FUNCTIONS["minimum"], input, dim, keepdim)


def _amax_dims(dim, ndim):
    dim = _dims(dim, ndim)
    # () reduces over every dimension (and is what a 0-d input's dim becomes: over all of
    # it, its only index is 0)
    return None if dim == () else dim


@export
def amax(input, dim=(), keepdim=False) -> Tensor:
    """``amax(input, dim=(), keepdim=False)``: maxima over ``dim`` (all dims by default);
    the gradient is split evenly among ties."""
    if dim.__class__ in NOT_INT:
        raise not_a_dim("amax", dim, "tuple of ints")
    return apply(AMAX, (input,), {"dim": _amax_dims(dim, input.ndim), "keepdim": keepdim})


@export
def amin(input, dim=(), keepdim=False) -> Tensor:
    """``amin(input, dim=(), keepdim=False)``: as :func:`amax`, for minima."""
    if dim.__class__ in NOT_INT:
        raise not_a_dim("amin", dim, "tuple of ints")
    return apply(AMIN, (input,), {"dim": _amax_dims(dim, input.ndim), "keepdim": keepdim})


@export
def argmax(input, dim=None, keepdim=False) -> Tensor:
    if dim.__class__ in NOT_INT:
        raise not_a_dim("argmax", dim)
    return apply(ARGMAX, (input,), {"dim": _amax_dims(dim, input.ndim), "keepdim": keepdim})


@export
def argmin(input, dim=None, keepdim=False) -> Tensor:
    if dim.__class__ in NOT_INT:
        raise not_a_dim("argmin", dim)
    return apply(ARGMIN, (input,), {"dim": _amax_dims(dim, input.ndim), "keepdim": keepdim})


@export
def logsumexp(input, dim, keepdim=False) -> Tensor:
    if dim is None or dim.__class__ in NOT_INT:
        raise not_a_dim("logsumexp", dim, "tuple of ints")
    return apply(LOGSUMEXP, (input,), {"dim": _dims(dim, input.ndim), "keepdim": keepdim})


@export
def cumsum(input, dim, *, dtype=None) -> Tensor:
    dtype = _int_accumulator(input, dtype)
    x = input if dtype is None else input.to(dtype)
    return apply(CUMSUM, (x,), {"dim": _given_dim(dim, x.ndim, "cumsum")})


@export
def cumprod(input, dim, *, dtype=None) -> Tensor:
    dtype = _int_accumulator(input, dtype)
    x = input if dtype is None else input.to(dtype)
    return apply(CUMPROD, (x,), {"dim": _given_dim(dim, x.ndim, "cumprod")})


@export
def all(input, dim=None, keepdim=False) -> Tensor:
    if dim.__class__ in NOT_INT:
        raise invalid_arguments("all", _ALL_FORMS, dim=dim)
    return apply(ALL_, (input,), {"dim": _dims(dim, input.ndim), "keepdim": keepdim})


@export
def any(input, dim=None, keepdim=False) -> Tensor:
    if dim.__class__ in NOT_INT:
        raise invalid_arguments("any", _ALL_FORMS, dim=dim)
    return apply(ANY_, (input,), {"dim": _dims(dim, input.ndim), "keepdim": keepdim})


@export
def count_nonzero(input, dim=None) -> Tensor:
    if dim.__class__ in NOT_INT:
        raise invalid_arguments("count_nonzero", ("(int dim = None)", "(tuple of ints dim)"),
                                dim=dim)
    return apply(COUNT_NONZERO, (input,), {"dim": _dims(dim, input.ndim)})


def implicit_softmax_dim(ndim):
    """The dim ``nn.functional``'s softmax family picks, with a warning, when given None:
    PyTorch's legacy choice (``torch.softmax`` itself takes no None)."""
    return 0 if ndim in (0, 1, 3) else 1


def softmax_dim(x, dim, name, position=1, kernel=None):
    """``dim`` of ``name`` (softmax's family) wrapped, or PyTorch's error: a dim not an int,
    an ``x`` that is not floating (no ``kernel``)."""
    if dim.__class__ in NOT_INT or dim is None or dim is ALL_DIMS:
        raise not_an_int_dim(name, dim, position)
    if (d := _dims(int(dim), x.ndim)) is not None and x._arr.dtype.kind in "biuc":
        impl = f"{kernel or name}_{'lastdim_' if d in ((), x.ndim - 1) else ''}kernel_impl"
        raise NotImplementedError(REFUSED.format(impl).format(kind=_dtype.torch_kind(x._arr.dtype)))
    return d


def softmax_input(input, dtype, name):
    """``input`` cast to ``dtype``, or the parser's TypeError where ``dtype`` is no dtype
    (``Tensor.to`` would read a str as a device)."""
    if not isinstance(dtype, _dtype.dtype):
        raise not_a(name, "dtype", dtype, "torch.dtype", None)
    return input.to(dtype)


@export
def softmax(input, dim=ALL_DIMS, dtype=None, _stacklevel=3) -> Tensor:
    """``softmax(input, dim, dtype=None)``: ``exp(x) / exp(x).sum(dim, keepdim=True)``."""
    x = input if dtype is None else softmax_input(input, dtype, "softmax")
    return apply(SOFTMAX, (x,), {"dim": softmax_dim(x, dim, "softmax")})


@export
def log_softmax(input, dim=ALL_DIMS, dtype=None, _stacklevel=3) -> Tensor:
    """``log_softmax(input, dim, dtype=None)``: ``x - logsumexp(x, dim, keepdim=True)``."""
    x = input if dtype is None else softmax_input(input, dtype, "log_softmax")
    return apply(LOG_SOFTMAX, (x,), {"dim": softmax_dim(x, dim, "log_softmax")})


@export(name="cumsum_", function=False)
def _cumsum_(self, dim) -> Tensor:
    return apply(CUMSUM, (self,), {"dim": _given_dim(dim, self.ndim, "cumsum_")}, out=self)


@export(name="cumprod_", function=False)
def _cumprod_(self, dim, *, dtype=None) -> Tensor:
    if dtype is not None and dtype != self.dtype:
        raise bad_inplace_dtype(self.dtype, dtype)
    return apply(CUMPROD, (self,), {"dim": _given_dim(dim, self.ndim, "cumprod_")}, out=self)
