"""The NumPy rules of ``_numpy_eval`` for dot_general, conv_general_dilated, gather and scatter.

Each follows XLA's general definition rather than the few forms ``jax.numpy`` emits, so that
vmap'd, transposed and differentiated variants run too. Gather and scatter are vectorized:
one index array per operand dimension, broadcast against the result (gather) or the updates
(scatter), then a single advanced-indexing read or ``ufunc.at``.
"""
import numpy as np


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
    return matmul(a, c).reshape((*batch, *m, *n))


SINGLE_THREAD_MNK = 1 << 18  # OpenBLAS runs a product of at most this many m*n*k on one thread


def matmul(a, b):
    """``a @ b``, in row blocks small enough for the BLAS to run each on the calling thread.
    NOTE: the first tier runs while XLA compiles on another core; a threaded BLAS call then
    waits for a busy core (a 0.2 ms product took 10-25 ms on 2 cores)."""
    rows, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    step = max(SINGLE_THREAD_MNK // max(k * n, 1), 1)
    if rows <= step:
        return np.matmul(a, b)
    out = np.empty((*np.broadcast_shapes(a.shape[:-2], b.shape[:-2]), rows, n),
                   np.result_type(a.dtype, b.dtype))
    for i in range(0, rows, step):
        np.matmul(a[..., i:i + step, :], b, out=out[..., i:i + step, :])
    return out


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
    x = _pad_spatial(_dilate(x, lhs_dilation, 2), padding)
    kernel, sp = w.shape[2:], x.shape[2:]
    out_sp = [max((n - (k - 1) * d - 1) // s + 1, 0)
              for n, k, d, s in zip(sp, kernel, rhs_dilation, window_strides)]
    n_batch, n_out = x.shape[0] // batch_group_count, w.shape[0]
    out = np.zeros((n_batch, n_out, *out_sp), np.result_type(x.dtype, w.dtype))
    if out.size == 0 or x.size == 0 or w.size == 0:
        return np.transpose(out, np.argsort(out_spec))
    groups = feature_group_count * batch_group_count
    cin, og = w.shape[1], n_out // groups
    for g in range(groups):
        if batch_group_count > 1:  # lhs batch split into contiguous chunks, one per group
            xg = x[g * n_batch:(g + 1) * n_batch]
        else:
            xg = x[:, g * cin:(g + 1) * cin]
        _conv_group(xg, w[g * og:(g + 1) * og], window_strides, rhs_dilation, out_sp,
                    out[:, g * og:(g + 1) * og])
    return np.transpose(out, np.argsort(out_spec))


def _conv_group(x, w, strides, dilation, out_sp, out):
    """out (N, O, *out_sp) = x (N, C, *spatial) convolved with w (O, C, *kernel): one
    matmul per kernel offset or one contraction per output position, whichever is fewer.
    NOTE: never one im2col matmul: a large BLAS call on a busy 2-core machine (XLA compiles
    beside it) runs slower threaded than these small ones."""
    kernel = w.shape[2:]
    if np.prod(kernel) <= np.prod(out_sp):
        xt = np.moveaxis(x, 1, -1)  # (N, *spatial, C)
        acc = np.zeros((x.shape[0], *out_sp, w.shape[0]), out.dtype)
        for k in np.ndindex(*kernel):
            window = tuple(slice(i * d, i * d + (n - 1) * s + 1, s)
                           for i, d, n, s in zip(k, dilation, out_sp, strides))
            acc += matmul(xt[(slice(None), *window)], w[(slice(None), slice(None), *k)].T)
        out[...] = np.moveaxis(acc, -1, 1)
    else:
        wt = w.reshape(w.shape[0], -1).T  # (C * kernel, O)
        for p in np.ndindex(*out_sp):
            window = tuple(slice(i * s, i * s + (k - 1) * d + 1, d)
                           for i, s, k, d in zip(p, strides, kernel, dilation))
            patch = x[(slice(None), slice(None), *window)].reshape(x.shape[0], -1)
            out[(slice(None), slice(None), *p)] = matmul(patch, wt)


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
