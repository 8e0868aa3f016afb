"""Views by functionalization: how a view is read from its base, and writes through it.

JAX arrays are immutable, so a view cannot share memory with its base. Instead a view
remembers its *geometry* in its root base's storage: sizes, strides and an offset in
elements over the base's C-contiguous layout, composed along the chain of view ops, as
PyTorch's strides would be. Its array is always current: a write (``Tensor._write_``)
scatters the written tensor's new array into the root base and gathers every live alias
of that base again (writes are rare; reads, the hot path, cost nothing). The version
counter PyTorch shares between a base and its views is kept equal the same way.

Autograd's part of a write through a view (``CopySlices``, ``AsStridedBackward0``) is in
``hookgrad/_ops/views.py``, one layer up.
"""
import functools
import sys
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from . import _host_transfer

# how a view was made, as PyTorch's CreationMeta: what an in-place op on it may do
DEFAULT, NO_GRAD, MULTI, CUSTOM = "default", "no_grad", "multi", "custom"


class StaleView:
    """The ``grad_fn`` of a view made by a multi-output op or inside a custom Function after
    its base (or another view of that base) was written: as in PyTorch, reading anything
    of it, or using the view in an op or a backward, raises ``RuntimeError(message)``."""

    __slots__ = ("_message",)

    def __init__(self, message):
        object.__setattr__(self, "_message", message)

    def __getattribute__(self, name):
        raise RuntimeError(object.__getattribute__(self, "_message"))


def check_stale(grad_fn):
    """Raise the error of a :class:`StaleView` ``grad_fn`` (before it enters a graph)."""
    if type(grad_fn) is StaleView:  # NOTE: type() reads nothing of it (any attribute raises)
        raise RuntimeError(object.__getattribute__(grad_fn, "_message"))


class ViewInfo:
    """What a view (or a ``detach()``/``.data`` alias) knows about its root base.

    ``diff``: a differentiable view (``_is_view()``, ``_base``); ``shared``: shares the
    base's version counter (views and ``detach()``, not ``.data``); ``gen``: the base's
    storage generation the view reads (``base.data = other`` starts a new one).
    ``grad_base`` is autograd's base (``_base``): the storage root unless the view was made
    from a ``detach()``/``.data`` alias. Given ``t``, a Tensor just made, it makes ``t``
    this alias (``alias``).

    NOTE: the geometry is worked out when first read (a write, ``stride()``), not when the
    view is made: making views is common, reading their strides rare. ``geom_fn(size,
    stride, offset, **statics)`` maps the source's geometry (its ViewInfo's, or the
    C-contiguous one of ``shape``) to this one; None keeps it. ``index``: the basic index
    (``_ops/indexing.py``'s template) that read this view of its source, if one did: a write
    of the view back to the same index of the same source (``x[i] += v``) is then known to
    write the region's own values without working the geometry out again. ``key``: the
    index object itself (``x[i] += v`` passes the same one to the read and the write).
    """

    __slots__ = ("base", "diff", "shared", "creation", "fn_name", "grad_base", "gen",
                 "_src", "_shape", "_fn", "_st", "_geom", "_ggeom", "index", "key", "flip")

    def __init__(self, base, src, shape, geom_fn, statics, diff, shared, creation, fn_name,
                 grad_base, t=None):
        self.base, self.diff, self.shared = base, diff, shared
        self.creation, self.fn_name, self.grad_base = creation, fn_name, grad_base
        self.gen = base._gen
        self._src, self._shape, self._fn, self._st = src, shape, geom_fn, statics
        self._geom = self._ggeom = self.index = self.key = None
        # ``flip``: the view reads its root's storage in the other kind of dtype (complex
        # pairs as reals, reals as complex pairs: ``view_as_real``/``view_as_complex``),
        # its geometry counted in its own elements of that storage (see ``flipped``)
        self.flip = False if src is None else src.flip
        if t is None:
            return
        # ``t``, a Tensor just made, becomes this alias of ``base`` (here, not in ``alias``:
        # a view made per op pays no frame more for it)
        _set_uncounted(t, "_view", self)
        refs = base._views
        if refs is None:
            refs = []
            _set_uncounted(base, "_views", refs)
        else:
            n = len(refs)
            # drop dead aliases now and then: at each power of two from 32, so that a base
            # with many live views (``list(x)``, ``[x[i] for i in ...]``) pays O(1) a view
            # amortized, not a walk of them all per view
            if n >= 32 and not n & (n - 1):
                refs[:] = [r for r in refs if r() is not None]
        refs.append(weakref.ref(t))
        if shared:
            # a plain int version goes straight to the slot (the property's two lambdas cost
            # two Python calls a view); a moving one (``_watch.Moving``) is read by the property
            ver = base._ver
            _set_uncounted(t, "_ver", ver if ver.__class__ is int else base._version)

    def _from(self, geom):
        fn = self._fn
        return geom if fn is None else fn(*geom, **self._st) if self._st else fn(*geom)

    def made_by(self, source, index):
        """Whether this view is ``source[index]`` as an index read made it (``index``: a
        template of basic indices), from ``source`` as it is now."""
        return self.index == index and self._src is source._view and \
            self._shape == source._arr.shape and self.base is root(source)

    @property
    def geom(self):
        """``(size, stride, offset)`` in the root's storage."""
        g = self._geom
        if g is None:
            src = self._src
            g = self._geom = self._from(src.geom if src is not None
                                        else contiguous_shape_geometry(self._shape))
        return g

    @property
    def ggeom(self):
        """The geometry in ``grad_base`` (laid out C-contiguously), for autograd."""
        g = self._ggeom
        if g is None:
            src = self._src
            if src is None:
                g = self.geom
            elif src.diff:
                g = self.geom if src.ggeom is src.geom else self._from(src.ggeom)
            else:  # made from a detach()/.data alias: that alias is the autograd base
                g = self._from(contiguous_shape_geometry(self._shape))
            self._ggeom = g
        return g


def contiguous_strides(shape):
    return _contiguous_strides(tuple(shape))


@functools.lru_cache(maxsize=4096)  # index reads and writes ask for it per call
def _contiguous_strides(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def geometry(t):
    """``(size, stride, offset)`` of ``t`` in its root's storage."""
    info = t._view
    return contiguous_geometry(t) if info is None else info.geom


def contiguous_geometry(t):
    # NOTE: the shape ``_arr`` knows: a pending value is not computed for it (a Linear's
    # fold check reads its input's strides per call), a host-held one not transferred
    return contiguous_shape_geometry(tuple(t._arr.shape))


def contiguous_shape_geometry(shape):
    return shape, contiguous_strides(shape), 0


def root(t):
    info = t._view
    return t if info is None else info.base


def alias(t, source, *, diff, shared, geom_fn=None, statics=None, creation=DEFAULT,
          fn_name=None, grad_base=None):
    """Make ``t``, a Tensor just made, an alias of ``source``'s storage, read from it by
    ``geom_fn`` (see ViewInfo; None: the same elements): writes to either reach the other.
    These writes are not counted by ``hookgrad._watch``: no one else holds ``t`` yet, and
    the base's list of aliases is eager-only (``Tensor._COMPILE_LOCAL``)."""
    src = source._view
    # NOTE: ``_arr``'s shape: a deferred source stays deferred (its shape is known)
    ViewInfo(source if src is None else src.base, src, source._arr.shape, geom_fn, statics,
             diff, shared, creation, fn_name, grad_base, t)
    return t


_set_uncounted = object.__setattr__   # bypasses ``Tensor.__setattr__``'s count


def is_overlapping(size, stride):
    """Whether two elements of a view of this geometry share a storage place (expand)."""
    return any(st == 0 and sz > 1 for sz, st in zip(size, stride))


@functools.lru_cache(maxsize=1024)
def _flat_index(size, stride, offset):
    hi = offset + sum((sz - 1) * st for sz, st in zip(size, stride))
    idx = np.full(size, offset, np.int32 if hi < 2 ** 31 else np.int64)
    for d, (sz, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = sz
        idx = idx + (np.arange(sz) * st).reshape(shape).astype(idx.dtype)
    return idx


def gather_plain(b, size, stride, offset):
    return b.reshape(-1)[_flat_index(size, stride, offset)]


def scatter_plain(b, v, size, stride, offset):
    """``b`` with the places of the view ``(size, stride, offset)`` set to ``v``."""
    flat = b.reshape(-1).at[_flat_index(size, stride, offset)].set(v.astype(b.dtype))
    return flat.reshape(b.shape)


@functools.lru_cache(maxsize=1024)
def _region(shape, size, stride):
    """The extent, per dimension of a C-contiguous array of ``shape``, of the box a view
    of ``(size, stride)`` covers, or None when the view is no box (transposed, strided,
    overlapping): slices and selects of a base are boxes, read and written as
    ``dynamic_slice`` / ``dynamic_update_slice`` at a position passed as an argument."""
    base_strides = contiguous_strides(shape)
    region = [1] * len(shape)
    d = 0
    for sz, st in zip(size, stride):
        if sz == 1:
            continue
        while d < len(shape) and (base_strides[d] != st or shape[d] < sz):
            d += 1
        if d == len(shape):
            return None
        region[d] = sz
        d += 1
    return tuple(region)


def _box(shape, size, stride, offset):
    """``(region, starts)`` of the view ``(size, stride, offset)`` in a base of ``shape``,
    or None when it is no box."""
    region = _region(shape, size, stride)
    if region is None:
        return None
    starts = []
    for n, st, r in zip(shape, contiguous_strides(shape), region):
        k = offset // st % n if n else 0
        if k + r > n:
            return None
        starts.append(k)
    if sum(k * st for k, st in zip(starts, contiguous_strides(shape))) != offset:
        return None
    return region, tuple(starts)


def _gather_box(b, starts, region, size):
    return jax.lax.dynamic_slice(b, list(starts), region).reshape(size)


def _scatter_box(b, v, starts, region):
    return jax.lax.dynamic_update_slice(b, v.astype(b.dtype).reshape(region), list(starts))


def _positions(starts):
    # NOTE: one array, not a tuple of Python ints: a call transfers each argument
    return np.asarray(starts, np.int32 if max(starts, default=0) < 2 ** 31 else np.int64)


_gather_box_jit = jax.jit(_gather_box, static_argnames=("region", "size"))
_scatter_box_jit = jax.jit(_scatter_box, static_argnames=("region",))
_scatter_box_in_place = jax.jit(_scatter_box, static_argnames=("region",), donate_argnums=0)
_gather_plain_jit = jax.jit(gather_plain, static_argnames=("size", "stride", "offset"))
_scatter_plain_jit = jax.jit(scatter_plain, static_argnames=("size", "stride", "offset"))


def _gather(b, size, stride, offset):
    """The view ``(size, stride, offset)`` of the root array ``b``: a box is read at its
    position as an argument (one program for every position); a small array on the CPU
    is read on the host, with no XLA call (hookgrad/_host_transfer.py)."""
    box = _box(b.shape, size, stride, offset)
    if box is not None:
        return gather_box(b, box[0], box[1], size)
    host = _host_transfer.host_copy(b)
    if host is not None:
        part = host.reshape(-1)[_flat_index(size, stride, offset)]  # a copy
        return _host_transfer.put_known(part.reshape(size))
    return _gather_plain_jit(b, size=size, stride=stride, offset=offset)


def gather_box(b, region, starts, size):
    """The box ``region`` of ``b`` at ``starts``, of shape ``size``: cut on the host for a
    small CPU array, else read by the program every position shares."""
    host = _host_transfer.host_copy(b)
    if host is None:
        return _gather_box_jit(b, _positions(starts), region=region, size=size)
    # NOTE: copied: the CPU client may keep using the memory it is given, and the base's
    # (whose buffer a donated write reuses) must not be that memory
    part = np.array(host[tuple(slice(k, k + r) for k, r in zip(starts, region))])
    return _host_transfer.put_known(part.reshape(size))


def _scatter(b, v, size, stride, offset, sole=False):
    """``b`` with the view ``(size, stride, offset)`` set to ``v`` (a box: one program
    for every position); ``sole``: nothing else holds ``b``, so a box is written in place
    (``b``'s buffer donated): the write costs the region, not the array."""
    box = _box(b.shape, size, stride, offset)
    if box is None:
        return _scatter_plain_jit(b, v, size=size, stride=stride, offset=offset)
    return (_scatter_box_in_place if sole else _scatter_box_jit)(b, v, _positions(box[1]),
                                                                region=box[0])


_refcount = sys.getrefcount
# the base's slot, ``propagate``'s ``old`` and getrefcount's argument; NOTE: from Python
# 3.14 on, references the interpreter borrows are not counted: no donation there (-1)
_HELD_BY_PROPAGATE = 3 if sys.version_info < (3, 14) else -1


def flipped(arr):
    """The root array ``arr``'s storage read in the other kind of dtype, as a flipped view
    reads it (its geometry counts these elements): a complex array's as its reals (its
    shape and a last dimension of 2: each real part, then its imaginary part), a real
    array's as complex numbers, flat (each pair of its C-ordered elements; an odd last one,
    which no complex view reads, completed by a zero)."""
    if jnp.iscomplexobj(arr):
        return jnp.stack([arr.real, arr.imag], -1)
    flat = arr.reshape(-1)
    if flat.size % 2:
        flat = jnp.concatenate([flat, jnp.zeros(1, flat.dtype)])
    return jax.lax.complex(flat[0::2], flat[1::2])


def unflipped(store, arr):
    """The root array of ``arr``'s shape and dtype whose storage read flipped is ``store``
    (``flipped``'s inverse)."""
    if jnp.iscomplexobj(arr):
        return jax.lax.complex(store[..., 0], store[..., 1])
    flat = jnp.stack([store.real, store.imag], -1).reshape(-1)
    return flat[:arr.size].reshape(arr.shape)


def read(arr, info):
    """The view ``info`` of the root array ``arr`` (its storage flipped where ``info``
    is)."""
    return _gather(flipped(arr), *info.geom) if info.flip else _gather(arr, *info.geom)


def propagate(t):
    """After ``t._data`` was replaced and ``t._version`` bumped: write the new array into
    ``t``'s root base and every live alias of it, and share the version."""
    info = t._view
    base = t if info is None else info.base
    # NOTE: .data/detach() aliases cover their base whole: they need no XLA call
    whole = contiguous_geometry(base)
    shared = True
    if info is not None:
        shared = info.shared
        if info.gen == base._gen:
            geom = info.geom
            if info.flip:  # (the storage in the view's kind of dtype, written, and back)
                old = base._data
                base._data = unflipped(_scatter(flipped(old), t._data, *geom), old)
                del old
            elif geom == whole:
                base._data = t._data
            else:  # in place when nothing but the base holds its array
                old = base._data
                sole = _refcount(old) <= _HELD_BY_PROPAGATE and \
                    not isinstance(old, jax.core.Tracer)
                base._data = _scatter(old, t._data, *geom, sole)
                del old
        if shared:
            base._version = t._version
    refresh(base, t, shared)


def refresh(base, t, shared):
    """After ``base`` (a root) was written through ``t`` (it, or an alias of it): every
    other live alias reads it anew, and those ``shared`` with ``t`` take its version."""
    refs = base._views
    if not refs:
        return
    arr, gen, version = base._data, base._gen, base._version
    whole = None
    # NOTE: inside a hookgrad.compile trace the new array is a tracer: an alias made
    # outside the trace keeps its value (it must not hold a traced one)
    traced = isinstance(arr, jax.core.Tracer)
    for w in other_aliases(base, t):
        winfo = w._view
        if winfo.gen == gen and (not traced or isinstance(w._data, jax.core.Tracer)):
            geom = winfo.geom
            if whole is None:
                whole = contiguous_geometry(base)
            w._data = read(arr, winfo) if winfo.flip else arr if geom == whole else \
                _gather(arr, *geom)
        if shared and winfo.shared:
            w._version = version


def other_aliases(base, t):
    """The live aliases of the root ``base`` but ``t``; the dead ones' references are
    dropped once the caller has walked them all (a loop's index reads die at once: each
    write would walk them again)."""
    refs = base._views
    if not refs:
        return
    dead = False
    for r in refs:
        w = r()
        if w is None:
            dead = True
        elif w is not t:
            yield w
    if dead:
        refs[:] = [r for r in refs if r() is not None]
        if not refs:
            base._views = None


def share_version(t):
    """After ``t._version`` was bumped without a write: the aliases sharing its counter
    follow."""
    info = t._view
    base = t if info is None else info.base
    if info is not None:
        if not info.shared:
            return
        base._version = t._version
    for r in base._views or ():
        w = r()
        if w is not None and w is not t and w._view.shared:
            w._version = base._version


def live_views(base):
    """The live differentiable views of ``base`` (a root)."""
    out = []
    for r in base._views or ():
        w = r()
        if w is not None and w._view.diff:
            out.append(w)
    return out


def new_storage(t):
    """``t`` got an array of its own (``t.data = other``, ``set_``): its old aliases keep
    their values (and, like PyTorch's, the version counter) but no longer write through."""
    info = t._view
    if info is not None:
        info.gen = -1
    elif t._views:
        t._gen += 1
