"""A tensor cut into pieces along a dimension: ``split``, ``split_with_sizes``, ``chunk``,
``unbind``. Each piece is a view of the input (one multi-output view op, whose node PyTorch
names ``SplitBackward0``, ``SplitWithSizesBackward0``, ``UnbindBackward0``).
"""
from __future__ import annotations

import builtins

import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from .parser_errors import invalid_arguments, not_a
from .registry import defop, export
from .shape import wrap_dim
from .views import multi_view_apply, narrow_geometry, select_geometry

SPLIT = defop("split", lambda x, sections, dim: tuple(jnp.split(x, sections, axis=dim)),
              "SplitBackward0", (),
              names="self -> dim self_sym_sizes split_size=sections:first")
SPLIT_SIZES = defop("split_with_sizes", lambda x, split_sizes, dim: tuple(
    jnp.split(x, np.cumsum(split_sizes)[:-1].tolist(), axis=dim)), "SplitWithSizesBackward0",
    (), names="self -> dim self_sym_sizes split_sizes")
UNBIND = defop("unbind", lambda x, dim: tuple(jnp.moveaxis(x, dim, 0)), "UnbindBackward0", (),
               names="self -> dim")


_SPLIT_FORMS = ("(Tensor input, int split_size, int dim = 0)",
                "(Tensor input, tuple of ints split_size, int dim = 0)")


@export
def split(tensor, split_size_or_sections, dim=0) -> tuple[Tensor, ...]:
    """``split(tensor, split_size_or_sections, dim=0)``: a tuple of pieces of size
    ``split_size`` (the last may be smaller) or of the given sizes."""
    if dim.__class__ is bool or split_size_or_sections.__class__ is bool:
        if isinstance(split_size_or_sections, int):  # PyTorch's Tensor.split, in Python
            raise invalid_arguments("split", _SPLIT_FORMS, tensor, split_size_or_sections, dim)
        raise not_a("split_with_sizes", "dim", dim, position=3)
    _at_least_1d(tensor, "split")
    shape = tensor._arr.shape  # (read once: a Tensor's shape and ndim cost frames)
    d = wrap_dim(dim, len(shape))
    n = shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size == 0 and n != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        cuts = tuple(range(size, n, size))
        op, statics = SPLIT, {"sections": cuts}
    else:
        sizes = list(split_size_or_sections)
        if builtins.sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {dim}), but got "
                               f"split_sizes={sizes}")
        cuts = tuple(np.cumsum(sizes)[:-1].tolist())
        op, statics = SPLIT_SIZES, {"split_sizes": tuple(int(s) for s in sizes)}
    starts = (0, *cuts)
    # ``dim`` as given, which PyTorch's nodes save
    return multi_view_apply(op, tensor, {**statics, "dim": int(dim)}, lambda out: [
        narrow_geometry(d, a, o._arr.shape[d]) for a, o in zip(starts, out)])  # (outputs)


def _at_least_1d(input, name):
    if not input._arr.shape:
        raise RuntimeError(f"{name} expects at least a 1-dimensional tensor")


@export
def chunk(input, chunks, dim=0) -> tuple[Tensor, ...]:
    """``chunk(input, chunks, dim=0)``: at most ``chunks`` pieces of ``ceil(n / chunks)``."""
    if chunks.__class__ is bool:
        raise not_a("chunk", "chunks", chunks)
    _at_least_1d(input, "chunk")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input.shape[wrap_dim(dim, input.ndim, "chunk", "dim", 2)]
    size = -(-n // chunks)
    return split(input, builtins.max(size, 1), dim)


@export
def unbind(input, dim=0) -> tuple[Tensor, ...]:
    """``unbind(input, dim=0)``: a tuple of the slices along ``dim``."""
    d = wrap_dim(dim, input.ndim, "unbind")
    return multi_view_apply(UNBIND, input, {"dim": d}, lambda out: [
        select_geometry(d, i) for i in range(len(out))])


@export
def split_with_sizes(input, split_sizes, dim=0) -> tuple[Tensor, ...]:
    """``split_with_sizes(input, split_sizes, dim=0)``: :func:`split` with a list of sizes."""
    if dim.__class__ is bool:  # as the method names it (``split`` calls the function form)
        raise not_a("split_with_sizes", "dim", dim, position=2)
    return split(input, list(split_sizes), dim)
