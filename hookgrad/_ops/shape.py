"""Shape, layout and indexing ops: view/reshape, permutes, splits, gather/scatter,
``x[idx]`` and ``x[idx] = v``.

None of these keep Tensors saved except index-taking ops, which keep their (integer)
indices: their backward needs only shapes.
"""
from __future__ import annotations

import builtins
import inspect
import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype, _errors, _jax_trace, _views
from .._tensor import Size, Tensor
from .dispatch import apply
from .parser_errors import bool_in_int_list, invalid_arguments, not_a, sizes_fit_no_form, \
    takes_one
from .stages import modes as _modes
from .registry import defop, export
from .view_shape import new_shape as _new_shape, resolve_shape as _resolve_shape, \
    reshape_function_args as _reshape_function_args, reshape_keywords as _reshape_keywords, \
    view_keywords as _view_keywords
from .views import view_apply, view_strides


_shape_arg = _jax_trace.size_args  # every view and reshape


def _dim(d, ndim):
    return d + ndim if d < 0 else d


def wrap_dim(d, ndim, name=None, arg="dim", position=1):
    """``d`` in ``[0, ndim)`` (a 0-d tensor takes -1 and 0), PyTorch's IndexError otherwise;
    with ``name`` (the op's), a bool ``d`` raises PyTorch's TypeError for its argument
    ``arg`` at ``position``."""
    if d.__class__ is not int:
        if d.__class__ is bool and name is not None:
            raise not_a(name, arg, d, position=position)
        if d.__class__ is float or d.__class__ is str:  # int() would truncate or fail
            raise not_a(name, arg, d, position=position) if name is not None else \
                TypeError(f"argument '{arg}' must be int, not {d.__class__.__name__}")
        d = int(d)
    n = ndim if ndim > 0 else 1
    if not -n <= d < n:
        raise _errors.dim_out_of_range(d, n)
    return d + n if d < 0 else d


def size_at(input, dim):
    """``input.size(dim)`` as PyTorch's kernels read it: a 0-d ``input`` has no dimension
    to read (where ``wrap_dim`` lets a 0-d tensor take -1 and 0)."""
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {int(dim)} but tensor has no dimensions")
    return input.shape[wrap_dim(dim, input.ndim)]


def _dims_arg(dims, ndim):
    return tuple(wrap_dim(d, ndim) for d in dims)


def given_dims(ndim, _name=None, _args=(), **dims):
    """``dims`` range-checked against ``ndim`` and kept as given (negative ones too), as
    PyTorch's view nodes save them; with ``_name`` (the op's), a bool dim raises PyTorch's
    TypeError (checked off the plain ints' way), naming the argument as ``_args`` does
    where PyTorch's name is not the saved one's."""
    for d in dims.values():
        if d.__class__ is not int or not -ndim <= d < ndim:
            break
    else:  # plain ints in range (a model's transposes): ``dims`` is this call's own dict
        return dims
    for i, (k, d) in enumerate(dims.items(), 1):
        wrap_dim(d, ndim, _name, _args[i - 1] if _args else k, i)
    return {k: int(d) for k, d in dims.items()}


_SQUEEZE_FORMS = ("()", "(int dim)", "(tuple of ints dim)")


def squeeze_dims(input, dim, name="squeeze"):
    """``(op, statics)`` of ``squeeze(input, dim)`` for an int or a sequence ``dim``."""
    many = isinstance(dim, (tuple, list))
    if dim.__class__ is bool or many and dim and dim[0].__class__ is bool:
        raise invalid_arguments(name, _SQUEEZE_FORMS, dim)
    dims = tuple(dim) if many else (dim,)
    _dims_arg(dims, input.ndim)
    return SQUEEZE_DIMS if many else SQUEEZE_DIM, {"dim": tuple(int(d) for d in dims)}


VIEW = defop("view", lambda x, shape: jnp.reshape(x, shape), "ViewBackward0", (),
             names="self -> self_sym_sizes")
RESHAPE = defop("reshape", lambda x, shape: jnp.reshape(x, shape), "ViewBackward0", (),
                names="self -> self_sym_sizes")
# NOTE: PyTorch's reshape of a non-contiguous Tensor whose strides allow a view
RESHAPE_ALIAS = defop("_reshape_alias", lambda x, shape: jnp.reshape(x, shape),
                      "ReshapeAliasBackward0", (), names="self -> self_sym_sizes")
UNSAFE_VIEW = defop("_unsafe_view", lambda x, shape: jnp.reshape(x, shape), "UnsafeViewBackward0",
                    (), names="self -> self_sym_sizes")
DIAGONAL = defop("diagonal", lambda x, off, d1, d2: jnp.diagonal(x, off, d1, d2),
                 "DiagonalBackward0", (), names="self -> dim1=d1 dim2=d2 offset=off self_sym_sizes")
PERMUTE = defop("permute", lambda x, dims: jnp.transpose(x, dims), "PermuteBackward0", (),
                names="self -> dims")
# the view ops' statics are dims as given (PyTorch's nodes save them so): JAX wraps them
TRANSPOSE = defop("transpose", lambda x, d0, d1: jnp.swapaxes(x, d0, d1) if x.ndim else x,
                  "TransposeBackward0", (), names="self -> dim0=d0 dim1=d1")
T = defop("t", lambda x: x.T, "TBackward0", ())
SQUEEZE = defop("squeeze", lambda x, dim: jnp.squeeze(x, dim), "SqueezeBackward0", (),
                names="self -> self_sym_sizes")


def _squeeze_dims(x, dim):
    # the size-1 dims among those asked for go
    return jnp.squeeze(x, tuple(d for d in dim if x.ndim and x.shape[d] == 1))


SQUEEZE_DIM = defop("squeeze_dim", _squeeze_dims, "SqueezeBackward1", (),
                    names="self -> dim=dim:int self_sym_sizes")
SQUEEZE_DIMS = defop("squeeze_dims", _squeeze_dims, "SqueezeBackward2", (),
                     names="self -> dim self_sym_sizes")
UNSQUEEZE = defop("unsqueeze", lambda x, dim: jnp.expand_dims(x, dim), "UnsqueezeBackward0", (),
                  names="self -> dim")
EXPAND = defop("expand", lambda x, shape: jnp.broadcast_to(x, shape), "ExpandBackward0", (),
               names="self -> self_sym_sizes")
REPEAT = defop("repeat", lambda x, reps: jnp.tile(x, reps), "RepeatBackward0", (),
               names="self -> repeats=reps self_sym_sizes")
FLIP = defop("flip", lambda x, dims: jnp.flip(x, dims), "FlipBackward0", (),
             names="self -> dims")
ROLL = defop("roll", lambda x, shifts, dims: jnp.roll(x, shifts, dims), "RollBackward0", (),
             names="self -> dims=dims:tuple shifts=shifts:tuple")
TRIL = defop("tril", lambda x, k: jnp.tril(x, k), "TrilBackward0", (),
             names="self -> diagonal=k")
TRIU = defop("triu", lambda x, k: jnp.triu(x, k), "TriuBackward0", (),
             names="self -> diagonal=k")
def slice_from(x, start, *, dim, size, step=1):
    """``size`` entries of dimension ``dim`` from ``start`` (a traced int: one program for
    every start) on, every ``step``-th; the slice lies within bounds."""
    span = (size - 1) * step + 1 if size else 0
    part = jax.lax.dynamic_slice_in_dim(x, start, span, dim)
    return part if step == 1 else jax.lax.slice_in_dim(part, 0, None, step, dim)


NARROW = defop("narrow", lambda x, dim, start, length: jax.lax.slice_in_dim(
    x, start, start + length, axis=dim), "SliceBackward0", (),
    names="self -> dim start self_sym_sizes step=1",
    positions=lambda shape, dim, start, length: (slice_from, {"dim": dim, "size": length},
                                                (start,)))
CLONE = defop("clone", lambda x: jnp.array(x, copy=True), "CloneBackward0", ())
ALIAS = defop("alias", lambda x: x, "AliasBackward0", ())
@export(function=False)
def view(self, *shape, **kwargs) -> Tensor:
    """``view(*shape)``: the same elements in a new shape (one size may be -1), a view
    of ``self``: in-place changes of one show in the other.

    >>> x = hookgrad.zeros(2, 3); x.view(6)[0] = 1.; x[0, 0]
    tensor(1.)
    """
    if kwargs:  # (``size=``, ``dtype=``)
        shape = _view_keywords(shape, kwargs)
    first = shape[0] if shape else None
    # NOTE: sizes given one by one from a plain int (``x.view(-1, n)``, a model's per layer
    # per step) pass every check below: no reads for them
    if first.__class__ is not int:
        one = len(shape) == 1 and first.__class__ in (tuple, list, Size)
        if one:
            first = first[0] if first else None
        # PyTorch's parser takes ``tuple of ints`` by its first size's type: a bool or a
        # float there matches no signature (a later bool is taken as an int, by both)
        if first.__class__ is bool or isinstance(first, float):
            raise _invalid_view(shape)
        if len(shape) == 1 and not one and not isinstance(first, int):
            return self.to(_dtype.as_dtype(first))  # view(dtype)
    # (the array's numel: no frame for Tensor.numel on every view)
    shape = _new_shape(shape, self._arr.shape)
    # (a Tensor that is no view is contiguous: asked only of views)
    if self._view is not None and not self.is_contiguous() and \
            view_strides(*_views.geometry(self)[:2], shape) is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride "
                           "(at least one dimension spans across two contiguous subspaces). "
                           "Use .reshape(...) instead.")
    return view_apply(VIEW, self, {"shape": shape})


def _invalid_view(shape):
    """PyTorch's TypeError for ``view(*shape)`` that fits neither of its signatures: the
    lines saying why only for one argument (PyTorch's parser adds them then)."""
    forms = ("(torch.dtype dtype)", "(tuple of ints size)")
    if len(shape) == 1:
        return invalid_arguments("view", forms, *shape)
    return sizes_fit_no_form("view", forms, shape)


_RESHAPE_ARGS = ("reshape", "shape")  # (for its parser's errors: worded for the method)


@export(function=False)
def reshape(input, *shape, **kwargs) -> Tensor:
    """``reshape(*shape)``: :meth:`Tensor.view` where the strides allow it, else a copy in
    the new shape."""
    if kwargs or not shape:  # (``shape=``; none: PyTorch's missing argument)
        shape = _reshape_keywords(shape, kwargs)
    shape = _new_shape(shape, input._arr.shape, _RESHAPE_ARGS)
    if input._view is None or input.is_contiguous():  # (no view: contiguous)
        return view_apply(RESHAPE, input, {"shape": shape})
    if view_strides(*_views.geometry(input)[:2], shape) is None:
        return apply(UNSAFE_VIEW, (clone(input),), {"shape": shape})
    # as PyTorch's: a Tensor a dispatch mode sees is subclass-like, and its reshape a view
    return view_apply(RESHAPE if _modes.MODES else RESHAPE_ALIAS, input, {"shape": shape})


@export(name="reshape", method=False)
def reshape_function(*args, **kwargs) -> Tensor:
    """``reshape(input, shape)``: :meth:`Tensor.reshape` of one ``tuple of ints`` (PyTorch's
    function form takes no sizes one by one, and words its errors with ``input`` counted)."""
    if kwargs or len(args) != 2 or args[1].__class__ not in (tuple, list, Size) or \
            args[0].__class__ is not Tensor and not isinstance(args[0], Tensor):
        args = _reshape_function_args(args, kwargs)
    try:
        return reshape(*args)
    except TypeError:  # the method's words for its sizes: the function's count ``input``
        _reshape_function_args(args, kwargs)
        raise


reshape_function.__name__ = reshape_function.__qualname__ = "reshape"
reshape_function.__signature__ = inspect.signature(lambda input, shape: None).replace(
    return_annotation="Tensor")  # PyTorch's (for the stubs and ``inspect``)


@export(function=False)
def view_as(self, other) -> Tensor:
    return view(self, other.shape)


@export(function=False)
def reshape_as(self, other) -> Tensor:
    return reshape(self, other.shape)


@export
def flatten(input, start_dim=0, end_dim=-1) -> Tensor:
    """``flatten(input, start_dim=0, end_dim=-1)``: dims ``start_dim..end_dim`` merged."""
    n = input.ndim
    s, e = wrap_dim(start_dim, n, "flatten", "start_dim"), wrap_dim(end_dim, n, "flatten",
                                                                     "end_dim", 2)
    if n == 0:
        return reshape(input, (1,))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shp = input.shape
    new = shp[:s] + (math.prod(shp[s:e + 1]),) + shp[e + 1:]
    return reshape(input, new)


@export
def unflatten(input, dim, sizes) -> Tensor:
    """``unflatten(input, dim, sizes)``: dim ``dim`` split into ``sizes`` (one may be -1)."""
    n = input.ndim
    d = wrap_dim(dim, n, "unflatten")
    if n == 0:  # PyTorch reads the dim's size inside a check that wraps what it raises
        raise RuntimeError(f"unflatten got an unexpected error:\nDimension specified as {d} "
                           "but tensor has no dimensions")
    shp = input.shape
    sizes = tuple(int(v) for v in sizes)
    try:
        _resolve_shape(sizes, shp[d])
    except RuntimeError:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({shp[d]}) in the input tensor") from None
    return reshape(input, shp[:d] + sizes + shp[d + 1:])


@export
def permute(input, *dims) -> Tensor:
    """``permute(input, dims)``: the dimensions reordered."""
    if dims and (dims[0].__class__ is bool or dims[0].__class__ in (tuple, list) and dims[0]
                 and dims[0][0].__class__ is bool):  # PyTorch's parser refuses a bool first
        raise takes_one("permute", dims) if dims[1:] else \
            bool_in_int_list("permute", "dims", dims[0])
    dims = _shape_arg(dims)
    if len(dims) != input.ndim:
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does "
                           "not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {input.ndim} is not equal to len(dims) = {len(dims)}")
    dims = _dims_arg(dims, input.ndim)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return view_apply(PERMUTE, input, {"dims": dims})


@export
def transpose(input, dim0, dim1) -> Tensor:
    """``transpose(input, dim0, dim1)`` (aliases ``swapaxes``, ``swapdims``): two dimensions
    swapped."""
    n = len(input._arr.shape)
    if dim0.__class__ is int and dim1.__class__ is int and -n <= dim0 < n and -n <= dim1 < n:
        return view_apply(TRANSPOSE, input, {"d0": dim0, "d1": dim1})  # a model's: no frame more
    return view_apply(TRANSPOSE, input, given_dims(n, "transpose", ("dim0", "dim1"),
                                                   d0=dim0, d1=dim1))


# the aliases are functions of their own: PyTorch's TypeError names the one called
@export
def swapaxes(input, axis0, axis1) -> Tensor:
    return view_apply(TRANSPOSE, input, given_dims(input.ndim, "swapaxes", ("axis0", "axis1"),
                                                   d0=axis0, d1=axis1))


@export
def swapdims(input, dim0, dim1) -> Tensor:
    return view_apply(TRANSPOSE, input, given_dims(input.ndim, "swapdims", ("dim0", "dim1"),
                                                   d0=dim0, d1=dim1))


@export
def t(input) -> Tensor:
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return view_apply(T, input)


@export
def squeeze(input, dim=None) -> Tensor:
    """``squeeze(input, dim=None)``: size-1 dimensions removed (all, or those in ``dim``,
    an int or a tuple)."""
    if dim is None:
        return view_apply(SQUEEZE, input, {"dim": None})
    op, statics = squeeze_dims(input, dim)
    return view_apply(op, input, statics)


@export
def unsqueeze(input, dim) -> Tensor:
    """``unsqueeze(input, dim)``: a size-1 dimension inserted at ``dim``."""
    n = len(input._arr.shape) + 1
    if dim.__class__ is int and -n <= dim < n:
        return view_apply(UNSQUEEZE, input, {"dim": dim})  # a model's: no frame more
    return view_apply(UNSQUEEZE, input, given_dims(n, "unsqueeze", dim=dim))


def _kind_name(t):
    return _dtype.legacy_type_name(t._data.dtype)


@export(function=False)
def expand(self, *sizes) -> Tensor:
    """``expand(*sizes)``: a view with size-1 dimensions repeated (stride 0); -1 keeps a
    size, new leading dimensions may be added."""
    return view_apply(EXPAND, self, {"shape": expanded_shape(self, _shape_arg(sizes))})


def expanded_shape(self, sizes, internal=False):
    """The shape ``self.expand(sizes)`` has (PyTorch's errors where it cannot); an
    ``internal`` expand (one ATen makes itself) names the tensor's type as C++ does."""
    shape = self._arr.shape  # (read once: a Size and its __getitem__ per dim cost calls)
    lead = len(sizes) - len(shape)
    if lead < 0:
        kind = f"CPU{_dtype.torch_kind(self.dtype.np)}Type" if internal else \
            _kind_name(self)
        raise RuntimeError(f"expand({kind}{{{list(self.shape)}}}, size={list(sizes)}): "
                           f"the number of sizes provided ({len(sizes)}) must be greater or equal "
                           f"to the number of dimensions in the tensor ({self.ndim})")
    full = list(sizes)
    for i in reversed(range(len(sizes))):  # PyTorch reports the last mismatch first
        s = sizes[i]
        have = shape[i - lead] if i >= lead else None
        if s == -1:
            if have is None:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            s = have
        elif have is not None and have != s and have != 1:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing "
                               f"size ({have}) at non-singleton dimension {i}.  Target sizes: "
                               f"{list(sizes)}.  Tensor sizes: {list(self.shape)}")
        full[i] = s
    return tuple(full)


@export(function=False)
def expand_as(self, other) -> Tensor:
    return expand(self, other.shape)


@export
def broadcast_to(input, size) -> Tensor:
    """``broadcast_to(input, size)``: ``input.expand(size)``."""
    return expand(input, tuple(size))


@export(method=False)
def broadcast_tensors(*tensors) -> tuple[Tensor, ...]:
    """``broadcast_tensors(*tensors)``: the tensors expanded to their common shape (a tensor
    already of that shape is returned as is)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t if t.shape == shape else expand(t, shape) for t in tensors)


@export(method=False)
def broadcast_shapes(*shapes) -> Size:
    """``broadcast_shapes(*shapes)``: the shape ``broadcast_tensors`` would give."""
    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    try:
        return Size(np.broadcast_shapes(*shapes))
    except ValueError:
        raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape.  "
                           f"Mismatch is between {list(shapes[0])} and {list(shapes[-1])}.") \
            from None


@export(function=False)
def repeat(self, *sizes) -> Tensor:
    """``repeat(*sizes)``: the tensor tiled ``sizes[i]`` times along each dimension."""
    reps = _shape_arg(sizes)
    if len(reps) < self.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    if any(r < 0 for r in reps):  # (XLA would fail to build the program)
        shape = [r * n for r, n in zip(reps, (1,) * (len(reps) - self.ndim) + self.shape)]
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{next(n for n in shape if n < 0)}: {shape}")
    return apply(REPEAT, (self,), {"reps": reps})


@export(method=False)
def flip(input, dims) -> Tensor:
    """``flip(input, dims)``: the order of elements reversed along ``dims``."""
    if dims.__class__ is bool or dims.__class__ in (tuple, list) and dims and \
            dims[0].__class__ is bool:
        raise bool_in_int_list("flip", "dims", dims)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    dims = _dims_arg(dims, input.ndim)
    return apply(FLIP, (input,), {"dims": dims if input.ndim else ()})  # 0-d: no axis to flip


@export(name="flip", function=False)
def _flip_method(self, *dims) -> Tensor:
    """``x.flip(dims)`` or ``x.flip(*dims)``: as :func:`flip`; the method also takes the
    dims as separate arguments, as PyTorch's does (where its parser takes a bool as an int)."""
    if len(dims) == 1:
        return flip(self, dims[0])
    if dims[0].__class__ is bool:
        raise takes_one("flip", dims)
    return flip(self, dims)


@export
def roll(input, shifts, dims=None) -> Tensor:
    """``roll(input, shifts, dims=None)``: elements shifted circularly (flattened when
    ``dims`` is None)."""
    if (err := bool_in_int_list("roll", "shifts", shifts) or
            bool_in_int_list("roll", "dims", dims, 2)):
        raise err
    shifts = tuple(shifts) if isinstance(shifts, (list, tuple)) else int(shifts)
    if dims is not None:
        dims = _dims_arg(dims, input.ndim) if isinstance(dims, (list, tuple)) \
            else wrap_dim(dims, input.ndim)
        if len(shifts if isinstance(shifts, tuple) else (0,)) != len(
                dims if isinstance(dims, tuple) else (0,)):
            raise RuntimeError(f"shifts and dimensions must align. shifts: "
                               f"{len(shifts) if isinstance(shifts, tuple) else 1}, dims:"
                               f"{len(dims) if isinstance(dims, tuple) else 1}")
    return apply(ROLL, (input,), {"shifts": shifts, "dims": dims})


@export
def tril(input, diagonal=0) -> Tensor:
    if input.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return apply(TRIL, (input,), {"k": diagonal})


@export
def triu(input, diagonal=0) -> Tensor:
    if input.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return apply(TRIU, (input,), {"k": diagonal})


_NARROW_FORMS = ("(int dim, Tensor start, int length)", "(int dim, int start, int length)")


@export
def narrow(input, dim, start, length) -> Tensor:
    """``narrow(input, dim, start, length)``: ``length`` elements of ``dim`` from ``start``."""
    if dim.__class__ is bool or start.__class__ is bool or length.__class__ is bool:
        raise invalid_arguments("narrow", _NARROW_FORMS, dim, start, length)
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.ndim)
    if not -input.shape[d] <= int(start) <= input.shape[d]:
        raise IndexError(f"start out of range (expected to be in range of [{-input.shape[d]}, "
                         f"{input.shape[d]}], but got {int(start)})")
    start = _dim(int(start), input.shape[d])
    if start + int(length) > input.shape[d]:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({input.shape[d]}).")
    return view_apply(NARROW, input, {"dim": d, "start": start, "length": int(length)})


@export
def clone(input, *, memory_format=None) -> Tensor:
    return apply(CLONE, (input,))


@export
def diagonal(input, offset=0, dim1=0, dim2=1) -> Tensor:
    """``diagonal(input, offset=0, dim1=0, dim2=1)``: a view of the diagonal of the
    ``(dim1, dim2)`` planes (above it for ``offset > 0``), as the last dimension."""
    n = input.ndim
    d1, d2 = wrap_dim(dim1, n, "diagonal", "dim1", 2), wrap_dim(dim2, n, "diagonal", "dim2", 3)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return view_apply(DIAGONAL, input, {"off": int(offset), "d1": d1, "d2": d2})


TENSOR_PROPERTIES = {}  # name -> getter, filled by the modules that define them


@export(name="tril_", function=False)
def _inplace_tril(self, diagonal=0) -> Tensor:
    return apply(TRIL, (self,), {"k": diagonal}, out=self)


@export(name="triu_", function=False)
def _inplace_triu(self, diagonal=0) -> Tensor:
    return apply(TRIU, (self,), {"k": diagonal}, out=self)


_MOVEDIM_FORMS = ("(int source, int destination)",
                  "(tuple of ints source, tuple of ints destination)")


def _mover(name):
    """``movedim`` or its alias ``moveaxis``: one body, made per name, as PyTorch's errors
    name the one called."""
    def move(input, source, destination) -> Tensor:
        if (source.__class__ is not int or destination.__class__ is not int) and builtins.any(
                v.__class__ is bool or isinstance(v, (tuple, list)) and v and
                v[0].__class__ is bool for v in (source, destination)):
            raise invalid_arguments(name, _MOVEDIM_FORMS, source, destination)
        src = (source,) if isinstance(source, int) else tuple(source)
        dst = (destination,) if isinstance(destination, int) else tuple(destination)
        n = input.ndim
        if len(src) != len(dst):
            raise RuntimeError(f"movedim: Invalid source or destination dims: source "
                               f"({list(src)} dims) should contain the same number of dims as "
                               f"destination ({list(dst)} dims)")
        order = [None] * n
        for s_, d_ in zip(_dims_arg(src, n), _dims_arg(dst, n)):
            order[d_] = s_
        rest = iter(d for d in range(n) if d not in _dims_arg(src, n))
        perm = tuple(o if o is not None else next(rest) for o in order)
        return permute(input, perm)
    move.__name__ = move.__qualname__ = name
    move.__doc__ = ("``movedim(input, source, destination)`` (alias ``moveaxis``): dims moved, "
                    "the rest keeping their order.")
    return move


movedim = export(_mover("movedim"))
moveaxis = export(_mover("moveaxis"))


@export
def as_strided(input, size, stride, storage_offset=None) -> Tensor:
    """``as_strided(input, size, stride, storage_offset=None)``: a view of ``input``'s
    storage with the given sizes, strides (in elements) and offset (``input``'s own by
    default). Here ``input`` must be contiguous, and the view must lie within it."""
    from .views import AS_STRIDED
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    _, _, own = _views.geometry(input)
    off = own if storage_offset is None else int(storage_offset)
    if not input.is_contiguous():
        raise RuntimeError("as_strided: hookgrad needs a contiguous input (its storage order is "
                           "its element order); call .contiguous() first")
    rel = off - own
    hi = rel + builtins.sum((s - 1) * st for s, st in zip(size, stride) if s > 0)
    if rel < 0 or (builtins.all(s > 0 for s in size) and hi >= input.numel()):
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {off} lie outside the input's {input.numel()} elements")
    return view_apply(AS_STRIDED, input, {"size": size, "stride": stride, "offset": rel})
