"""View ops and in-place writes through views, as PyTorch's autograd records them.

A view op's result is marked a view of its input (``hookgrad/_views.py`` keeps its
geometry and writes through). An in-place op on a view then:

1. checks PyTorch's rules (a view of a leaf that requires grad, a view made in no_grad
   mode, by a multi-output view op or inside a custom Function, an expanded view);
2. runs the op on the view's array, which scatters into the base and gathers every
   other live view again (``Tensor._write_``);
3. records the op's node as usual, then rebases the base's history onto a
   ``CopySlices`` node wrapping it, and regenerates the ``grad_fn`` of the base's views
   as ``AsStridedBackward0`` nodes reading the base (what PyTorch shows after a write).
"""
import functools
import math

import jax.numpy as jnp

from .. import _views
from .._autograd import grad_mode
from .._autograd.graph import _Node
from .._autograd.saved import NO_GRAD_VIEW_ADVICE, VIEW_CREATION_REASONS, stale_view_message
from .._tensor import Pending, Tensor
from . import dispatch
from .dispatch import apply
from .stages import inplace as _inplace_stage, modes
from .stages.inplace import _check_inplace
from .stages.record import _record
from .lazy import ARRAY as _ARRAY  # a concrete array: not a tracer, not on the meta device
from .registry import defop
from .host_tier import view as _host_view

_gm = grad_mode._state
_ViewInfo = _views.ViewInfo

AS_STRIDED = defop("as_strided", lambda b, size, stride, offset: _views.gather_plain(
    b, size, stride, offset), "AsStridedBackward0", (),
    names="self -> size stride storage_offset=offset")
AS_STRIDED_SCATTER = defop("as_strided_scatter", lambda b, v, size, stride, offset:
                           _views.scatter_plain(b, v, size, stride, offset),
                           "AsStridedScatterBackward0", ())
# the same of a flipped view (``_views.flipped``: a view of the other kind of dtype), named
# as PyTorch names the node of such a view read anew (its view op's)
AS_STRIDED_REAL = defop("as_strided_flipped_real", lambda b, size, stride, offset:
                        _views.gather_plain(_views.flipped(b), size, stride, offset),
                        "ViewAsRealBackward0", ())
AS_STRIDED_COMPLEX = defop("as_strided_flipped_complex", AS_STRIDED_REAL.fwd,
                           "ViewAsComplexBackward0", ())
AS_STRIDED_SCATTER_FLIPPED = defop(
    "as_strided_scatter_flipped", lambda b, v, size, stride, offset: _views.unflipped(
        _views.scatter_plain(_views.flipped(b), v, size, stride, offset), b),
    "AsStridedScatterBackward0", ())


# --------------------------------------------------------------------------- geometry


def _remembered(fn):
    """``fn``, a geometry (tuples of ints in and out), remembered per arguments: a model
    takes the same views each step, and working one out costs a loop of Python calls.
    Arguments that cannot be hashed (``as_strided``'s lists) are worked out each time."""
    cached = functools.lru_cache(maxsize=4096)(fn)

    @functools.wraps(fn)
    def remembered(*args, **statics):
        try:
            return cached(*args, **statics)
        except TypeError:
            return fn(*args, **statics)
    return remembered


@_remembered
def view_strides(size, stride, shape):
    """The strides of ``view(shape)`` of a tensor of geometry ``(size, stride)``, or None
    where the new shape would split or merge dimensions that are not adjacent in storage
    (``view`` raises, ``reshape`` copies)."""
    if not size:
        return (1,) * len(shape)
    if math.prod(size) == 0:  # nothing to read: any strides do
        return tuple(stride) if tuple(size) == tuple(shape) else _views.contiguous_strides(shape)
    out = [0] * len(shape)
    v = len(shape) - 1
    # walk the old dims from the last, in runs that are contiguous in storage; each run
    # must be covered exactly by a run of new dims
    base_stride, run, vrun = stride[-1], 1, 1
    for d in range(len(size) - 1, -1, -1):
        run *= size[d]
        if d == 0 or (size[d - 1] != 1 and stride[d - 1] != run * base_stride):
            while v >= 0 and (vrun < run or shape[v] == 1):
                out[v] = vrun * base_stride
                vrun *= shape[v]
                v -= 1
            if vrun != run:
                return None
            if d > 0:
                base_stride, run, vrun = stride[d - 1], 1, 1
    return tuple(out) if v == -1 else None


def _drop(seq, dims):
    return tuple(x for i, x in enumerate(seq) if i not in dims)


# NOTE: the view ops' statics are dims (and indices) as given, which PyTorch's nodes save:
# the geometries wrap negative ones


def _squeeze(size, stride, offset, dim):
    dims = {i for i, s in enumerate(size) if s == 1} if dim is None else {
        d % len(size) for d in dim if size and size[d] == 1}
    return _drop(size, dims), _drop(stride, dims), offset


def _unsqueeze(size, stride, offset, dim):
    dim %= len(size) + 1
    st = size[dim] * stride[dim] if dim < len(size) else 1
    return size[:dim] + (1,) + size[dim:], stride[:dim] + (st,) + stride[dim:], offset


def _expand(size, stride, offset, shape):
    lead = len(shape) - len(size)
    new = [0] * lead
    for i, (sz, st) in enumerate(zip(size, stride)):
        new.append(st if sz == shape[lead + i] else 0)
    return tuple(shape), tuple(new), offset


def _slice(size, stride, offset, dim, start, stop, step):
    dim %= len(size)
    start, stop, step = slice(start, stop, step).indices(size[dim])
    n = len(range(start, stop, step))
    return (size[:dim] + (n,) + size[dim + 1:],
            stride[:dim] + (stride[dim] * step,) + stride[dim + 1:],
            offset + start * stride[dim])  # an empty slice too: PyTorch keeps its start


def _diagonal(size, stride, offset, off, d1, d2):
    if off >= 0:
        n = max(min(size[d1], size[d2] - off), 0)
        start = off * stride[d2]
    else:
        n = max(min(size[d1] + off, size[d2]), 0)
        start = -off * stride[d1]
    return (_drop(size, {d1, d2}) + (n,), _drop(stride, {d1, d2}) + (stride[d1] + stride[d2],),
            offset + start if n else offset)


def _permuted(size, stride, offset, dims):
    return tuple(size[d] for d in dims), tuple(stride[d] for d in dims), offset


def laid_out(t, strides):
    """``t``, an op's fresh result, in the storage layout whose strides sort as ``strides``
    (an FFT's, a ``view_as_real`` of a permuted tensor): a hidden C-ordered base in that
    dimension order, of which ``t`` is a plain (non-differentiable, unshared) alias, so
    ``stride()`` and ``is_contiguous()`` answer as PyTorch's (a ``linear`` of it then
    takes PyTorch's path)."""
    order = sorted(range(t.ndim), key=lambda d: -strides[d])
    if order == list(range(t.ndim)):
        return t
    base = Tensor._wrap(jnp.transpose(t._data, order))
    return _views.alias(t, base, diff=False, shared=False, geom_fn=_permuted,
                        statics={"dims": tuple(order.index(d) for d in range(t.ndim))})


def _swap(dims, d0, d1):
    dims = list(dims)
    if dims:  # a 0-d tensor "swaps" dims 0 and -1
        dims[d0], dims[d1] = dims[d1], dims[d0]
    return tuple(dims)


def _select(size, stride, offset, dim, index):
    dim %= len(size)  # NOTE: slicing, not _drop: every index read of an int runs this
    return (size[:dim] + size[dim + 1:], stride[:dim] + stride[dim + 1:],
            offset + index % size[dim] * stride[dim])


def _unfold(sz, st, off, dim, size, step):
    # windows of ``size`` every ``step`` along ``dim``: that dim counts the windows, a new
    # last dim walks one window
    n = (sz[dim] - size) // step + 1
    return (sz[:dim] + (n,) + sz[dim + 1:] + (size,),
            st[:dim] + (st[dim] * step,) + st[dim + 1:] + (st[dim],), off)


_narrow_slice = _remembered(
    lambda sz, st, off, dim, start, length: _slice(sz, st, off, dim, start, start + length, 1))


def _narrowed(sz, st, off, dim, start, length):
    # NOTE: remembered for plain ints only (``split``'s pieces, a model's q/k/v per layer per
    # step): a Tensor ``start`` is hashed by identity and would be kept alive by the cache
    if dim.__class__ is int and start.__class__ is int and length.__class__ is int:
        return _narrow_slice(sz, st, off, dim, start, length)
    return _slice(sz, st, off, dim, start, start + length, 1)


def _reshaped(sz, st, off, shape):
    return tuple(shape), view_strides(sz, st, shape), off


# op name -> geometry of the result from the input's (size, stride, offset) and statics
GEOMETRY = {
    "view": _reshaped,
    "reshape": _reshaped,
    "_reshape_alias": _reshaped,
    "alias": lambda sz, st, off: (sz, st, off),
    "permute": _remembered(_permuted),
    "transpose": _remembered(lambda sz, st, off, d0, d1: _permuted(
        sz, st, off, _swap(range(len(sz)), d0, d1))),
    "t": lambda sz, st, off: (sz[::-1], st[::-1], off),
    "squeeze": _squeeze,
    "squeeze_dim": _squeeze,
    "squeeze_dims": _squeeze,
    "unsqueeze": _unsqueeze,
    "expand": _expand,
    "narrow": _narrowed,
    "slice": _slice,
    "select": _select,
    "diagonal": _diagonal,
    "unfold": _unfold,
    # as_strided's input is contiguous: ``offset`` counts from the input's own offset
    "as_strided": lambda sz, st, off, size, stride, offset: (size, stride, off + offset),
}


# --------------------------------------------------------------------------- making views


# set by ``view_copies._copying``: view functions then return a copy, recorded under the
# view op's ``*_copy`` twin (``PermuteBackward0_copy``), so the copies share their checks
COPY_TWIN = [None]
_NO_STATICS = {}


def view_apply(op, x, statics=None):
    """``op`` (a view op of GEOMETRY) applied to ``x``; the result is a view of ``x``."""
    if COPY_TWIN[0] is not None:
        return apply(COPY_TWIN[0](op), (x,), statics)
    geometry = GEOMETRY[op.name]
    out = None
    # small values held on the host or in a concrete array: NumPy views (a pending value,
    # a model's usual one, is left to apply at once: the host tier declines it)
    if x._arr.__class__ is not Pending and not (
            _gm.enabled and x._requires_grad or dispatch._dual[0] or
            modes.INTERCEPT[0] and modes.intercepts(x)):
        out = _host_view(x, geometry, statics or _NO_STATICS)
    if out is None:
        out = apply(op, (x,), statics)
    return make_view(out, x, geometry, statics)


def view_geometry(name, size, stride, offset, **statics):
    """The geometry after the view op ``name`` of a tensor of ``(size, stride, offset)``."""
    return GEOMETRY[name](size, stride, offset, **statics)


def _chained(size, stride, offset, steps):
    for name, statics in steps:
        size, stride, offset = GEOMETRY[name](size, stride, offset, **statics)
    return size, stride, offset


def chain_geometry(geom, steps):
    """The geometry after the view ops ``steps`` (``(op, statics)``) of one of ``geom``."""
    return _chained(*geom, [(op.name, statics) for op, statics in steps])


def view_chain(x, steps, geom):
    """``x`` through the view ops ``steps`` (``(op, statics)``, left to right: an index's
    selects, slices and unsqueezes; ``geom``: the geometry they give in ``x`` laid out
    contiguously) as one read of ``x``'s array at a position passed as an argument, when
    nothing records or intercepts them (no gradient, no forward AD, no Tensor subclass, a
    concrete array); else None (the caller applies them one by one)."""
    if COPY_TWIN[0] is not None or dispatch._dual[0] or (
            modes.INTERCEPT[0] and modes.intercepts(x)) or (
            _gm.enabled and x._requires_grad):
        return None
    arr = x._data
    if arr.__class__ is not _ARRAY:
        return None
    named = [(op.name, statics) for op, statics in steps]
    out = Tensor._wrap(_views._gather(arr, *geom))
    return make_view(out, x, _chained, {"steps": named})


def multi_view_apply(op, x, statics, geoms):
    """``op`` (a multi-output view op: ``split``, ``unbind``) applied to ``x``; its outputs
    are views of ``x`` whose (geometry function, statics) ``geoms(outputs)`` gives."""
    if COPY_TWIN[0] is not None:
        out = apply(COPY_TWIN[0](op), (x,), statics)
        return out if isinstance(out, tuple) else (out,)
    out = apply(op, (x,), statics)
    out = out if isinstance(out, tuple) else (out,)
    return make_views(out, x, geoms(out), op.node)


def copy_twin(op):
    """``op``, or its ``*_copy`` twin while a ``*_copy`` function runs (for ops that are
    copies here but views in PyTorch, such as ``unfold``)."""
    return op if COPY_TWIN[0] is None else COPY_TWIN[0](op)


def make_view(out, x, geom_fn, statics=None, creation=None, fn_name=None):
    """Mark ``out`` a differentiable view of ``x`` whose geometry ``geom_fn`` maps from
    ``x``'s (PyTorch's creation rules: made in no_grad mode, or inherited from ``x``)."""
    src = x._view
    if src is not None and src.diff:
        grad_base = src.grad_base
        if creation is None and src.creation != _views.DEFAULT:
            # PyTorch's error names the output of this view op (``Output 0 of Select``)
            # (a view made in no_grad mode has no node to name: a generate step's views)
            creation = src.creation
            fn_name = out.grad_fn is not None and _output_name(out) or src.fn_name
    else:  # x is its own autograd base (a root, or a detach()/.data alias)
        grad_base = x
    if creation is None:
        creation = _views.DEFAULT if _gm.enabled else _views.NO_GRAD
    # ``_views.alias``, its frame saved: a model makes a view per few ops
    _ViewInfo(x if src is None else src.base, src, x._arr.shape, geom_fn, statics,
              True, True, creation, fn_name, grad_base, out)
    return out


def _output_name(t):
    """``(node name less "Backward"/"Backward0", output number)`` of ``t``'s grad_fn."""
    node = t.grad_fn
    if node is None:
        return None
    name = node.name().rpartition("::")[2]
    head, _, tail = name.rpartition("Backward")
    return (head + tail if tail != "0" else head) if head else name, t._output_nr


def make_views(outs, x, geoms, name):
    """The outputs of a multi-output view op (``unbind``, ``split``): in-place changes of
    them are an error, as in PyTorch."""
    fn = name[:-len("Backward0")] if name.endswith("Backward0") else name
    for i, (o, (geom_fn, st)) in enumerate(zip(outs, geoms)):
        creation = _views.MULTI if _gm.enabled else _views.NO_GRAD
        make_view(o, x, geom_fn, st, creation, (fn, i))
    return outs


def select_geometry(dim, index):
    return GEOMETRY["select"], {"dim": dim, "index": index}


def narrow_geometry(dim, start, length):
    return GEOMETRY["narrow"], {"dim": dim, "start": start, "length": length}


# --------------------------------------------------------------------------- in-place


class CopySlices(_Node):
    """The base's node after an in-place op on one of its views: the gradient of the
    base, with the view's part of it replaced by what the in-place op's node ``fn``
    gives for its ``self``; ``fn``'s other inputs get their gradients from ``fn``."""

    __slots__ = ("_fn", "_geom", "_aval", "_flip")

    def __init__(self, base_edge, fn, geom, aval, flip=False):
        _Node.__init__(self, (base_edge, *fn._next[1:]))
        self._fn, self._geom, self._aval, self._flip = fn, geom, aval, flip

    def name(self):
        return "torch::autograd::CopySlices"

    def __repr__(self):
        return f"<CopySlices object at {hex(id(self))}>"

    def _out_meta(self):
        return (self._aval,)

    def _release(self):
        self._fn._release()

    def _apply(self, grads, create_graph):
        import jax.numpy as jnp
        g = grads[0]
        if g is None:
            g = Tensor._wrap(jnp.zeros(self._aval.shape, self._aval.dtype))
        size, stride, offset = self._geom
        st = {"size": size, "stride": stride, "offset": offset}
        if self._flip:  # a view of the other kind of dtype: its part of the flipped storage
            read = AS_STRIDED_COMPLEX if g.dtype.is_floating_point else AS_STRIDED_REAL
            res = self._fn._apply([apply(read, (g,), st)], create_graph)
            part = res[0]
            if part is None:
                part = Tensor._wrap(jnp.zeros(size, _views.flipped(
                    jnp.zeros((2,), self._aval.dtype)).dtype))
            return [apply(AS_STRIDED_SCATTER_FLIPPED, (g, part), st), *res[1:]]
        res = self._fn._apply([apply(AS_STRIDED, (g,), st)], create_graph)
        part = res[0]
        if part is None:
            part = Tensor._wrap(jnp.zeros(size, self._aval.dtype))
        return [apply(AS_STRIDED_SCATTER, (g, part), st), *res[1:]]



def check_view_inplace(t, info, record):
    """PyTorch's checks before an in-place op on the view ``t`` (``info``: its ViewInfo):
    autograd's first, then the kernel's overlap check."""
    base = info.grad_base
    if _gm.enabled and (record or base._requires_grad):
        _check_view_creation(info.creation, info.fn_name)
        check_leaf_view(base, t)
    if _views.is_overlapping(*info.geom[:2]):
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")


def check_setitem_view(t, view_name):
    """``t[idx] = v`` writes through a view PyTorch makes of ``t`` (``view_name``: the last
    view op of the index, ``Select``): a view of a custom Function's output, or of a
    multi-output view op's, fails as an in-place write into that view."""
    info = t._view
    if info is not None and info.diff and _gm.enabled and info.grad_base._requires_grad and \
            info.creation in (_views.MULTI, _views.CUSTOM):
        _check_view_creation(info.creation, (view_name, 0))
    check_leaf_view(t)


def _check_view_creation(creation, fn_name):
    if creation in VIEW_CREATION_REASONS:
        raise RuntimeError(f"Output {fn_name[1]} of {fn_name[0]} is a view and is being "
                           f"modified inplace. {VIEW_CREATION_REASONS[creation]}")
    if creation == _views.NO_GRAD:
        raise RuntimeError("A view was created in no_grad mode and is being modified inplace "
                           f"with grad mode enabled. {NO_GRAD_VIEW_ADVICE}")


def check_leaf_view(base, view=None):
    """PyTorch's error for an in-place write into a view of ``base``, a leaf, where the
    base or the ``view`` requires grad (with grad mode on): a view made to require grad
    (``arange(6.).reshape(2, 3).requires_grad_()``) is still a view of a leaf."""
    if base.grad_fn is None and _gm.enabled and (
            base._requires_grad or view is not None and view._requires_grad):
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


def check_inplace(out, record):
    """PyTorch's checks before an in-place write into ``out``: a view's, else a leaf's."""
    info = out._view
    if info is not None and info.diff:
        check_view_inplace(out, info, record)
    else:
        _check_inplace(out, record)


def inplace(op, key, args, arrs, fn, out, record):
    """``dispatch.apply``'s in-place branch for a tensor that aliases others."""
    info = out._view
    view = info is not None and info.diff
    check_inplace(out, record)
    _inplace_stage.write_checked(op, key, args, arrs, fn, out, record)
    if record and view:
        rebase_base(info, out.grad_fn)
    if view:
        regenerate(info.grad_base)
    elif info is None:
        regenerate(out)
    return out


def rebase_base(info, fn):
    """After an in-place op (node ``fn``) on a view: the base's history is ``CopySlices``."""
    base = info.grad_base
    node = CopySlices(base._edge(), fn, info.ggeom, base._data.aval, info.flip)
    move_history(base, node)


def move_history(t, node, nr=0):
    """``t``'s history moves onto ``node`` (output ``nr``), as an in-place op rebases it:
    hooks registered before stay with the old node, ``retain_grad`` moves to the new one."""
    old, old_nr = t.grad_fn, t._output_nr
    t.grad_fn, t._output_nr, t._requires_grad = node, nr, True
    t._backward_hooks = None
    if t._retains_grad:
        if old is not None and old._retain_hooks:
            old._retain_hooks.pop(old_nr, None)
        node._set_retain_grad(t)


def regenerate(base):
    """The views of ``base`` read it anew after a write: each one that tracks gradients
    gets an ``AsStridedBackward0`` node on the base's current history, as PyTorch's
    views do when their ``grad_fn`` is next read."""
    if base.grad_fn is None and not base._requires_grad:
        return
    for w in _views.live_views(_views.root(base)):
        winfo = w._view
        if winfo.grad_base is not base:
            continue
        if winfo.creation != _views.DEFAULT and winfo.diff:
            # PyTorch does not regenerate such a view's grad_fn: using it raises
            w.grad_fn, w._output_nr = _views.StaleView(stale_view_message(winfo)), 0
            w._requires_grad = True
            continue
        size, stride, offset = winfo.ggeom
        st = (("size", size), ("stride", stride), ("offset", offset))
        op = AS_STRIDED if not winfo.flip else AS_STRIDED_REAL if \
            jnp.iscomplexobj(base._data) else AS_STRIDED_COMPLEX
        node = _record(op, st, (base,), w._data).grad_fn
        move_history(w, node)


_inplace_stage.ALIASED[0] = inplace
