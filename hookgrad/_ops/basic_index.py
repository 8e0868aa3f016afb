"""``x[idx]`` and ``x[idx] = v`` for basic indices (Python ints, unit-step slices, None,
Ellipsis) on a Tensor that nothing records or intercepts: the fast way into
``box_index`` (a deferred read of a box, one program per write), or ``host_tier`` for a
small CPU Tensor (NumPy reads and writes, no program); ``None``/``False`` send the caller
(``_ops/indexing.py``) the slow way, which raises PyTorch's errors.
"""

from weakref import ref as _weakref

from .. import _views
from .._autograd import grad_mode
from .._memo import keep
from .._tensor import Host, Pending, Tensor, bump_version
from . import box_index, dispatch, host_tier
from .lazy import ARRAY, SCALARS as _NUMBERS
from .stages import modes
from .views import COPY_TWIN, GEOMETRY, make_view

_gm = grad_mode._state
_ViewInfo, _DEFAULT, _NO_GRAD = _views.ViewInfo, _views.DEFAULT, _views.NO_GRAD
_INT32 = 2 ** 31
_INT64_MAX = 2 ** 63 - 1  # an open slice bound, as PyTorch's indexing passes it


def _nothing_intercepts(*tensors):
    return COPY_TWIN[0] is None and not dispatch._dual[0] and not (
        modes.INTERCEPT[0] and modes.intercepts(*tensors))


def _parse(shape, idx):
    """``box_index.parse(shape, idx)``, remembered by shape and index when the index is
    Python ints, None, Ellipsis and slices of ints or None (a loop's ``x[i]``, a model's
    ``x[..., :half]``: the same few every call; the answer is tuples, shared safely). An
    int out of range raises there, and nothing is remembered. The key is worked out here,
    not in a call of its own: every basic index read and write of a loop pays this."""
    # the key: ``(shape, *entries)``, a slice as its ``(start, stop, step)`` (slices are not
    # hashable). NOTE: by class, not value: ``True`` and ``np.int64(1)`` equal 1 but parse
    # apart
    c = idx.__class__
    if c is int:
        key = shape, idx
    else:
        key = [shape]
        for k in (idx if c is tuple else (idx,)):  # parse reads ``x[k]`` as ``x[(k,)]``
            c = k.__class__
            if c is slice:
                a, b, st = k.start, k.stop, k.step
                if not ((a is None or a.__class__ is int) and
                        (b is None or b.__class__ is int) and
                        (st is None or st.__class__ is int)):
                    return box_index.parse(shape, idx)
                key.append((a, b, st))
            elif c is int or k is None or k is Ellipsis:
                key.append(k)
            else:
                return box_index.parse(shape, idx)
        key = tuple(key)
    found = _INT_INDEX.get(key)
    if found is None:
        found = keep(_INT_INDEX, key, box_index.parse(shape, idx))
    return found


_INT_INDEX = {}  # ``_parse``'s key -> box_index.parse's answer


def read(self, idx):
    """``self[idx]`` for ints and unit-step slices when nothing records or intercepts it:
    a view whose array is read when first needed (``box_index``), else None."""
    arr = self._arr
    c = arr.__class__
    if (c is not ARRAY and c is not Pending and c is not Host) or \
            (_gm.enabled and self._requires_grad) or COPY_TWIN[0] is not None or \
            dispatch._dual[0] or modes.INTERCEPT[0] and modes.intercepts(self):
        return None  # (``_nothing_intercepts``, inlined: a model reads an index per few ops)
    shape = arr.np.shape if c is Host else arr.shape
    found = _parse(shape, idx)
    if found is None or not found[0]:
        return None
    template, size, region, starts = found
    if c is Host:  # a NumPy view of its memory (``host_tier.read``'s, without its tests)
        out = host_tier.held(arr.np[host_tier._np_index(idx, template)], arr.store)
    else:
        # a pending value computed already (``generate``'s ``input_ids``, read by its stop
        # check) is read as its array is: a small one cut on the host, no transfer back
        out = None if c is Pending and arr.value is None else host_tier.read(self, idx, found)
    if out is None:
        p = box_index.read(arr, region, starts, size)
        out = Tensor._wrap(p)
        if p.__class__ is Pending:  # its Tensor may read it (lazy's bookkeeping)
            p.ref = _weakref(out)
    src = self._view
    if src is None or src.creation is _DEFAULT:
        # ``make_view``'s answer where it is a root's or a plain view's, without its frame
        # (a loop's every ``labels[i]``, ``y[:, None]`` makes one): the read is a view of
        # the root, autograd's base the source's (a root, or a detach()/.data alias, is its
        # own)
        base = grad_base = self
        if src is not None:
            base = src.base
            if src.diff:
                grad_base = src.grad_base
        info = _ViewInfo(base, src, shape, _index_geometry, {"template": template}, True,
                         True, _DEFAULT if _gm.enabled else _NO_GRAD, None, grad_base, out)
    else:
        make_view(out, self, _index_geometry, {"template": template})
        info = out._view
    info.index, info.key = template, idx
    return out


def _index_geometry(size, stride, offset, template):
    # the geometry of a ``_box_read`` view: its selects, slices and new dimensions, left
    # to right (an Ellipsis passes the dimensions no other entry indexes)
    dim = 0
    for k in template:
        tag = k[0]
        if tag == "I":
            size, stride, offset = GEOMETRY["select"](size, stride, offset, dim, k[1])
        elif tag == "S":
            size, stride, offset = GEOMETRY["slice"](
                size, stride, offset, dim, 0 if k[1] is None else k[1],
                _INT64_MAX if k[2] is None else k[2], 1)
            dim += 1
        elif tag == "N":
            size, stride, offset = GEOMETRY["unsqueeze"](size, stride, offset, dim)
            dim += 1
        else:  # "E": up to the dimensions that the ints and slices after it index
            dim = len(size) - sum(j[0] in ("I", "S") for j in template[template.index(k):])
    return size, stride, offset


def write(self, idx, value):
    """``self[idx] = value`` for ints and unit-step slices as one write of the box, when
    nothing records or intercepts it and ``value`` is a plain Tensor or number that
    broadcasts; returns whether it was written (else the caller's way, which raises
    PyTorch's errors)."""
    arr = self._arr
    c = arr.__class__
    host = c is Host or self._view is None and c is ARRAY and arr.size <= host_tier.BOUND
    if not host and (c is not ARRAY or arr._committed or self._view is not None) or \
            self._requires_grad or not _nothing_intercepts(self, value):
        return False
    is_tensor = isinstance(value, Tensor)
    # ``x[i, a:b] += v`` reads and writes with the same index object: no parse needed
    if is_tensor and value._view is not None and value._view.key is idx and \
            _wrote_itself(self, value, value._view.index, arr):
        return True
    found = _parse(arr.shape, idx)
    if found is None or not found[0]:
        return False
    if host and host_tier.write(self, idx, value, found):
        return True
    arr = self._arr  # NOTE: the XLA path reads a host-held Tensor's values out first
    if arr.__class__ is not ARRAY or arr._committed or self._view is not None:
        return False
    template, size, region, starts = found
    c = value.__class__
    if c in _NUMBERS:
        if c is int and not -_INT32 <= value < _INT32:
            return False
        v = value
    elif is_tensor:
        if value._requires_grad:
            return False
        if value._view is not None and _wrote_itself(self, value, template, arr):
            return True
        v = value._arr
        if v.__class__ is Pending or v.__class__ is Host:  # computed, or copied into XLA
            v = value._data
        if v.__class__ is not ARRAY or v._committed or not box_index.broadcasts(
                v.shape, size, v.dtype, arr.dtype):
            return False
    else:
        return False
    del arr  # so that ``self`` alone holds its array: the write may reuse its buffer
    box_index.write(self, v, region, starts, size)
    return True


def _wrote_itself(self, value, template, arr):
    """Whether ``self[template] = value`` writes the region's own values, ``value`` being
    the live view ``self[template]`` read (``x[i, a:b] += v``: the view wrote itself
    through already): then it is a version bump, as PyTorch's copy counts as a write."""
    info = value._view
    if not (info.shared and info.gen == self._gen and not value._requires_grad and
            info.made_by(self, template) and value._arr.dtype == arr.dtype):
        return False
    bump_version(self)  # ``self._version += 1`` in one frame
    _views.share_version(self)
    return True
