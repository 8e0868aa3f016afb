"""The NumPy rules of ``_numpy_eval`` for dot_general, conv_general_dilated, gather and scatter.

Each follows XLA's general definition rather than the few forms ``jax.numpy`` emits, so that
vmap'd, transposed and differentiated variants run too. Gather and scatter are vectorized:
one index array per operand dimension, broadcast against the result (gather) or the updates
(scatter), then a single advanced-indexing read or ``ufunc.at``.
"""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def known_mode(mode):
    return getattr(mode, "name", None) in ("CLIP", "PROMISE_IN_BOUNDS", "FILL_OR_DROP")


# --- dot_general -------------------------------------------------------------------------------

def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None,
                out_sharding=None):
    (lc, rc), (lb, rb) = dimension_numbers
    if preferred_element_type is not None:  # accumulate in the requested type (int8 -> int32)
        lhs = lhs.astype(preferred_element_type, copy=False)
        rhs = rhs.astype(preferred_element_type, copy=False)
    lf = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
    rf = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
    # XLA's result order: batch dims, lhs free dims, rhs free dims. As one batched matmul:
    # lhs (B, M, K) @ rhs (B, K, N)
    batch = [lhs.shape[d] for d in lb]
    m = [lhs.shape[d] for d in lf]
    n = [rhs.shape[d] for d in rf]
    size = lambda dims: int(np.prod(dims, dtype=np.int64))  # noqa: E731
    b, k = size(batch), size([lhs.shape[d] for d in lc])
    a = np.transpose(lhs, [*lb, *lf, *lc]).reshape(b, size(m), k)
    c = np.transpose(rhs, [*rb, *rc, *rf]).reshape(b, k, size(n))
    return np.matmul(a, c).reshape(*batch, *m, *n)


# --- conv_general_dilated ----------------------------------------------------------------------

def _dilate(x, factors, first_axis):
    """Insert factor - 1 zeros between elements along the axes from first_axis on."""
    if all(f == 1 for f in factors):
        return x
    shape = list(x.shape)
    index = [slice(None)] * x.ndim
    for i, f in enumerate(factors):
        ax = first_axis + i
        shape[ax] = max(x.shape[ax] - 1, 0) * f + 1 if x.shape[ax] else 0
        index[ax] = slice(None, None, f)
    out = np.zeros(shape, x.dtype)
    out[tuple(index)] = x
    return out


def _pad_spatial(x, padding):
    """Zero-pad the trailing spatial axes of an (N, C, *spatial) array; negative pads crop."""
    if all(lo == 0 and hi == 0 for lo, hi in padding):
        return x
    grow = [(0, 0), (0, 0)] + [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    x = np.pad(x, grow)
    return x[(slice(None), slice(None)) + tuple(
        slice(-min(lo, 0), x.shape[2 + i] + min(hi, 0)) for i, (lo, hi) in enumerate(padding))]


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                         dimension_numbers, feature_group_count, batch_group_count,
                         precision=None, preferred_element_type=None, out_sharding=None):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    if preferred_element_type is not None:
        lhs = lhs.astype(preferred_element_type, copy=False)
        rhs = rhs.astype(preferred_element_type, copy=False)
    x = np.transpose(lhs, lhs_spec)  # (N, C, *spatial)
    w = np.transpose(rhs, rhs_spec)  # (O, I, *kernel)
    nsp = x.ndim - 2
    x = _pad_spatial(_dilate(x, lhs_dilation, 2), padding)
    kernel = w.shape[2:]
    span = [(k - 1) * d + 1 for k, d in zip(kernel, rhs_dilation)]  # the dilated kernel's reach
    if any(s > n for s, n in zip(span, x.shape[2:])):  # no window fits: an empty result
        out_sp = [0] * nsp
        patches = None
    else:
        # (N, C, *out_spatial, *span) view, then the strides and the kernel dilation as steps
        patches = sliding_window_view(x, span, axis=tuple(range(2, 2 + nsp)))
        patches = patches[(slice(None), slice(None))
                          + tuple(slice(None, None, s) for s in window_strides)
                          + tuple(slice(None, None, d) for d in rhs_dilation)]
        out_sp = list(patches.shape[2:2 + nsp])
    n_batch, n_out = x.shape[0] // batch_group_count, w.shape[0]
    out = np.zeros((n_batch, n_out, *out_sp), np.result_type(x.dtype, w.dtype))
    if patches is None or out.size == 0:
        return np.transpose(out, np.argsort(out_spec))
    groups = feature_group_count * batch_group_count
    cin, og = w.shape[1], n_out // groups
    contract = ([1] + list(range(2 + nsp, 2 + 2 * nsp)), list(range(1, 2 + nsp)))
    for g in range(groups):
        if batch_group_count > 1:  # lhs batch split into contiguous chunks, one per group
            p = patches[g * n_batch:(g + 1) * n_batch]
        else:
            p = patches[:, g * cin:(g + 1) * cin]
        r = np.tensordot(p, w[g * og:(g + 1) * og], contract)  # (N, *out_sp, Og)
        out[:, g * og:(g + 1) * og] = np.moveaxis(r, -1, 1)
    return np.transpose(out, np.argsort(out_spec))


# --- gather and scatter ------------------------------------------------------------------------

def _fill_default(dtype):
    # what XLA gives for out-of-bounds slices under FILL_OR_DROP without a fill value
    if dtype.kind == "f":
        return np.nan
    if dtype.kind == "b":
        return True
    info = np.iinfo(dtype)
    return info.min if dtype.kind == "i" else info.max


def _operand_indices(operand_shape, indices, rank, batch_pos, window_pos, window_sizes,
                     index_map, operand_batching, indices_batching, mode):
    """One index array per operand dimension, broadcastable to a result of rank ``rank``
    whose dims ``batch_pos`` run over indices.shape[:-1] and whose dims ``window_pos[d]`` run
    over operand dim d's window; plus a boolean of the in-bounds windows (or None)."""
    batch_shape = indices.shape[:-1]
    fill = mode.name == "FILL_OR_DROP"
    starts = indices.astype(np.int64)
    window_axes = tuple(p for p in range(rank) if p not in batch_pos)

    def along(size, pos):
        return np.arange(size).reshape([size if p == pos else 1 for p in range(rank)])

    idx, ok = [], None
    for d, n in enumerate(operand_shape):
        if d in index_map:
            hi = n - window_sizes.get(d, 1)
            s = starts[..., index_map.index(d)]
            if fill:
                good = (s >= 0) & (s <= hi)
                ok = good if ok is None else ok & good
            s = np.expand_dims(np.clip(s, 0, max(hi, 0)), window_axes)
        elif d in operand_batching:
            i = indices_batching[operand_batching.index(d)]
            s = along(batch_shape[i], batch_pos[i])
        else:
            s = 0
        if d in window_pos:
            s = s + along(window_sizes[d], window_pos[d])
        idx.append(s)
    if ok is not None:
        ok = np.expand_dims(ok, window_axes)
    return idx, ok


def gather(operand, indices, dimension_numbers, slice_sizes, unique_indices=None,
           indices_are_sorted=None, mode=None, fill_value=None):
    dn = dimension_numbers
    rank = indices.ndim - 1 + len(dn.offset_dims)
    batch_pos = [p for p in range(rank) if p not in dn.offset_dims]
    window_dims = [d for d in range(operand.ndim)
                   if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    window_pos = dict(zip(window_dims, dn.offset_dims))
    sizes = dict(enumerate(slice_sizes))
    out_shape = [0] * rank
    for i, p in enumerate(batch_pos):
        out_shape[p] = indices.shape[i]
    for d, p in window_pos.items():
        out_shape[p] = slice_sizes[d]
    if mode.name == "PROMISE_IN_BOUNDS":  # XLA's own gather clamps, as CLIP does
        mode = type(mode).CLIP
    idx, ok = _operand_indices(operand.shape, indices, rank, batch_pos, window_pos, sizes,
                               list(dn.start_index_map), list(dn.operand_batching_dims),
                               list(dn.start_indices_batching_dims), mode)
    if operand.size == 0:
        out = np.zeros(out_shape, operand.dtype)
    else:
        out = np.broadcast_to(operand[tuple(idx)], out_shape)
    if ok is not None:
        fill = _fill_default(operand.dtype) if fill_value is None else fill_value
        out = np.where(ok, out, np.asarray(fill).astype(operand.dtype))
    return out


def scatter_rule(ufunc):
    """A scatter rule combining with ``ufunc`` (np.add for scatter-add), or replacing (None)."""
    def rule(operand, indices, updates, dimension_numbers, indices_are_sorted=None,
             unique_indices=None, mode=None, update_jaxpr=None, update_consts=()):
        dn = dimension_numbers
        rank = updates.ndim
        batch_pos = [p for p in range(rank) if p not in dn.update_window_dims]
        window_dims = [d for d in range(operand.ndim)
                       if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
        window_pos = dict(zip(window_dims, dn.update_window_dims))
        sizes = {d: updates.shape[p] for d, p in window_pos.items()}
        if mode.name == "PROMISE_IN_BOUNDS":  # XLA's own scatter drops, as FILL_OR_DROP does
            mode = type(mode).FILL_OR_DROP
        idx, ok = _operand_indices(operand.shape, indices, rank, batch_pos, window_pos, sizes,
                                   list(dn.scatter_dims_to_operand_dims),
                                   list(dn.operand_batching_dims),
                                   list(dn.scatter_indices_batching_dims), mode)
        out = operand.copy()
        if updates.size == 0:
            return out
        full = np.broadcast_arrays(*idx, updates)
        idx, upd = full[:-1], full[-1]
        if ok is not None:  # an out-of-bounds window is dropped whole
            keep = np.broadcast_to(ok, upd.shape)
            idx, upd = [i[keep] for i in idx], upd[keep]
        if ufunc is None:
            out[tuple(idx)] = upd
        else:
            ufunc.at(out, tuple(idx), upd)
        return out
    return rule
