"""Index-taking ops: ``gather``, ``index_select``, ``take``, ``scatter``, ``scatter_add``,
``index_copy``, ``index_fill``, ``take_along_dim``, ``scatter_reduce``.

Their nodes keep the (integer) indices: the backward needs only those and shapes. JAX
clamps or drops out-of-range indices where PyTorch raises, so the public functions check
shapes and (for concrete indices) bounds first, with PyTorch's messages.
"""
from __future__ import annotations

import threading

import jax
import jax.numpy as jnp
import numpy as np

from .. import _jax_trace
from .._device import host_bounds
from .._dtype import torch_kind
from .._host_value import Host
from .._meta import MetaArray
from .._tensor import Tensor
from .dispatch import apply, on_host, pack_before_error
from .promotion import same_dtypes
from .registry import defop, export, shape_broadcast_error, to_tensor_like
from .shape import wrap_dim

def _gather(x, idx, dim):
    # NOTE: PyTorch reads only the leading ``idx.shape[d]`` entries of the other dims, where
    # ``take_along_axis`` would broadcast ``idx`` against ``x``: narrow ``x`` first
    if x.ndim == 0:
        return jnp.take(x.reshape(1), idx)
    x = x[tuple(slice(None) if d == dim else slice(0, s) for d, s in enumerate(idx.shape))]
    return jnp.take_along_axis(x, idx, axis=dim)


GATHER = defop("gather", _gather, "GatherBackward0", {0: (1,)}, nondiff=(1,),
               names="self index -> index self dim sparse_grad=False")
INDEX_SELECT = defop("index_select", lambda x, idx, dim: jnp.take(x, idx, axis=dim),
                     "IndexSelectBackward0", {0: (1,)}, nondiff=(1,),
                     names="self index -> index dim self_sym_sizes")
TAKE = defop("take", lambda x, idx: jnp.take(x.reshape(-1), idx), "TakeBackward0", {0: (1,)},
             nondiff=(1,),
             names="self index -> index self")


def _scatter_add(x, idx, src, dim):
    # positions along every other dim are those of idx itself
    grids = jnp.meshgrid(*[jnp.arange(s) for s in idx.shape], indexing="ij")
    grids[dim] = idx
    src = src[tuple(slice(0, s) for s in idx.shape)]
    return x.at[tuple(grids)].add(src)


def _scatter(x, idx, src, dim):
    grids = jnp.meshgrid(*[jnp.arange(s) for s in idx.shape], indexing="ij")
    grids[dim] = idx
    if jnp.ndim(src) == 0:
        return x.at[tuple(grids)].set(jnp.asarray(src, x.dtype))
    src = src[tuple(slice(0, s) for s in idx.shape)]
    return x.at[tuple(grids)].set(src)


SCATTER_ADD = defop("scatter_add", _scatter_add, "ScatterAddBackward0", {0: (), 2: (1,)},
                    nondiff=(1,),
                    names="self index src -> index dim")
SCATTER = defop("scatter", _scatter, "ScatterBackward0", {0: (1,), 2: (1,)}, nondiff=(1,),
                names="self index src -> index dim")
SCATTER_VALUE = defop("scatter_value", _scatter, "ScatterBackward1", {0: (1,)}, nondiff=(1,),
                      names="self index value -> index dim")


# NOTE: PyTorch checks an index's dtype op by op, each with its own set and words: the
# gather/scatter family and index_select take int32 or int64 (scatter_add and
# scatter_reduce speak as scatter), the others int64 alone.
_INT32_64 = frozenset({"int32", "int64"})
_INT64 = frozenset({"int64"})
_SCATTER = (_INT32_64, RuntimeError, "scatter(): Expected dtype int32/int64 for index")
INDEX_DTYPES = {
    "gather": (_INT32_64, RuntimeError, "gather(): Expected dtype int32/int64 for index"),
    "scatter": _SCATTER, "scatter_add": _SCATTER, "scatter_reduce": _SCATTER,
    "index_select": (_INT32_64, RuntimeError,
                     "index_select(): Expected dtype int32 or int64 for index"),
    "index_add": (_INT32_64, RuntimeError,
                  "index_add_(): Expected dtype int32/int64 for index but got: {kind}"),
    "take": (_INT64, RuntimeError, "take(): Expected a long tensor for index, but got {kind}"),
    "take_along_dim": (_INT64, RuntimeError,
                       "torch.take_along_dim(): dtype of indices should be Long but got {kind}"),
    "index_copy": (_INT64, RuntimeError,
                   "index_copy_(): Expected a long tensor for index, but got {kind}"),
    "index_fill": (_INT64, IndexError, "index_fill_(): Expected dtype int64 for index."),
}


def check_index_dtype(name, index):
    """Raise PyTorch's error for ``name``'s index of a dtype it does not take."""
    accepted, error, message = INDEX_DTYPES[name]
    if isinstance(index, Tensor) and index.dtype.name in accepted:
        return
    kind = torch_kind(index.dtype.name) if isinstance(index, Tensor) else type(index).__name__
    raise error(message.format(kind=kind))


def index_bounds(index):
    """``(min, max)`` of a concrete, non-empty index Tensor, or None (traced or empty).
    Known without a transfer when the index was made from host data; read back otherwise
    (index tensors are small, and no program is compiled per shape)."""
    arr = index._data
    b = host_bounds(arr)
    if b is not None:
        return b
    if isinstance(arr, jax.core.Tracer) or not arr.size:
        return None
    a = np.asarray(arr)
    return int(a.min()), int(a.max())


# --------------------------------------------------------------------------- bound checks
# One rule for every op taking indices: ``check_index(index, low, high, error)`` raises
# ``error(bad)``, ``bad`` the first entry (in row-major order, as PyTorch's loops meet it)
# outside ``[low, high)``. A concrete index is checked now (its bounds, known from the host
# where it was made there, prove most indices in range without a transfer). A traced one
# is checked by the hookgrad.compile program tracing it: the trace's collector
# (``TRACED.stack``, pushed by ``hookgrad._compile.trace``) gets the check's flag and bad
# entry as values of the program, and the compiled call raises ``error(bad)`` after the
# run, before writing anything back. Under other JAX transformations (hookgrad.func, a vmap
# inside the step) a traced index is not checked: JAX clamps gathers and drops writes.


class _Traced(threading.local):
    def __init__(self):
        self.stack = []   # a _Collector per hookgrad.compile trace running in this thread


TRACED = _Traced()


class Collector:
    """The checks of one hookgrad.compile trace: ``checks`` holds, per check, its traced
    ``(flag, bad)`` scalars and ``(error, low, high, ignore)``."""

    __slots__ = ("trace", "checks")

    def __init__(self, trace):
        self.trace = trace
        self.checks = []


def check_index(index, low, high, error, ignore=None, before=None):
    """Raise ``error(bad)`` if an entry of ``index`` (a Tensor or array), other than
    ``ignore``, lies outside ``[low, high)`` (None: no bound); see the note above. Returns
    the index's ``(min, max)`` where it is concrete and not empty, else None. ``before()``
    runs first where the error is raised now (PyTorch records the node, packing its saved
    tensors, before its kernel meets the bad index: ``pack_before_error``)."""
    if isinstance(index, Tensor):  # values held on the host are read there, not copied in
        arr = index._arr.np if index._arr.__class__ is Host else index._data
    else:
        arr = index
    if isinstance(arr, jax.core.Tracer):
        _check_traced(arr, low, high, error, ignore)
        return None
    if arr.__class__ is MetaArray:  # no values to check, as PyTorch's meta kernels
        return None
    if not np.size(arr):
        return None
    b = host_bounds(arr)
    if b is not None and within(b, low, high):
        return b
    a = np.asarray(arr).reshape(-1).astype(np.int64, copy=False)
    if a.size <= _FEW:  # NOTE: Python's min and max of a few: NumPy's reductions cost ~2.5
        few = a.tolist()  # us each whatever the size (a decode step's ids: 2 per embedding)
        b = min(few), max(few)
    else:
        b = int(a.min()), int(a.max())
    if ignore is None and within(b, low, high):
        return b  # in range: two reductions prove it, no mask needed
    bad = _bad_mask(a, low, high, ignore)
    if bad.any():
        if before is not None:
            before()
        raise error(int(a[int(np.argmax(bad))]))
    return int(a.min()), int(a.max())


_FEW = 16  # indices checked in Python lists rather than NumPy reductions


def within(b, low, high):
    """Whether bounds ``b = (min, max)`` lie in ``[low, high)`` (None: no bound)."""
    return (low is None or b[0] >= low) and (high is None or b[1] < high)


def _bad_mask(a, low, high, ignore):
    # NOTE: works for NumPy and JAX arrays alike (``a`` is a signed integer array)
    bad = a < low if low is not None else None
    if high is not None:
        bad = a >= high if bad is None else bad | (a >= high)
    if ignore is not None:
        bad = bad & (a != ignore)
    return bad


def _check_traced(arr, low, high, error, ignore):
    if not TRACED.stack or not arr.size:
        return
    col = TRACED.stack[-1]
    if _jax_trace.current() is not col.trace:
        return   # inside a transformation within the step (vmap): not checked
    flag, bad = _index_check(arr, low=low, high=high, ignore=ignore)
    col.checks.append((flag, bad, (error, low, high, ignore)))


def check_traced_values(arr, bad, error):
    """In a hookgrad.compile trace, raise ``error`` after the run (before anything is
    written back) if ``bad(arr)``, a traced boolean, holds: a value check an eager op makes
    on the host (``binary_cross_entropy``'s range). Elsewhere nothing is checked."""
    if not TRACED.stack or not arr.size:
        return
    col = TRACED.stack[-1]
    if _jax_trace.current() is not col.trace:
        return
    col.checks.append((jnp.asarray(bad(arr)).any(), jnp.zeros((), check_dtype()),
                       (lambda _: error, None, None, None)))


def _first_bad(a, low, high, ignore):
    a = a.reshape(-1).astype(check_dtype())
    bad = _bad_mask(a, low, high, ignore)
    return bad.any(), a[jnp.argmax(bad)]


# NOTE: one named call per check: ``hookgrad._compile`` finds the checks' indices in the
# traced program by this name (an index that is an input of the program, reshaped or
# sliced, is proved in range from its host bounds without reading the flag back)
CHECK_NAME = "hookgrad_index_check"
_first_bad.__name__ = _first_bad.__qualname__ = CHECK_NAME
_index_check = jax.jit(_first_bad, static_argnames=("low", "high", "ignore"))


def check_dtype():
    """The integer dtype of the checks' values: int64 where JAX has 64-bit types."""
    return jax.dtypes.canonicalize_dtype(np.int64)


def out_of_range(bad):
    """PyTorch's IndexError for an index outside the indexed dim (embedding, index_*)."""
    return IndexError("index out of range in self")


def out_of_bounds(dim, size):
    """PyTorch's RuntimeError for ``bad``, an index outside ``[0, size)`` of ``dim``."""
    return lambda bad: RuntimeError(f"index {bad} is out of bounds for dimension {dim} with "
                                    f"size {size}")


def packing(op, args):
    """``before`` for ``check_index``: ``op``'s saved tensors of ``args`` packed first."""
    return None if op is None else (lambda: pack_before_error(op, args))


def _check_bounds(index, size, dim, op=None, args=()):
    """PyTorch's error for an entry of ``index`` outside ``[0, size)`` (dims that index);
    ``op`` on ``args``: what PyTorch's node packs first."""
    check_index(index, 0, size, out_of_bounds(dim, size), before=packing(op, args))


def _check_gather_shape(input, dim, index, src=None):
    """PyTorch's shape rules for ``gather``/``scatter``: the same number of dims; ``index``
    no larger than ``input`` apart from ``dim`` (and, for scatter, than ``src``)."""
    if index.ndim != input.ndim and not (index.ndim <= 1 and input.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as "
                           f"{'input' if src is None else 'self'} tensor")
    ishape, xshape = list(index.shape), list(input.shape)
    too_big = any(i > x for d, (i, x) in enumerate(zip(ishape, xshape)) if d != dim)
    if src is None:
        if too_big:
            d = next(d for d, (i, x) in enumerate(zip(ishape, xshape)) if d != dim and i > x)
            raise RuntimeError(f"Size does not match at dimension {d} expected index "
                               f"{ishape} to be no larger than self {xshape} apart from "
                               f"dimension {dim}")
        return
    sshape = list(src.shape) if isinstance(src, Tensor) else None
    if too_big or sshape is not None and (
            len(sshape) != len(ishape) or any(i > s for i, s in zip(ishape, sshape))):
        tail = f" and to be no larger size than src {sshape}" if sshape is not None else ""
        raise RuntimeError(f"Expected index {ishape} to be no larger than self {xshape} "
                           f"apart from dimension {dim}{tail}")


@export
def gather(input, dim, index, *, sparse_grad=False) -> Tensor:
    """``gather(input, dim, index)``: ``out[i][j] = input[index[i][j]][j]`` (for dim 0)."""
    if dim.__class__ is int and dim >= 0 and \
            (res := on_host(GATHER, (input, index), {"dim": dim})) is not None:
        return res  # small host values: the NumPy form checks what PyTorch checks
    check_index_dtype("gather", index)
    dim = wrap_dim(dim, input.ndim)
    _check_gather_shape(input, dim, index)
    _check_bounds(index, input.shape[dim] if input.ndim else 1, dim, GATHER, (input, index))
    return apply(GATHER, (input, index), {"dim": dim})


@export
def index_select(input, dim, index) -> Tensor:
    """``index_select(input, dim, index)``: the entries ``index`` (1-d) of ``dim``."""
    check_index_dtype("index_select", index)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    dim = wrap_dim(dim, input.ndim)
    if input.ndim == 0 and index.numel() != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{index.numel()} value(s)")
    size = input.shape[dim] if input.ndim else 1

    def error(bad):  # PyTorch's CPU kernels: dim 1 of a matrix (or more) is a separate loop
        if size == 0:
            return RuntimeError("index_select(): self indexing axis dim should be positive")
        if input.ndim > 1 and dim == 1:
            return RuntimeError(f"INDICES element is out of DATA bounds, id={bad} "
                                f"axis_dim={size}")
        return out_of_range(bad)
    check_index(index, 0, size, error, before=packing(INDEX_SELECT, (input, index)))
    return apply(INDEX_SELECT, (input, index), {"dim": dim})


@export
def take(input, index) -> Tensor:
    """``take(input, index)``: elements of the flattened input at ``index``."""
    check_index_dtype("take", index)
    n = input.numel()
    check_index(index, -n, n, lambda bad: IndexError(
        f"out of range: tried to access index {bad} on a tensor of {n} elements."),
        before=packing(TAKE, (input, index)))
    return apply(TAKE, (input, index))


@export
def scatter_add(input, dim, index, src) -> Tensor:
    """``scatter_add(input, dim, index, src)``: ``src`` added into a copy of ``input`` at
    ``index`` along ``dim``."""
    return apply(SCATTER_ADD, *_scatter_add_args(input, dim, index, src))


def _scatter_add_args(input, dim, index, src):
    check_index_dtype("scatter_add", index)
    dim = wrap_dim(dim, input.ndim)
    _check_scatter(input, dim, index, src, SCATTER_ADD)
    return (input, index, src), {"dim": dim}


def _check_scatter(input, dim, index, src, op=None):
    same_dtypes(input, src, "scatter(): Expected self.dtype to be equal to src.dtype")
    _check_gather_shape(input, dim, index, src)
    _check_bounds(index, input.shape[dim] if input.ndim else 1, dim, op,
                  (input, index, to_tensor_like(src)))


def _scatter_args(input, dim, index, src, value):
    check_index_dtype("scatter", index)
    src = value if src is None else src
    op = SCATTER if isinstance(src, Tensor) else SCATTER_VALUE
    dim = wrap_dim(dim, input.ndim)
    _check_scatter(input, dim, index, src, op)
    return op, (input, index, to_tensor_like(src)), {"dim": dim}


@export
def scatter(input, dim, index, src=None, value=None) -> Tensor:
    """``scatter(input, dim, index, src)`` / ``scatter(input, dim, index, value=v)``."""
    op, args, st = _scatter_args(input, dim, index, src, value)
    return apply(op, args, st)


@export(name="scatter_add_", function=False)
def _scatter_add_(self, dim, index, src) -> Tensor:
    return apply(SCATTER_ADD, *_scatter_add_args(self, dim, index, src), out=self)


@export(name="scatter_", function=False)
def _scatter_(self, dim, index, src=None, value=None) -> Tensor:
    op, args, st = _scatter_args(self, dim, index, src, value)
    return apply(op, args, st, out=self)


# --------------------------------------------------------------------------- index_copy/fill


def _along(dim, idx):
    return (slice(None),) * dim + (idx,)


INDEX_COPY = defop("index_copy", lambda x, idx, src, dim: x.at[_along(dim, idx)].set(src),
                   "IndexCopyBackward0", {0: (1,), 2: (1,)}, nondiff=(1,),
                   names="self index source -> index source dim source_dim")
INDEX_FILL = defop("index_fill", lambda x, idx, dim, value: x.at[_along(dim, idx)].set(value),
                   "IndexFillBackward0", {0: (1,)}, nondiff=(1,),
                   names="self index -> index dim")
INDEX_FILL_T = defop("index_fill_tensor",
                     lambda x, idx, v, dim: x.at[_along(dim, idx)].set(v.astype(x.dtype)),
                     "IndexFillBackward1", {0: (1,), 2: (1,)}, nondiff=(1,),
                     names="self index value -> index dim")


def _index_vector(name, input, dim, index, wrap):
    """``index`` as a 1-d Tensor of non-negative entries along ``dim``, checked as PyTorch
    checks it (``wrap``: negative entries count from the end, as index_fill allows)."""
    check_index_dtype(name, index)
    if index.ndim > 1:
        if name == "index_fill":
            raise RuntimeError("Index has to be a vector/scalar")
        raise IndexError(f"{name}_(): Index should have dimension 1 or 0 (got {index.ndim})")
    size = input.shape[dim] if input.ndim else 1
    where = "" if wrap else f"{name}_(): "
    b = check_index(index, -size if wrap else 0, size, lambda bad: IndexError(
        f"{where}index {bad} is out of bounds for dimension {dim} with size {size}"))
    index = index.reshape(-1)
    if wrap and (b is None or b[0] < 0):  # negative entries count from the end
        index = index % size
    return index


def _sliced(shape, dim):
    """``shape`` without ``dim`` (a 0-d shape as it is), as PyTorch compares slices."""
    return [s for i, s in enumerate(shape) if i != dim]


def check_index_source(name, input, dim, index, source):
    """PyTorch's checks of ``index_add``'s and ``index_reduce``'s ``source``: one index per
    slice along ``dim``, and the other dims ``input``'s."""
    k = index.numel()
    n = source.shape[wrap_dim(dim, source.ndim)] if source.ndim else 1
    if k != n:
        raise RuntimeError(f"{name}_(): Number of indices ({k}) should be equal to "
                           f"source.size(dim): ({n}), for dim: {dim}")
    cut = dim if input.ndim and source.ndim else None
    if _sliced(input.shape, cut) != _sliced(source.shape, cut):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(input.shape)} "
                           f"source.shape = {list(source.shape)}")


def _index_copy_args(input, dim, index, source):
    dim = wrap_dim(dim, input.ndim)
    if source.ndim != input.ndim and source.ndim and input.ndim:
        raise IndexError("index_copy_(): When source and destination are not scalars, their "
                         "dimensionality must match. Source dimensionality "
                         f"({source.ndim}), destination dimensionality ({input.ndim})")
    into, have = _sliced(input.shape, dim), _sliced(source.shape, dim)
    if into != have:
        raise RuntimeError("index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination slice shape: {' '.join(map(str, into))} at "
                           f"dimension {dim} and source slice shape: "
                           f"{' '.join(map(str, have))} at dimension 0.")
    same_dtypes(input, source, "index_copy_(): self and source expected to have the same "
                "dtype, but got (self) {} and (source) {}")
    index = _index_vector("index_copy", input, dim, index, wrap=False)
    n = source.shape[dim] if source.ndim else 1
    if index.numel() != n:
        raise IndexError(f"index_copy_(): Number of indices ({index.numel()}) should be equal "
                         f"to source.size(dim) ({n})")
    return (input, index, source), {"dim": dim}


@export
def index_copy(input, dim, index, source) -> Tensor:
    """``index_copy(input, dim, index, source)``: a copy of ``input`` whose entries
    ``index`` along ``dim`` are the slices of ``source``."""
    return apply(INDEX_COPY, *_index_copy_args(input, dim, index, source))


@export(name="index_copy_", function=False)
def _index_copy_(self, dim, index, source) -> Tensor:
    return apply(INDEX_COPY, *_index_copy_args(self, dim, index, source), out=self)


def _index_fill_args(input, dim, index, value):
    dim = wrap_dim(dim, input.ndim)
    index = _index_vector("index_fill", input, dim, index, wrap=True)
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.ndim} dimension(s).")
        return INDEX_FILL_T, (input, index, value), {"dim": dim}
    return INDEX_FILL, (input, index), {"dim": dim, "value": value}


@export
def index_fill(input, dim, index, value) -> Tensor:
    """``index_fill(input, dim, index, value)``: a copy of ``input`` whose entries
    ``index`` along ``dim`` are ``value`` (a number or a 0-d Tensor)."""
    op, args, st = _index_fill_args(input, dim, index, value)
    return apply(op, args, st)


@export(name="index_fill_", function=False)
def _index_fill_(self, dim, index, value) -> Tensor:
    op, args, st = _index_fill_args(self, dim, index, value)
    return apply(op, args, st, out=self)


@export
def take_along_dim(input, indices, dim=None) -> Tensor:
    """``take_along_dim(input, indices, dim=None)``: ``gather`` after broadcasting
    ``input`` and ``indices`` in the other dims (``dim=None``: along the flattened input)."""
    check_index_dtype("take_along_dim", indices)
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    if input.ndim != indices.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.ndim} dimensions for input, "
                           f"and {indices.ndim} dimensions for indices")
    dim = wrap_dim(dim, input.ndim)
    a = tuple(1 if d == dim else s for d, s in enumerate(input.shape))
    b = tuple(1 if d == dim else s for d, s in enumerate(indices.shape))
    err = shape_broadcast_error(a, b)
    if err is not None:
        raise err
    shape = jnp.broadcast_shapes(a, b)
    # PyTorch expands both (an ExpandBackward0 under the GatherBackward0 node)
    x = input.expand(*[input.shape[d] if d == dim else s for d, s in enumerate(shape)])
    i = indices.expand(*[indices.shape[d] if d == dim else s for d, s in enumerate(shape)])
    return gather(x, dim, i)


# --------------------------------------------------------------------------- scatter_reduce

_REDUCE_INIT = {"sum": 0, "prod": 1, "mean": 0, "amax": -jnp.inf, "amin": jnp.inf}


def _scatter_reduce(x, idx, src, dim, reduce, include_self):
    # NOTE: a dense (size, k, ...) mask rather than a scatter: JAX's scatter-multiply has
    # no gradient for repeated indices, and the mask's prod/sum/max differentiate exactly
    # (zeros and ties included) with JAX's own rules
    narrow = tuple(slice(None) if d == dim else slice(0, s) for d, s in enumerate(idx.shape))
    src = src[tuple(slice(0, s) for s in idx.shape)]
    xs, src = jnp.moveaxis(x[narrow], dim, 0), jnp.moveaxis(src, dim, 0)
    ix = jnp.moveaxis(idx, dim, 0)
    hit = ix[None] == jnp.arange(xs.shape[0]).reshape((-1,) + (1,) * ix.ndim)
    touched = hit.any(axis=1)
    fill = _REDUCE_INIT[reduce]
    if jnp.issubdtype(x.dtype, jnp.integer) and reduce in ("amax", "amin"):
        info = jnp.iinfo(x.dtype)
        fill = info.min if reduce == "amax" else info.max
    vals = jnp.where(hit, src[None].astype(x.dtype), jnp.asarray(fill, x.dtype))
    if reduce in ("amax", "amin"):
        red = _scatter_extremum(vals, xs, reduce, include_self, fill)
    elif reduce in ("sum", "mean"):
        red = vals.sum(axis=1) + (xs if include_self else 0)
    else:
        red = jnp.prod(vals, axis=1) * (xs if include_self else 1)
    if reduce == "mean":
        n = hit.sum(axis=1) + (1 if include_self else 0)
        n = jnp.maximum(n, 1).astype(x.dtype)
        red = red // n if jnp.issubdtype(x.dtype, jnp.integer) else red / n
    out = jnp.where(touched, red, xs)
    return x.at[narrow].set(jnp.moveaxis(out, 0, dim))


def _scatter_extremum(vals, xs, reduce, include_self, fill):
    # NOTE: PyTorch shares the gradient evenly among every value equal to the result, self
    # included — also when include_self=False, where self takes no share of the value but
    # still counts as a tie (and its own gradient there is zero). One reduction over src's
    # values and self's slot lets JAX's max/min rule (even split among ties) give that.
    pick = jnp.max if reduce == "amax" else jnp.min
    if not include_self:
        tie = xs == pick(vals, axis=1)
        xs = jnp.where(tie, jax.lax.stop_gradient(xs), jnp.asarray(fill, xs.dtype))
    return pick(jnp.concatenate([vals, xs[:, None]], axis=1), axis=1)


SCATTER_REDUCE = defop("scatter_reduce", _scatter_reduce, "ScatterReduceBackward0",
                       nondiff=(1,), names="self index src -> index self src result dim "
                                           "include_self reduce")


def _scatter_reduce_args(input, dim, index, src, reduce, include_self):
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # PyTorch's aliases
    if reduce not in _REDUCE_INIT:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")
    check_index_dtype("scatter_reduce", index)
    dim = wrap_dim(dim, input.ndim)
    _check_scatter(input, dim, index, src, SCATTER_REDUCE)
    return (input, index, src), {"dim": dim, "reduce": reduce,
                                 "include_self": bool(include_self)}


@export
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True) -> Tensor:
    """``scatter_reduce(input, dim, index, src, reduce, *, include_self=True)``: ``src``
    reduced (``"sum"``, ``"prod"``, ``"mean"``, ``"amax"``, ``"amin"``) into a copy of
    ``input`` at ``index`` along ``dim``."""
    return apply(SCATTER_REDUCE, *_scatter_reduce_args(input, dim, index, src, reduce,
                                                       include_self))


@export(name="scatter_reduce_", function=False)
def _scatter_reduce_(self, dim, index, src, reduce, *, include_self=True) -> Tensor:
    return apply(SCATTER_REDUCE, *_scatter_reduce_args(self, dim, index, src, reduce,
                                                       include_self), out=self)
