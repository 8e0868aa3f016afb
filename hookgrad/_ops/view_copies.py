"""The ``*_copy`` functions: a view op's result as a fresh tensor (``permute_copy``,
``select_copy``, ...).

Each runs its view function, with its argument checks and PyTorch's errors, while
``views.view_apply`` applies the view op's twin instead: the same JAX forward, recorded
under PyTorch's ``<Node>_copy`` name (``PermuteBackward0_copy``) and marked a view of
nothing.
"""
from __future__ import annotations

import contextlib
import inspect

from .._tensor import Tensor
from . import indexing, pieces, placement, shape, views
from .dispatch import NOT_IMPLEMENTED, apply
from .registry import defop, export, with_out

_VIEW_OPS = (shape.VIEW, shape.PERMUTE, shape.TRANSPOSE, shape.T, shape.SQUEEZE,
             shape.SQUEEZE_DIM, shape.SQUEEZE_DIMS, shape.UNSQUEEZE, shape.DIAGONAL,
             shape.ALIAS, indexing.SELECT, indexing.SLICE, shape.EXPAND, pieces.SPLIT,
             pieces.SPLIT_SIZES, pieces.UNBIND, views.AS_STRIDED,
             placement._UNFOLD)

TWINS = {op.name: defop(op.name + "_copy", op.fwd, op.node + "_copy", op.save, op.bwd,
                        names=op.names) for op in _VIEW_OPS}
# narrow_copy has a node of its own in PyTorch, not SliceBackward0_copy
TWINS["narrow"] = defop("narrow_copy", shape.NARROW.fwd, "NarrowCopyBackward0",
                        shape.NARROW.save, names="self -> self_sym_sizes dim start length")


@contextlib.contextmanager
def _copying():
    views.COPY_TWIN[0] = lambda op: TWINS[op.name]
    try:
        yield
    finally:
        views.COPY_TWIN[0] = None


def _copy_of(view_fn, name, method=False):
    """Publish ``hookgrad.<name>``: ``view_fn``'s result as a copy."""
    def fn(*args, **kwargs) -> Tensor:
        with _copying():
            return view_fn(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Performs the same operation as :func:`hookgrad.{name[:-5]}`, but the "
                  "output tensor is freshly created instead of aliasing the input.")
    fn.__signature__ = inspect.signature(view_fn)
    fn.__annotations__ = {"return": "Tensor"}
    return export(with_out(fn), method=method)


def _view(input, size) -> Tensor:
    return shape.view(input, *((size,) if isinstance(size, int) else size))


def _slice(input, dim=0, start=None, end=None, step=1) -> Tensor:
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = shape.wrap_dim(dim, input.ndim)
    given = (int(dim), indexing.int_or_none(start), indexing.int_or_none(end), int(step))
    return indexing._slice(input, d, given, True)


def _alias(input) -> Tensor:
    return views.view_apply(shape.ALIAS, input)


def _expand(input, size, *, implicit=False) -> Tensor:
    return shape.expand(input, *size)


def _unfold(input, dimension, size, step) -> Tensor:
    return placement.unfold(input, dimension, size, step)


view_copy = _copy_of(_view, "view_copy")
permute_copy = _copy_of(shape.permute, "permute_copy")
transpose_copy = _copy_of(shape.transpose, "transpose_copy")
t_copy = _copy_of(shape.t, "t_copy")
squeeze_copy = _copy_of(shape.squeeze, "squeeze_copy")
unsqueeze_copy = _copy_of(shape.unsqueeze, "unsqueeze_copy")
diagonal_copy = _copy_of(shape.diagonal, "diagonal_copy")
select_copy = _copy_of(indexing.select, "select_copy")
slice_copy = _copy_of(_slice, "slice_copy")
narrow_copy = _copy_of(shape.narrow, "narrow_copy", method=True)
alias_copy = _copy_of(_alias, "alias_copy")
expand_copy = _copy_of(_expand, "expand_copy")
split_copy = _copy_of(pieces.split, "split_copy")
split_with_sizes_copy = _copy_of(pieces.split_with_sizes, "split_with_sizes_copy")
unbind_copy = _copy_of(pieces.unbind, "unbind_copy")
unfold_copy = _copy_of(_unfold, "unfold_copy")
as_strided_copy = _copy_of(shape.as_strided, "as_strided_copy")

# no derivative, as PyTorch's (its backward raises)
_DETACH_COPY = defop("detach_copy", lambda x: x, NOT_IMPLEMENTED, ())


@export(method=False)
def detach_copy(input) -> Tensor:  # noqa: A002 - PyTorch's parameter name
    """A copy of ``input`` that PyTorch records without a derivative: backward through it
    raises "derivative for detach_copy is not implemented"."""
    return apply(_DETACH_COPY, (input,))


@export(method=False, name="detach_")
def _detach_(input) -> Tensor:  # noqa: A002
    """``detach_(input)``: ``input.detach_()``."""
    return input.detach_()
