"""Indexing: ``x[idx]``, ``x[idx] = v``, ``index_put_``, ``index_add``.

An index (ints, slices, None, Ellipsis, bools, integer or boolean tensors, lists) is split
into a hashable template, a static argument of the jitted op, and the integer arrays it
uses, passed as (non-differentiable) arguments. Boolean masks have data-dependent result
shapes: ``x[mask]`` keeps the mask (``("M", i, ndim, count)``, the count of True entries
static), so its node saves the mask as PyTorch's does; writes (``x[mask] = v``) turn it
into integer arrays eagerly.

``x[idx]`` records what PyTorch records: the basic indices applied left to right, one node
each (``SelectBackward0`` for an int, ``SliceBackward0`` for a slice that is not the whole
dimension, ``UnsqueezeBackward0`` for None), then one ``IndexBackward0`` for all advanced
indices (tensors, lists, bools) on the result; ``AliasBackward0`` when nothing else is
recorded. (So ``x[0, :, idx]`` indexes the selected tensor, PyTorch's semantics, where
NumPy would move the advanced dimension first.)
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _memo, _views
from .._autograd import grad_mode
from .._tensor import Tensor
from .._views import contiguous_shape_geometry
from . import basic_index
from .dispatch import Op, apply, pack_before_error
from .gather import (check_index, check_index_dtype, check_index_source, out_of_bounds,
                     out_of_range, packing)
from .index_box import box_shape, boxed, consumed as _consumed, setitem_positions
from .promotion import index_put_dtype_error, same_source_dtype
from .registry import defop, export, to_tensor_like
from .shape import ALIAS, UNSQUEEZE, expand, reshape, slice_from, wrap_dim
from .views import (check_setitem_view, chain_geometry, view_apply, view_chain,
                    view_geometry)

_gm = grad_mode._state
_AFTER_SELF = frozenset(range(1, 64))   # getitem: every index array (after x) has no edge
_AFTER_VALUE = frozenset(range(2, 64))  # setitem: (x, value, *index arrays)


def _is_concrete(arr):
    return not isinstance(arr, jax.core.Tracer)


def _parse_index(idx, ints_as_arrays=False, masks=False):
    """Split an index into a hashable template and the integer-array Tensors it uses;
    with ``masks``, boolean masks stay masks (``("M", i, ndim, count)``)."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    template = []
    arrays = []
    for k in idx:
        if isinstance(k, (Tensor, np.ndarray, jax.Array, list)):
            arr = k._data if isinstance(k, Tensor) else jnp.asarray(k)
            if arr.ndim == 0 and not ints_as_arrays and _is_concrete(arr) and (
                    arr.dtype == jnp.bool_ or jnp.issubdtype(arr.dtype, jnp.integer)):
                # a 0-d integer tensor indexes as an int (select), as in PyTorch
                k = bool(arr) if arr.dtype == jnp.bool_ else int(arr)
            elif arr.dtype == jnp.bool_:
                # boolean masks have data-dependent shapes: integer indices, eagerly
                if not _is_concrete(arr):
                    raise RuntimeError("boolean-mask indexing has a data-dependent shape and "
                                       "cannot be traced; use hookgrad.where instead")
                if masks:  # the count of True entries is static: one program per count
                    template.append(("M", len(arrays), arr.ndim,
                                     int(np.count_nonzero(np.asarray(arr)))))
                    arrays.append(k if isinstance(k, Tensor) else Tensor._wrap(arr))
                    continue
                for a in np.nonzero(np.asarray(arr)):
                    template.append(("A", len(arrays)))
                    arrays.append(Tensor._wrap(jnp.asarray(a, np.int32)))
                continue
            else:
                if not jnp.issubdtype(arr.dtype, jnp.integer):
                    raise IndexError("tensors used as indices must be long, int, byte or bool "
                                     "tensors")
                template.append(("A", len(arrays)))
                arrays.append(k if isinstance(k, Tensor) else Tensor._wrap(arr))
                continue
        if isinstance(k, slice):
            template.append(("S", int_or_none(k.start), int_or_none(k.stop),
                             int_or_none(k.step)))
        elif k is None:
            template.append(("N",))
        elif k is Ellipsis:
            template.append(("E",))
        elif isinstance(k, (bool, np.bool_)):
            template.append(("B", bool(k)))
        else:
            try:
                template.append(("I", k.__index__()))
            except (AttributeError, TypeError):
                if isinstance(k, str):  # PyTorch reads a str as a sequence of indices
                    raise TypeError("new(): invalid data type 'str'") from None
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long "
                                 "or byte Variables are valid indices (got "
                                 f"{type(k).__name__})") from None
    return tuple(template), arrays


def int_or_none(v):
    return None if v is None else v.__index__()


def _check_bounds(shape, template, arrays, before_error=None):
    """PyTorch's IndexErrors: too many indices, ints and (concrete) index arrays out of
    range, masks of another shape. JAX would clamp or drop them silently. Errors of index
    arrays, which PyTorch's kernel raises after recording, call ``before_error()`` first."""
    consumed = sum(map(_consumed, template))
    if consumed > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    pos = 0
    for k in template:
        tag = k[0]
        if tag == "E":
            pos = len(shape) - sum(map(_consumed, template[template.index(k) + 1:]))
        elif tag == "M":
            mshape = arrays[k[1]].shape
            for j, n in enumerate(mshape):
                if n != shape[pos + j]:
                    if before_error is not None:
                        before_error()
                    raise IndexError(f"The shape of the mask {list(mshape)} at index {j} does "
                                     f"not match the shape of the indexed tensor "
                                     f"{list(shape)} at index {pos + j}")
            pos += k[2]
        elif tag == "I":
            size = shape[pos]
            if not -size <= k[1] < size:
                raise IndexError(f"index {k[1]} is out of bounds for dimension {pos} with size "
                                 f"{size}")
            pos += 1
        elif tag == "S":
            pos += 1
        elif tag == "A":
            size = shape[pos]
            check_index(arrays[k[1]], -size, size, _out_of_bounds(pos, size),
                        before=before_error)
            pos += 1


def _out_of_bounds(dim, size):
    return lambda bad: IndexError(f"index {bad} is out of bounds for dimension {dim} with size "
                                  f"{size}")


def _build_index(template, arrays):
    out = []
    for k in template:
        tag = k[0]
        if tag == "A":
            out.append(arrays[k[1]])
        elif tag == "M":  # the mask's True positions, a fixed count of them (jittable)
            out.extend(jnp.nonzero(arrays[k[1]], size=k[3]))
        elif tag == "S":
            out.append(slice(k[1], k[2], k[3]))
        elif tag == "N":
            out.append(None)
        elif tag == "E":
            out.append(Ellipsis)
        else:  # "I" and "B": JAX takes Python ints and bools as NumPy does
            out.append(k[1])
    return tuple(out)


def _advanced(template):
    return any(k[0] in ("A", "B") for k in template)


def _getitem(x, *arrays, template):
    return x[_build_index(template, arrays)]


def _select_at(x, index, *, dim):
    return jax.lax.dynamic_index_in_dim(x, index, dim, False)


def _select_positions(shape, dim, index):
    dim %= len(shape)
    return _select_at, {"dim": dim}, (index + shape[dim] if index < 0 else index,)


# the index and the start are positions: one program for every value (a loop over rows)
SELECT = defop("select", lambda x, dim, index: jax.lax.index_in_dim(x, index, dim, False),
               "SelectBackward0", (),
               names="self -> dim index self_sym_sizes", positions=_select_positions)
# Python's open slice bounds as PyTorch's indexing passes them (and its node saves them)
_INT64_MAX = 2 ** 63 - 1


def bounds(size, start, stop, step):
    """A slice's ``(start, stop, step)`` given as PyTorch takes them (None, negative, past
    the end; what its node saves), clamped to a dimension of ``size``."""
    start, stop, step = slice(start, stop, step).indices(size)
    return start, max(start, stop), step


def _slice_fwd(x, dim, start, stop, step):
    dim %= x.ndim
    return jax.lax.slice_in_dim(x, *bounds(x.shape[dim], start, stop, step), dim)


def _slice_positions(shape, dim, start, stop, step):
    dim %= len(shape)
    start, stop, step = bounds(shape[dim], start, stop, step)
    return (slice_from, {"dim": dim, "size": len(range(start, stop, step)), "step": step},
            (start,))


SLICE = defop("slice", _slice_fwd, "SliceBackward0", (),
              names="self -> dim start end=stop step self_sym_sizes", positions=_slice_positions)


def _select_step(shape, dim, i):
    # ``dim`` and ``i`` as given (PyTorch's node saves them so): JAX wraps them
    size = shape[dim]
    if not -size <= i < size:
        raise IndexError(f"index {i} is out of bounds for dimension {dim % len(shape)} with "
                         f"size {size}")
    return SELECT, {"dim": dim, "index": i}


def _slice_step(shape, dim, sl, keep_full):
    """The slice view op and its statics (the bounds as given), or None for a whole
    dimension, which PyTorch skips inside a tuple index."""
    if sl[3] is not None and sl[3] <= 0:
        raise ValueError("step must be greater than zero")
    start, stop, step = bounds(shape[dim], *sl[1:])
    if not keep_full and start == 0 and stop == shape[dim] and step == 1:
        return None
    return SLICE, {"dim": sl[0], "start": sl[1], "stop": sl[2], "step": sl[3]}


def _select(x, dim, i):
    op, statics = _select_step(x.shape, dim, i)
    return view_apply(op, x, statics)


def _slice(x, dim, sl, keep_full):
    step = _slice_step(x.shape, dim, sl, keep_full)
    return x if step is None else view_apply(step[0], x, step[1])


@export
def select(input, dim, index) -> Tensor:
    """``select(input, dim, index)``: the slice ``index`` of dimension ``dim`` (removed)."""
    wrap_dim(dim, input.ndim, "select")
    if index.__class__ is bool:
        raise TypeError("select(): argument 'index' (position 2) must be int, not bool")
    return _select(input, int(dim), int(index))


def _setitem(x, v, *arrays, template):
    return x.at[_build_index(template, arrays)].set(jnp.asarray(v).astype(x.dtype))


def _index_add_at(x, v, *arrays, template):
    return x.at[_build_index(template, arrays)].add(jnp.asarray(v).astype(x.dtype))


_GETITEM = {}


def _getitem_op(name):
    op = _GETITEM.get(name)
    if op is None:
        op = _GETITEM[name] = Op("getitem_" + name, _getitem, name, {0: ()},
                                 nondiff=_AFTER_SELF)
    return op


SETITEM = defop("setitem", _setitem, "torch::autograd::CopySlices", {}, scalar_edges=True,
                nondiff=_AFTER_VALUE,
                positions=lambda shape, template: setitem_positions(template))
INDEX_PUT = defop("index_put", _setitem, "IndexPutBackward0", {}, scalar_edges=True,
                  nondiff=_AFTER_VALUE)
INDEX_PUT_ACC = defop("index_put_acc", _index_add_at, "IndexPutBackward0", {},
                      scalar_edges=True, nondiff=_AFTER_VALUE)
def _index_add(x, v, idx, dim, alpha):
    if x.ndim == 0:  # a 0-d tensor indexes as one entry
        return _index_add(x.reshape(1), v.reshape(-1), idx.reshape(-1), 0, alpha).reshape(())
    return x.at[(slice(None),) * dim + (idx,)].add((alpha * v).astype(x.dtype))


INDEX_ADD = defop("index_add", _index_add, "IndexAddBackward0",
    {1: (2,)}, nondiff=(2,),
    names="self source index -> index source dim alpha source_dim")


def _steps(self, template, arrays, single):
    """The view ops of ``self[index]``'s basic indices, left to right (``(op, statics)``),
    its advanced indices (``(dim of the partial result, template entry)``) and the
    geometry the view ops give in ``self`` laid out contiguously; a bool index appends
    its index array to ``arrays``."""
    steps = []
    geom = contiguous_shape_geometry(tuple(self.shape))
    shape = geom[0]
    dim = 0
    adv = []   # (dim of the partial result, template entry) of the advanced indices
    n_consuming = sum(map(_consumed, template))
    for k in template:
        tag = k[0]
        step = None
        if tag == "I":
            step = _select_step(shape, dim, k[1])
        elif tag == "S":  # open bounds as PyTorch's indexing passes them
            step = _slice_step(shape, dim, (dim, 0 if k[1] is None else k[1],
                                            _INT64_MAX if k[2] is None else k[2],
                                            1 if k[3] is None else k[3]), keep_full=single)
            dim += 1
        elif tag in ("N", "B"):  # x[True]: a new dimension, then an index of it
            step = UNSQUEEZE, {"dim": dim}
            if tag == "B":
                arrays.append(Tensor._wrap(jnp.zeros((1 if k[1] else 0,), jnp.int32)))
                adv.append((dim, ("A", len(arrays) - 1)))
            dim += 1
        elif tag == "E":  # the dimensions no other index consumes
            dim += self.ndim - n_consuming
        else:  # "A", "M"
            adv.append((dim, k))
            dim += _consumed(k)
        if step is not None:
            steps.append(step)
            geom = view_geometry(step[0].name, *geom, **step[1])
            shape = geom[0]
    return steps, adv, geom


@export(function=False)
def __getitem__(self, idx) -> Tensor:
    """``x[idx]``: ints, slices, None, Ellipsis, bools, integer/boolean tensors and lists,
    with PyTorch's rules for combining them (basic indices first, advanced ones last)."""
    fast = basic_index.read(self, idx)
    if fast is not None:
        return fast
    single = idx.__class__ is not tuple and not isinstance(idx, tuple)
    # NOTE: an index of ints, slices of ints, None and ... (RoPE's ``x[..., :half]`` on an
    # activation, per step) makes the same view ops on the same shape each time: worked
    # out once (its bounds checked then), kept under the index's values and the shape
    key = _basic_key((idx,) if single else idx)
    if key is not None and \
            (plan := _BASIC.get(key := (key, self._arr.shape, single))) is not None:
        template, steps, geom = plan
        arrays, adv = (), ()
    else:
        template, arrays = _parse_index(idx, masks=True)
        _check_bounds(self.shape, template, arrays, lambda: pack_before_error(
            _getitem_op("IndexBackward0"), (self, *[arrays[k[1]] for k in template
                                                     if k[0] in ("A", "M")])))
        steps, adv, geom = _steps(self, template, arrays, single)
        if key is not None and not (arrays or adv):
            _memo.keep(_BASIC, key, (template, steps, geom))
    x = view_chain(self, steps, geom) if steps and not adv else None
    if x is not None:
        x._view.index = template
        return x
    x = self
    for op, statics in steps:
        x = view_apply(op, x, statics)
    if adv:
        tmpl, used, at = [], [], 0
        for d, k in adv:  # whole slices up to each advanced index
            tmpl += [("S", None, None, None)] * (d - at)
            tmpl.append((k[0], len(used)) + k[2:])
            used.append(arrays[k[1]])
            at = d + _consumed(k)
        return apply(_getitem_op("IndexBackward0"), (x, *used), {"template": tuple(tmpl)})
    if x is self:
        return view_apply(ALIAS, x)
    return x


def _basic_key(idx):
    """A hashable key of the index tuple ``idx`` of ints, slices of ints or None, None
    and Ellipsis (a slice is no key before Python 3.12), or None for any other."""
    key = []
    for k in idx:
        c = k.__class__
        if c is slice:
            a, b, s = k.start, k.stop, k.step
            if not ((a is None or a.__class__ is int) and (b is None or b.__class__ is int)
                    and (s is None or s.__class__ is int)):
                return None
            key.append((a, b, s))
        elif c is int or k is None or k is Ellipsis:
            key.append(k)
        else:
            return None
    return tuple(key)


# ``(index key, shape, single) -> (template, view steps, geometry)`` of basic indices (a
# single index, not a tuple, keeps even a whole slice, as PyTorch), bounded (``_memo``)
_BASIC = {}


def _indexed_shape(shape, template, arrays):
    """The shape of ``x[index]`` for an ``x`` of ``shape`` (NumPy on a zero-strided array:
    nothing of that size is allocated)."""
    if all(_is_concrete(a._data) for a in arrays):
        view = np.lib.stride_tricks.as_strided(np.zeros((), bool), shape, (0,) * len(shape))
        np_arrays = [np.asarray(a._data) for a in arrays]
        return tuple(view[_build_index(template, np_arrays)].shape)
    spec = jax.ShapeDtypeStruct(shape, jnp.float32)
    return tuple(jax.eval_shape(lambda x, *a: _getitem(x, *a, template=template), spec,
                                *[a._data for a in arrays]).shape)


def _value_for(value, target, expand_to_target):
    """The value Tensor as PyTorch hands it to the copy: leading size-1 dimensions viewed
    away, then (for copies into a slice) expanded to the target shape."""
    shape = value.shape
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    if k:
        value = reshape(value, shape[k:])
    if expand_to_target and value.shape != target:
        value = expand(value, target)
    return value


def _put(self, op, template, arrays, value, expand_value):
    if arrays and isinstance(value, Tensor) and value._arr.dtype != self._arr.dtype:
        raise index_put_dtype_error(self, value)  # PyTorch's index_put_ casts nothing
    _check_bounds(self.shape, template, arrays)
    if op is SETITEM and not arrays:
        template = boxed(self.shape, template)
    value = to_tensor_like(value)
    if isinstance(value, Tensor):
        found = None if arrays else setitem_positions(template)
        target = _indexed_shape(self.shape, template, arrays) if found is None else \
            box_shape(tuple(self.shape), found[1]["box"])
        value = _value_for(value, target, expand_value)
        try:
            np.broadcast_shapes(value.shape, target)
        except ValueError:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} "
                               f"cannot be broadcast to indexing result of shape "
                               f"{list(target)}") from None
    return apply(op, (self, value, *arrays), {"template": template}, out=self)


def _last_view_name(template, single):
    """The view op PyTorch applies last for the basic indices of ``template``."""
    name = "Alias"
    for k in template:
        if k[0] == "I":
            name = "Select"
        elif k[0] in ("N", "B"):
            name = "Unsqueeze"
        elif k[0] == "S" and (single or k[1] not in (None, 0) or k[2] is not None
                              or k[3] not in (None, 1)):
            name = "Slice"
    return name


def _records_a_view(template):
    # whether PyTorch's indexing makes a view of a part (then the write is CopySlices)
    for k in template:
        if k[0] in ("I", "N") or (k[0] == "B" and k[1] is not None):
            return True
        if k[0] == "S" and (k[1] not in (None, 0) or k[2] is not None or k[3] not in (None, 1)):
            return True
    return False


_FILL_ALL = defop("setitem_fill", lambda x, v: jnp.full_like(x, v), "FillBackward3", (),
                  scalar_edges=True)


def _holds_it_already(self, template, value):
    """Whether ``self[template] = value`` would write the region's own values: ``value``
    is the live view of that region (``x[i, a:b] += v`` reads the view, adds into it, which
    writes through, then assigns it back), and nothing records the write."""
    info = value._view if isinstance(value, Tensor) else None
    if info is None or not info.shared or info.base is not _views.root(self) or \
            info.gen != info.base._gen or value.dtype != self.dtype or (
            _gm.enabled and (self._requires_grad or value._requires_grad)) or (
            self._view is not None and self._view.gen != info.base._gen) or any(
            k[0] not in ("I", "S", "N", "E") for k in template):
        return False
    if info.made_by(self, template):  # ``x[i] += v``: read at this index of this source
        return True
    _check_bounds(self.shape, template, [])
    steps = _steps(self, template, [], False)[0]
    return info.geom == chain_geometry(_views.geometry(self), steps)


@export(function=False)
def __setitem__(self, idx, value) -> None:
    """``x[idx] = value``: an in-place write, recorded as PyTorch records it:
    ``CopySlices`` when the index selects a part by ints/slices/None, ``IndexPutBackward0``
    for advanced indices on the whole tensor, ``FillBackward3`` / ``CopyBackwards`` when
    the index is the whole tensor. ``value`` broadcasts to the indexed shape."""
    if basic_index.write(self, idx, value):
        return
    template, arrays = _parse_index(idx)
    if _records_a_view(template):
        # the write goes through a view of ``self``, as in PyTorch
        check_setitem_view(self, _last_view_name(template, single=not isinstance(idx, tuple)))
        if _holds_it_already(self, template, value):
            self._version += 1  # PyTorch's copy into the region counts as a write
            _views.share_version(self)
            return
        _put(self, SETITEM, template, arrays, value, not _advanced(template))
    elif _advanced(template):
        _put(self, INDEX_PUT, template, arrays, value, False)
    else:
        _write_whole(self, value)


def _write_whole(self, value):
    # as PyTorch: a value of self's shape is copied, a 0-d one (a number too) fills, any
    # other broadcasts and is copied; so a number written into a 0-d tensor is a copy
    if not isinstance(value, (Tensor, np.ndarray, jax.Array, list)) and self.ndim:
        apply(_FILL_ALL, (self, value), out=self)
        return
    v = to_tensor_like(value)
    if not isinstance(v, Tensor):  # a number, wrapped as PyTorch wraps it
        v = Tensor._wrap(jnp.asarray(v))
    if v.ndim == 0 and self.ndim:
        apply(_FILL_ALL, (self, v), out=self)
        return
    from .fills import copy_
    copy_(self, _value_for(v, self.shape, True))


@export
def index_put_(self, indices, values, accumulate=False) -> Tensor:
    """``index_put_(indices, values, accumulate=False)``: ``self[indices] = values`` (or
    ``+=`` with ``accumulate``, summing repeated indices)."""
    template, arrays = _parse_index(tuple(indices), ints_as_arrays=True)
    return _put(self, INDEX_PUT_ACC if accumulate else INDEX_PUT, template, arrays, values,
                False)


@export
def index_put(input, indices, values, accumulate=False) -> Tensor:
    return index_put_(input.clone(), indices, values, accumulate)


def _index_add_args(input, dim, index, source, alpha):
    d = wrap_dim(dim, input.ndim)
    check_index_dtype("index_add", index)
    same_source_dtype("index_add_", input, source)
    check_index_source("index_add", input, d, index, to_tensor_like(source))
    size = input.shape[d] if input.ndim else 1

    def error(bad):  # PyTorch's CPU kernel: the first or last dim of a matrix (or more),
        # alpha 1 and int64 indices go through index_put_, with its message
        if input.ndim > 1 and d in (0, input.ndim - 1) and alpha == 1 and \
                index.dtype.name == "int64":
            return out_of_bounds(d, size)(bad)
        return out_of_range(bad)
    args = (input, to_tensor_like(source), index)
    check_index(index, 0, size, error, before=packing(INDEX_ADD, args))
    return args, {"dim": d, "alpha": alpha}


@export
def index_add(input, dim, index, source, *, alpha=1) -> Tensor:
    """``index_add(input, dim, index, source, *, alpha=1)``: ``alpha * source`` added into
    a copy of ``input`` at the entries ``index`` of ``dim`` (repeats accumulate)."""
    args, st = _index_add_args(input, dim, index, source, alpha)
    return apply(INDEX_ADD, args, st)


@export(function=False)
def index_add_(self, dim, index, source, *, alpha=1) -> Tensor:
    args, st = _index_add_args(self, dim, index, source, alpha)
    return apply(INDEX_ADD, args, st, out=self)


