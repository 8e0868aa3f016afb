"""Joining, stacking, splitting and rearranging: cat and stack, and built from the shape ops
hstack/vstack/dstack, column_stack, atleast_Nd, tensor_split and h/v/dsplit, meshgrid, cartesian_prod,
block_diag, tile, ravel, fliplr/flipud, rot90, diag_embed, diag, diagflat.

Each is PyTorch's composition of the shape ops, so it records the nodes PyTorch's records
(``CatBackward0`` for the stacks, ``SliceBackward0`` for the splits, ...).
"""
from __future__ import annotations

import operator

import jax
import jax.numpy as jnp

from .. import _dtype
from .._errors import type_name
from .._memo import keep
from .._tensor import Tensor
from . import dispatch
from .dispatch import apply, on_host
from .host_forms import stacked
from .host_tier import held
from .stages.host import _held_parts
from .stages.modes import INTERCEPT
from .registry import FUNCTIONS, defop, export, to_tensor_like
from .shape import flip, narrow, reshape, wrap_dim

CAT = defop("cat", lambda *xs, dim: jnp.concatenate(xs, axis=dim), "CatBackward0", (),
            names="self -> dim")
STACK = defop("stack", lambda *xs, dim: jnp.stack(xs, axis=dim), "StackBackward0", (),
              names="self -> dim")


def tensor_seq(name, tensors):
    """``tensors``, a list or tuple (PyTorch's parser takes no other iterable, nor a Tensor)."""
    if tensors.__class__ not in (list, tuple) and (
            isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple))):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    return tensors


def _refuse_elements(tensors):
    for k, t in enumerate(tensors):
        if t is None or isinstance(t, (str, bytes, dict, set)):
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got "
                            f"{type_name(t)}") from None


@export(aliases=("concat", "concatenate"), method=False)
def cat(tensors, dim=0) -> Tensor:
    """``cat(tensors, dim=0)`` (aliases ``concat``, ``concatenate``): tensors joined along
    an existing dimension."""
    key = None
    if tensors.__class__ in _SEQUENCES and dim.__class__ is int and \
            set(map(type, tensors)) == _PLAIN:
        # the parts' shapes and ``dim`` checked once (a KV cache joins the same shapes per
        # layer per step): the dimension they join along, remembered
        key = (tuple(map(_SHAPE, tensors)), dim)
        d = _JOINS.get(key)
        if d is not None:
            return apply(CAT, tuple(tensors), {"dim": d})
    try:
        tensors = [t if isinstance(t, Tensor) else to_tensor_like(t)
                   for t in tensor_seq("cat", tensors)]
    except TypeError:  # an element that is no Tensor nor array: PyTorch's parser's words
        _refuse_elements(tensors)
        raise
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    # each part's shape read once (a KV cache joins per layer per step)
    shapes = [t._arr.shape for t in tensors]
    for k, shape in enumerate(shapes):
        if not shape:
            raise RuntimeError(f"zero-dimensional tensor (at position {k}) cannot be "
                               "concatenated")
    if (0,) in shapes:  # legacy: 1-d empty tensors are skipped whatever their shape
        kept = [k for k, shape in enumerate(shapes) if shape != (0,)] or [0]
        tensors, shapes = [tensors[k] for k in kept], [shapes[k] for k in kept]
    ref = shapes[0]
    d = wrap_dim(dim, len(ref), "cat", "dim", 2)
    for k in range(1, len(shapes)):
        shape = shapes[k]
        if len(shape) != len(ref):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(ref)} and "
                               f"{len(shape)}")
        for i, (a, b) in enumerate(zip(ref, shape)):
            if i != d and a != b:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {a} but got size {b} for tensor number {k} "
                                   "in the list.")
    if key is not None and len(shapes) == len(key[0]):  # (no empty 1-d part skipped)
        keep(_JOINS, key, d)
    return apply(CAT, tuple(tensors), {"dim": d})


_SEQUENCES = frozenset((list, tuple))
_PLAIN = {Tensor}
_SHAPE = operator.attrgetter("_arr.shape")
_JOINS = {}  # (the parts' shapes, dim) that join -> the dimension, wrapped


@export(method=False)
def stack(tensors, dim=0) -> Tensor:
    """``stack(tensors, dim=0)``: equal-shaped tensors joined along a new dimension."""
    if dim.__class__ is int and dim >= 0 and tensors.__class__ in (list, tuple):
        if (res := _held_stack(tensors, dim)) is not None or (
                res := on_host(STACK, tuple(tensors), {"dim": dim})) is not None:
            return res  # a collate's host-held samples (the form checks their shapes)
    tensors = [t if isinstance(t, Tensor) else to_tensor_like(t)
               for t in tensor_seq("stack", tensors)]
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    d = wrap_dim(dim, tensors[0].ndim + 1, "stack", "dim", 2)
    ref = tensors[0]._arr.shape  # a tuple: one comparison per part, no Size built
    for k, t in enumerate(tensors[1:], 1):
        if t._arr.shape != ref:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(ref)} at entry 0 and {list(t.shape)} at entry {k}")
    return apply(STACK, tuple(tensors), {"dim": d})


def _held_stack(tensors, dim):
    """``stack(tensors, dim)`` of plain host-held Tensors of one dtype and shape that
    nothing differentiates, intercepts or places (a collate's samples), as one NumPy
    join; else None. The op path's host stage does the same through the row's rule and
    form, which ask each part's dtype twice and cast: a third of a collate's time."""
    if INTERCEPT[0] or dispatch._dual[0] or len(tensors) < 2:
        return None
    parts = _held_parts(tensors)
    if parts is None or jax.config.jax_default_device is not None or \
            (res := stacked(parts, dim)) is None:
        return None
    res.setflags(write=False)  # a host-held result nothing writes (a write copies it)
    return held(res)


def _seq(name, tensors):
    return list(tensor_seq(name, tensors))


def _atleast(n, tensors):
    def one(t):
        # PyTorch's: a 0-d reshaped to ones; a 1-d [k] unsqueezed to [1, k] (and [1, k, 1]);
        # a 2-d [a, b] to [a, b, 1]
        if t.ndim >= n:
            return t
        if t.ndim == 0:
            return t.reshape(*(1,) * n)
        if t.ndim == 1:
            t = t.unsqueeze(0)
        return t.unsqueeze(-1) if t.ndim < n else t
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(one(t) for t in tensors[0])
    out = tuple(one(t) for t in tensors)
    return out[0] if len(out) == 1 else out


@export(method=False)
def atleast_1d(*tensors) -> Tensor | tuple[Tensor, ...]:
    """``atleast_1d(*tensors)``: each 0-d input as a 1-element 1-d tensor, the others as
    they are."""
    return _atleast(1, tensors)


@export(method=False)
def atleast_2d(*tensors) -> Tensor | tuple[Tensor, ...]:
    """``atleast_2d(*tensors)``: each input with at least two dimensions (new ones lead)."""
    return _atleast(2, tensors)


@export(method=False)
def atleast_3d(*tensors) -> Tensor | tuple[Tensor, ...]:
    """``atleast_3d(*tensors)``: each input with at least three dimensions (a 1-d ``[k]``
    becomes ``[1, k, 1]``, a 2-d ``[a, b]`` becomes ``[a, b, 1]``)."""
    return _atleast(3, tensors)


@export(method=False)
def hstack(tensors) -> Tensor:
    """``hstack(tensors)``: concatenated column-wise (along dim 1; 1-d inputs along 0)."""
    ts = _atleast(1, (_seq("hstack", tensors),))
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


@export(method=False, aliases=("row_stack",))
def vstack(tensors) -> Tensor:
    """``vstack(tensors)`` (alias ``row_stack``): concatenated row-wise, 1-d inputs as
    rows."""
    return cat(_atleast(2, (_seq("vstack", tensors),)), 0)


@export(method=False)
def dstack(tensors) -> Tensor:
    """``dstack(tensors)``: concatenated depth-wise (along dim 2, after ``atleast_3d``)."""
    return cat(_atleast(3, (_seq("dstack", tensors),)), 2)


@export(method=False)
def column_stack(tensors) -> Tensor:
    """``column_stack(tensors)``: 0-d and 1-d inputs as columns, then concatenated along
    dim 1."""
    ts = [t.reshape(t.numel(), 1) if t.ndim <= 1 else t
          for t in _seq("column_stack", tensors)]
    return cat(ts, 1)


@export
def tensor_split(input, indices_or_sections, dim=0) -> tuple[Tensor, ...]:
    """``tensor_split(input, indices_or_sections, dim=0)``: ``n`` near-equal pieces along
    ``dim`` (the first ``size % n`` one longer), or the pieces between the given indices."""
    dim = wrap_dim(dim, input.ndim)
    size = input.shape[dim]
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        cuts = [k * q + min(k, r) for k in range(1, n)]
    else:
        # Python slicing's indices: negative ones count from the end, all clamped to the size
        cuts = [min(max(int(i) + size if i < 0 else int(i), 0), size)
                for i in indices_or_sections]
    pairs = zip([0, *cuts], [*cuts, size])
    return tuple(narrow(input, dim, a, max(b - a, 0)) for a, b in pairs)


def _split_along(name, input, sections, dim, need):
    if input.ndim < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, "
                           f"but got a tensor with {input.ndim} dimensions!")
    if isinstance(sections, int) and (sections == 0 or input.shape[dim] % sections):
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                           f"size of the dimension {input.shape[dim]} is not divisible by the "
                           f"split_size {sections}!")
    return tensor_split(input, sections, dim)


@export
def hsplit(input, sections) -> tuple[Tensor, ...]:
    """``hsplit(input, sections)``: :func:`tensor_split` along dim 1 (dim 0 for 1-d); an
    int must divide the dimension."""
    return _split_along("hsplit", input, sections, 1 if input.ndim > 1 else 0, 1)


@export
def vsplit(input, sections) -> tuple[Tensor, ...]:
    """``vsplit(input, sections)``: :func:`tensor_split` along dim 0 of a 2-d or more
    tensor."""
    return _split_along("vsplit", input, sections, 0, 2)


@export
def dsplit(input, sections) -> tuple[Tensor, ...]:
    """``dsplit(input, sections)``: :func:`tensor_split` along dim 2 of a 3-d or more
    tensor."""
    return _split_along("dsplit", input, sections, 2, 3)


@export(method=False)
def meshgrid(*tensors, indexing=None) -> tuple[Tensor, ...]:
    """``meshgrid(*tensors, indexing='ij')``: the grids of N 1-d (or 0-d) tensors, each of
    shape ``(len(t0), ..., len(tN))``; ``indexing='xy'`` swaps the first two dims."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    ts = [t.reshape(-1) for t in tensors]
    if indexing == "xy" and len(ts) >= 2:
        ts[0], ts[1] = ts[1], ts[0]
    shape = [t.shape[0] for t in ts]
    grids = [t.reshape(*(n if k == i else 1 for k, n in enumerate(shape))).expand(*shape)
             for i, t in enumerate(ts)]
    if indexing == "xy" and len(ts) >= 2:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


@export(method=False)
def cartesian_prod(*tensors) -> Tensor:
    """``cartesian_prod(*tensors)``: every combination of the 1-d inputs' elements, one
    per row (a single input is returned as it is)."""
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.reshape(-1) for g in meshgrid(*tensors, indexing="ij")], 1)


def _block_diag(*xs):
    return jax.scipy.linalg.block_diag(*(x.reshape(1, -1) if x.ndim < 2 else x for x in xs))


_BLOCK_DIAG = defop("block_diag", _block_diag, "BlockDiagBackward0", ())


@export(method=False)
def block_diag(*tensors) -> Tensor:
    """``block_diag(*tensors)``: the inputs (0-, 1- or 2-d) along the diagonal of a
    zero matrix."""
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.ndim} dimensions")
    return apply(_BLOCK_DIAG, tuple(tensors))


@export
def tile(input, *dims) -> Tensor:
    """``tile(input, dims)``: ``input`` repeated ``dims[i]`` times along each dimension
    (``dims`` shorter than ``input.ndim`` is padded with leading ones; the method also
    takes them as separate ints)."""
    dims = tuple(dims[0]) if len(dims) == 1 and not isinstance(dims[0], int) else dims
    dims = (1,) * (input.ndim - len(dims)) + dims
    return input.repeat(*dims)


@export
def ravel(input) -> Tensor:
    """``ravel(input)``: ``input`` as one dimension."""
    return reshape(input, -1)


@export
def fliplr(input) -> Tensor:
    """``fliplr(input)``: the columns (dim 1) reversed."""
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


@export
def flipud(input) -> Tensor:
    """``flipud(input)``: the rows (dim 0) reversed."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


@export
def rot90(input, k=1, dims=(0, 1)) -> Tensor:
    """``rot90(input, k=1, dims=(0, 1))``: rotated by 90 degrees ``k`` times, from the
    first of ``dims`` towards the second."""
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = (wrap_dim(d, input.ndim) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    return apply(_ROT90, (input,), {"k": int(k) % 4, "dims": (d0, d1)})


_ROT90 = defop("rot90", lambda x, k, dims: jnp.rot90(x, k, dims), "Rot90Backward0", (),
               names="self -> dims k")


def _diag_embed(x, offset, dim1, dim2):
    dim1, dim2 = dim1 % (x.ndim + 1), dim2 % (x.ndim + 1)  # PyTorch saves them as given
    n = x.shape[-1] + abs(offset)
    eye = jnp.eye(n, k=offset, dtype=bool)
    rows = jnp.arange(n) - max(-offset, 0)
    idx = jnp.clip(rows, 0, x.shape[-1] - 1)
    # NOTE: a select, not a product with the identity: -1.5 * 0 is -0.0, PyTorch's zeros +0.0
    full = jnp.where(eye, jnp.take(x, idx, axis=-1)[..., :, None], jnp.zeros((), x.dtype))
    nd = full.ndim
    return jnp.moveaxis(full, (nd - 2, nd - 1), (dim1, dim2))


_DIAG_EMBED = defop("diag_embed", _diag_embed, "DiagEmbedBackward0", (),
                    names="self -> dim1=dim1 dim2=dim2 offset=offset")


@export
def diag_embed(input, offset=0, dim1=-2, dim2=-1) -> Tensor:
    """``diag_embed(input, offset=0, dim1=-2, dim2=-1)``: matrices (in dims ``dim1``,
    ``dim2`` of the result) whose ``offset`` diagonal is the last dimension of ``input``."""
    nd = input.ndim + 1
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(_DIAG_EMBED, (input,), {"offset": int(offset), "dim1": int(dim1),
                                          "dim2": int(dim2)})


@export
def diag(input, diagonal=0) -> Tensor:
    """``diag(input, diagonal=0)``: a 1-d input as the ``diagonal``-th diagonal of a square
    matrix; a 2-d input's ``diagonal``-th diagonal."""
    if input.ndim == 1:
        return diag_embed(input, diagonal)
    if input.ndim == 2:
        return apply(_DIAG, (input,), {"k": int(diagonal)})
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " f"{input.ndim}D")


# PyTorch's diag of a matrix is diagonal_copy, whose node keeps that name
_DIAG = defop("diag", lambda x, k: jnp.diagonal(x, k), "DiagonalBackward0_copy", (),
              names="self -> dim1=0 dim2=1 offset=k self_sym_sizes")


@export
def diagflat(input, offset=0) -> Tensor:
    """``diagflat(input, offset=0)``: ``input`` flattened, as the ``offset``-th diagonal of
    a square matrix."""
    return diag_embed(input.reshape(-1), offset, 0, 1)


def _pad_constant(x, pad, pairs, value):
    # ``pad``: PyTorch's argument, what the node saves; applied as ``pairs``, (before,
    # after) per dimension, a negative one cropping inside the op, as PyTorch's kernel does
    # (no slice is recorded before it)
    return jax.lax.pad(x, jnp.asarray(value, x.dtype), [(lo, hi, 0) for lo, hi in pairs])


# the one row of ``constant_pad_nd`` and ``F.pad``'s constant mode
CONSTANT_PAD = defop("constant_pad_nd", _pad_constant, "ConstantPadNdBackward0", (),
                     names="self -> pad")


@export(method=False)
def constant_pad_nd(input, pad, value=0) -> Tensor:
    """``constant_pad_nd(input, pad, value=0)``: ``input`` padded with ``value``; ``pad``
    gives (before, after) pairs from the last dimension backwards (negative ones crop)."""
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}"
                           if len(pad) % 2 else "Length of pad should be no more than twice "
                           "the number of dimensions of the input.")
    pairs = [(0, 0)] * input.ndim
    for k in range(len(pad) // 2):
        pairs[input.ndim - 1 - k] = (int(pad[2 * k]), int(pad[2 * k + 1]))
    return apply(CONSTANT_PAD, (input,), {"pad": tuple(int(p) for p in pad),
                                          "pairs": tuple(pairs), "value": value})


@export(function=False)
def sum_to_size(self, *size) -> Tensor:
    """``sum_to_size(*size)``: ``self`` summed down to ``size``, a shape it broadcasts
    from."""
    size = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else size
    lead = self.ndim - len(size)
    if lead < 0 or any(s != 1 and s != n for s, n in zip(size, self.shape[lead:])):
        raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                           f"{{{', '.join(map(str, self.shape))}}}.")
    dims = [*range(lead), *(lead + i for i, s in enumerate(size)
                            if s == 1 and self.shape[lead + i] != 1)]
    out = self.sum(dims, keepdim=True) if dims else self
    return out.reshape(*size) if lead else out


@export(method=False)
def unravel_index(indices, shape) -> tuple[Tensor, ...]:
    """``unravel_index(indices, shape)``: the coordinates in a tensor of ``shape`` of the
    flat ``indices``, one tensor per dimension."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if indices.dtype.is_floating_point or indices.dtype.is_complex or \
            indices.dtype.name == "bool":
        raise TypeError("expected 'indices' to be integer dtype, but got "
                        f"{_dtype.TORCH_KINDS.get(indices.dtype.name)}")
    out, rest = [], indices
    for n in reversed(shape):
        out.append(FUNCTIONS["remainder"](rest, n))
        rest = FUNCTIONS["div"](rest, n, rounding_mode="floor")
    return tuple(reversed(out))


@export(method=False)
def combinations(input, r=2, with_replacement=False) -> Tensor:
    """``combinations(input, r=2, with_replacement=False)``: the length-``r`` combinations
    of the 1-d ``input``'s elements, one per row (as ``itertools.combinations``)."""
    import itertools
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    rows = list(pick(range(input.shape[0]), r))
    if not rows:
        return input.new_zeros(0) if r else input.new_zeros(0)
    cols = [Tensor._wrap(jnp.asarray([row[k] for row in rows])) for k in range(r)]
    return stack([input[c] for c in cols], 1)
