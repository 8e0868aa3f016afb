"""``repeat_interleave``: each element (or slice along ``dim``) repeated, by a count or by a
Tensor of counts. PyTorch records a repeat by counts as an index gather
(``IndexSelectBackward0``); the counts' total, when a traced Tensor gives them, comes from
``output_size``.
"""
from __future__ import annotations

import builtins

import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from .dispatch import apply
from .registry import defop, export
from .shape import reshape, size_at, wrap_dim


REPEAT_INTERLEAVE = defop("repeat_interleave", lambda x, repeats, dim: jnp.repeat(
    x, repeats, axis=dim), "ViewBackward0", ())
# PyTorch gathers with the repeated indices: its node is IndexSelectBackward0
REPEAT_INTERLEAVE_TENSOR = defop("repeat_interleave_tensor", lambda x, r, dim, total: jnp.repeat(
    x, r, axis=dim, total_repeat_length=total), "IndexSelectBackward0", {0: (1,)}, nondiff=(1,))


def _check_repeats(repeats):
    if repeats.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if repeats.dtype.is_floating_point or repeats.dtype.is_complex:
        from .._dtype import torch_kind as _torch_kind
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for "
                                  f"'{_torch_kind(repeats._data.dtype)}'")


def _repeat_total(repeats, output_size):
    """The output length: ``output_size``, checked against ``repeats`` when concrete."""
    if isinstance(repeats._data, jax.core.Tracer):
        if output_size is None:
            raise RuntimeError(
                "repeat_interleave with a tensor of repeats needs their values to know the "
                "output's size, and they are traced here (inside hookgrad.compile or a JAX "
                "transformation). Pass output_size=<sum of repeats>, or int repeats.")
        return int(output_size)
    r = np.asarray(repeats._data)
    if (r < 0).any():
        raise RuntimeError("repeats can not be negative")
    total = int(r.sum())
    if output_size is not None and int(output_size) != total:
        raise RuntimeError("allocated size does not match required size")
    return total


@export
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None) -> Tensor:
    """``repeat_interleave(input, repeats, dim=None, *, output_size=None)``: each element
    (slice along ``dim``; of the flattened input when ``dim`` is None) repeated ``repeats``
    times; ``repeats`` is an int or a tensor of one count per slice.
    ``repeat_interleave(repeats)``: ``arange(len(repeats))`` repeated that way.

    A tensor of repeats must be concrete (eager), unless ``output_size`` is given.

    >>> hookgrad.tensor([1, 2]).repeat_interleave(2)
    tensor([1, 1, 2, 2])
    """
    if repeats is None:  # repeat_interleave(repeats)
        if input.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        _check_repeats(input)
        from .._factory import arange
        return repeat_interleave(arange(input.shape[0]), input, 0, output_size=output_size)
    if dim is None:
        input, dim = reshape(input, -1), 0
    d = wrap_dim(dim, input.ndim)
    if isinstance(repeats, Tensor):
        _check_repeats(repeats)
        n = size_at(input, dim)
        if repeats.ndim == 0 or repeats.shape[0] == 1:
            repeats = repeats.reshape(()).expand(n)
        elif repeats.shape[0] != n:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {repeats.shape[0]} and input.size({d}) = {n}")
        total = _repeat_total(repeats, output_size)
        return apply(REPEAT_INTERLEAVE_TENSOR, (input, repeats), {"dim": d, "total": total})
    if isinstance(repeats, builtins.bool) or not isinstance(repeats, (int, np.integer)):
        raise TypeError(f"repeat_interleave(): argument 'repeats' must be Tensor or int, not "
                        f"{type(repeats).__name__}")
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    # PyTorch repeats by unsqueezing after ``dim``: a 0-d input has no dim 1
    wrap_dim(d + 1, input.ndim + 1)
    want = (input.shape[d] if input.ndim else 1) * int(repeats)
    if output_size is not None and int(output_size) != want:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {want} but got "
                           f"{output_size}")
    return apply(REPEAT_INTERLEAVE, (input,), {"repeats": int(repeats), "dim": d})
