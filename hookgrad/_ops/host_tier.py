"""Python loops of writes and reads on small CPU Tensors, done in NumPy (the host tier).

``imgs[i, 0, r:r + 8] += 2.0``, ``out[i] = row``, ``labels[i].item()``: as XLA programs each
costs a dispatch (10-15 microseconds on the CPU) where PyTorch's whole statement costs
3-11. Here a root Tensor of at most ``BOUND`` elements that a basic-index write reaches
holds its values as a writable NumPy array (``hookgrad/_host_value.py``): the write, an
in-place ``+ - * /`` on an index view of it, an index read and ``.item()`` act on that
array, and a read that needs XLA copies it into a ``jax.Array`` once (``Tensor._data``).

Only when nothing records, traces or intercepts: a Tensor that requires grad, an op under
a mode (``__torch_function__``, dispatch modes, forward AD), a JAX trace (``compile``,
``func``) or a committed array (another device) takes the XLA path, which reads the
values out of the host first. Versions are bumped and shared as that path's are. The
aliases of a host-held root hold NumPy views of its memory (any geometry, by strides),
so a write is seen through them as through PyTorch's shared storage.

NumPy's own ``+ - * /`` on float32/float64 round as XLA's and PyTorch's CPU kernels do
(one correctly rounded IEEE operation; a Python number is cast to the Tensor's dtype
first, as both do); integer ``+ - *`` wrap alike. Anything else takes the XLA path.
"""
import math
import weakref

import jax
import numpy as np

from .. import _host_transfer, _jax_trace, _views
from .._host_value import DTYPES, Host, Store
from .._tensor import (Pending, Tensor, _set_arr, _set_fn, _set_nr, _set_rg, _set_version,
                       bump_version, set_version)
from . import box_index
from .lazy import ARRAY

_no_trace = _jax_trace.no_trace  # a JAX transformation must see every write as an op

try:  # NOTE: private: ``jax.config.jax_default_device`` reads it through a Python lambda,
    # a frame per host op
    from jax._src.config import default_device as DEFAULT_DEVICE
except ImportError:  # pragma: no cover - another JAX's layout: the public read
    class _DefaultDevice:
        value = property(lambda _: jax.config.jax_default_device)
    DEFAULT_DEVICE = _DefaultDevice()

# elements: a root this small may be written on the host. Entering copies it out of XLA
# and the next XLA read copies it back (about 0.1 ms per MB each here): a loop of writes
# pays that once, and a root whose writes do not pay for it stays in XLA (``_tally``)
BOUND = 1 << 20
AMORTIZE = 4096  # elements of a root's two copies that each write must pay for (see _tally)
_FLOATS = frozenset(np.dtype(t) for t in (np.float32, np.float64))
_DTYPES = DTYPES
_UFUNCS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}
_NUMBERS = (int, float, bool)


def held(values, store=None):
    """A plain Tensor holding ``values`` (a NumPy array) on the host, as
    ``Tensor._wrap(Host(values, store))`` makes it, in one call: the host stage's and
    the host tier's results (a loop makes one per statement)."""
    h = _new(Host)
    h.np = values  # (a plain slot store: Host has no ``__setattr__`` of its own)
    h.store = store
    t = _new(Tensor)
    # ``_tensor._fresh``'s fill of a new Tensor's slots, without its frame (as
    # ``Tensor._wrap``'s): a loop's every host op and index read makes one
    _set_arr(t, h)
    _set_fn(t, None)
    _set_nr(t, 0)
    _set_rg(t, False)
    _set_version(t, 0)
    return t


_new = object.__new__


def _enterable(t):
    """Whether the root ``t`` may move its values to the host: a concrete, uncommitted,
    strongly typed CPU array of at most ``BOUND`` elements that nothing differentiates, or
    a host stage result (held already, read-only: a write copies it)."""
    a = t._arr
    if a.__class__ is Pending:
        if t._requires_grad or a.aval.weak_type:
            return False
        a = t._data
    elif a.__class__ is Host:  # a read-only result of the host stage (``stages/host.py``)
        return a.store is None and not t._requires_grad and a.size <= BOUND and \
            DEFAULT_DEVICE.value is None
    if not (a.__class__ is ARRAY and not t._requires_grad and not a._committed and
            not a.weak_type and a.size <= BOUND and a.dtype in _DTYPES and
            _host_transfer._entry() is not None and DEFAULT_DEVICE.value is None):
        return False
    if a.size <= _host_transfer.HOST_MAX:
        return True
    held, writes = _tally(t)
    return writes * AMORTIZE >= held * a.size


_TALLIES = {}  # id(root) -> (weak reference to it, its Store's tally)


def _tally(t):
    """``t``'s ``[times held, writes]``: holding a larger root on the host costs two copies
    of it (in, and out at the next XLA read), which its writes must pay for (``AMORTIZE``
    elements per write); one that alternates few writes with XLA reads stays in XLA."""
    e = _TALLIES.get(id(t))
    if e is not None and e[0]() is t:
        return e[1]
    tally = [0, 0]
    key = id(t)
    _TALLIES[key] = (weakref.ref(t, lambda _, key=key: _TALLIES.pop(key, None)), tally)
    return tally


def enter(t):
    """Hold the root ``t``'s values on the host (its aliases' too)."""
    tally = _tally(t)
    tally[0] += 1
    a = t._arr
    # C order: the aliases' strides count elements of the root's C-ordered memory
    store = Store(np.array(a.np if a.__class__ is Host else t._data, order="C"), tally)
    _set_arr(t, Host(store.np, store))  # the same values: not a write
    _host_aliases(t, store, None, False)
    return store


def writable(t):
    """``(root, store)`` when a write of ``t`` may act on host memory (entering its root
    if ``t`` is one), else None."""
    info = t._view
    if t._requires_grad or not _no_trace():
        return None
    if info is None:
        a = t._arr
        if a.__class__ is Host and a.store is not None:
            return t, a.store
        return (t, enter(t)) if _enterable(t) else None
    root = info.base
    a, r = t._arr, root._arr
    if info.gen != root._gen or root._requires_grad:
        return None
    if a.__class__ is Host:
        # NOTE: an expanded view's elements share memory: PyTorch raises for its write
        if r.__class__ is Host and a.store is not None and a.store is r.store and \
                0 not in a.np.strides:
            return root, a.store
    elif a.__class__ is Pending and a.fn.__class__ is box_index.BoxRead and \
            a.value is None and a.args[0] is r and root._view is None and \
            _enterable(root):
        # ``x[i, a:b] += v``: the read of a root not written yet. An op deferred on the
        # read keeps reading the root's old array (a jax.Array never changes)
        return root, enter(root)
    return None


def _host_aliases(root, store, t, bump):
    """After a write of ``store`` through ``t`` (None: entering, no write): each live
    alias of ``root`` not viewing ``store`` views it, and, when ``bump``, ``t``'s version
    is bumped and shared as ``_views.propagate`` shares it."""
    shared = True
    if bump:
        store.tally[1] += 1
        version = bump_version(t)
        info = t._view
        if info is not None:
            shared = info.shared
            if shared:
                set_version(root, version)
    if not root._views:  # no alias to keep current (a loop's usual write)
        return
    for w in _views.other_aliases(root, t):
        winfo = w._view
        if winfo.gen == root._gen:
            a = w._arr
            if a.__class__ is not Host or a.store is not store:
                values = _flipped(store.np) if winfo.flip else store.np
                _set_arr(w, Host(_strided(values, *winfo.geom), store))
        if bump and shared and winfo.shared:
            set_version(w, version)


def _flipped(array):
    """The C-ordered ``array``'s memory read in the other kind of dtype (a flipped view's,
    ``_views.flipped``): a complex one's as its reals, a real one's as complex pairs (an
    odd last element left out). NumPy reinterprets: the result shares the memory."""
    flat = array.reshape(-1)
    if array.dtype.kind == "c":
        return flat.view(np.finfo(array.dtype).dtype)
    return flat[:flat.size // 2 * 2].view(np.result_type(array.dtype, np.complex64))


def _strided(array, size, stride, offset):
    flat = array.reshape(-1)
    item = array.itemsize
    return np.lib.stride_tricks.as_strided(flat[offset:], size, [s * item for s in stride])


def read(self, idx, found):
    """``self[idx]`` (``found``: ``box_index.parse``'s) as a Tensor viewing ``self``'s host
    memory when ``self`` is held on the host, or a read-only copy of a small CPU array's
    values; else None."""
    found_values = _held(self._arr)
    if found_values is None:
        return None
    values, store = found_values
    return held(values[_np_index(idx, found[0])], store)


def _held(a):
    """``(values, store)`` of the array ``a`` of a Tensor held on the host, or of a small
    CPU array or a pending one computed already (a read-only copy, ``store`` None: read,
    never written through); else None."""
    if a.__class__ is Host:
        return a.np, a.store
    if a.__class__ is Pending:
        a = a.value  # computed already, or None
    if a.__class__ is ARRAY and a.size <= _host_transfer.HOST_MAX and _no_trace():
        values = _host_transfer.host_copy(a)
        return None if values is None else (values, None)
    return None


def view(x, geometry, statics):
    """A view op on ``x`` (``geometry``: its ``views.GEOMETRY`` entry) as a Tensor whose
    values are a NumPy view of ``x``'s host memory by that geometry, when ``x`` is held on
    the host or is a small CPU array (then a view of a read-only copy); else None. The
    caller marks it a view of ``x``, so a later write is seen through it (``_host_aliases``)."""
    found_values = _held(x._arr)
    if found_values is None:
        return None
    values, store = found_values
    item = values.itemsize
    try:
        size, stride, offset = geometry(values.shape, tuple(s // item for s in values.strides), 0,
                                        **statics)
    except Exception:  # noqa: BLE001 - a geometry with no view (a reshape that copies)
        return None
    if offset or stride is None:
        return None
    strides = tuple(s * item for s in stride)
    # C-ordered memory reshaped is a view of it (view, reshape, unsqueeze): NumPy's fast way
    if not (values.flags.c_contiguous and math.prod(size) == values.size and
            (out := values.reshape(size)).strides == strides):
        out = np.lib.stride_tricks.as_strided(values, size, strides,
                                              writeable=values.flags.writeable)
    return held(out, store)


def _np_index(idx, template):
    # NOTE: an Ellipsis keeps NumPy's result a view (all ints would give a scalar copy)
    if idx.__class__ is not tuple:
        idx = (idx,)
    return idx if ("E",) in template else (*idx, Ellipsis)


def write(self, idx, value, found):
    """``self[idx] = value`` on the host when ``self`` may be written there and ``value``
    is a number or a plain CPU Tensor that casts and broadcasts quietly; returns whether
    it was written."""
    a = self._arr
    store = a.store if a.__class__ is Host else None
    v = _host_operand(value, a.dtype, store)
    if v is None:
        return False
    template, size = found[0], found[1]
    if v.__class__ is np.ndarray:
        if not box_index.broadcasts(v.shape, size, v.dtype, a.dtype):
            return False
    if store is not None and self._view is None and not self._requires_grad and _no_trace():
        root = self  # a root held on the host already: ``writable``'s first answer
    else:
        place = writable(self)
        if place is None:
            return False
        root, store = place
    dst = self._arr.np
    if v.__class__ is np.ndarray and v.ndim and v.shape[0] == 1:
        k = 1
        while k < v.ndim and v.shape[k] == 1:  # as PyTorch: leading size-1 dims dropped
            k += 1
        v = v.reshape(v.shape[k:])
    if idx.__class__ is not tuple:  # ``_np_index``, inlined
        idx = (idx,)
    at = idx if ("E",) in template else (*idx, Ellipsis)
    if v.__class__ is np.ndarray and v.dtype is dst.dtype:
        dst[at] = v  # no cast: nothing to warn about
    else:
        token = _ERRSTATE.set(_IGNORE)  # a float64 value past float32's range becomes
        # inf, quietly
        try:
            dst[at] = v
        finally:
            _reset(token)
    _host_aliases(root, store, self, True)
    return True


def _host_operand(value, dtype, store):
    """``value`` as a NumPy array or Python number that NumPy casts to ``dtype`` as
    PyTorch's copy does (else None): not complex into real, not float into an integer
    dtype, a number in the dtype's range; never a view of ``store`` (an overlap: the XLA
    path raises PyTorch's error)."""
    c = value.__class__
    if c in _NUMBERS:
        if dtype.kind in "iub":
            if c is float and dtype.kind != "b":
                return None
            if c is int and dtype.kind != "b":
                info = np.iinfo(dtype)
                if not info.min <= value <= info.max:
                    return None
        elif c is int and not -(1 << 53) <= value <= 1 << 53:
            return None
        return value
    if not isinstance(value, Tensor) or value._requires_grad:
        return None
    a = value._arr
    if a.__class__ is Host:
        if a.store is store and store is not None:
            return None
        v = a.np
    else:
        if a.__class__ is Pending:
            a = value._data
        if a.__class__ is not ARRAY or a._committed:
            return None
        v = np.asarray(a)
    vk = v.dtype.kind
    if vk == "c" or (vk == "f" and dtype.kind in "iub") or dtype.kind == "c" or \
            v.dtype not in _DTYPES:
        return None
    return v


def inplace(op, key, args, out):
    """``out.add_(v)`` (sub, mul, div) on the host for ``out`` held there, or an index
    read of a root that may be (``x[i, a:b] += v``), and ``v`` a number or Tensor of
    ``out``'s dtype that broadcasts to it; returns ``out`` or None."""
    a = out._arr
    c = a.__class__
    if c is not Host and not (c is Pending and a.fn.__class__ is box_index.BoxRead):
        return None
    fn = _UFUNCS.get(op.name)
    if fn is None or key or len(args) != 2 or args[0] is not out:
        return None
    dt = a.dtype
    if dt.kind == "b" or (fn is np.divide and dt not in _FLOATS):
        return None
    # the operand is checked before ``writable``, which may move the root to the host
    v = _host_operand(args[1], dt, a.store if c is Host else None)
    if v is None or v.__class__ is np.ndarray and (v.dtype != dt or
                                                   not _fits(v.shape, a.shape)):
        return None
    place = writable(out)
    if place is None:
        return None
    dst = out._arr.np
    token = _ERRSTATE.set(_IGNORE)
    try:
        fn(dst, v, out=dst)
    finally:
        _reset(token)
    _host_aliases(place[0], place[1], out, True)
    return out


def _fits(shape, target):
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


# NumPy's floating-point warnings off: ``token = _ERRSTATE.set(_IGNORE)`` until
# ``_reset(token)`` (PyTorch computes ``x / 0`` and overflows quietly). ``np.errstate`` does
# the same in 3-4 microseconds; this sets the context variable it sets, made once, inline
# where a loop's write or op calls it (a function around it costs a frame per call).
try:  # NOTE: private: what np.errstate(all="ignore") enters, without building it per call
    from numpy._core._ufunc_config import _extobj_contextvar as _ERRSTATE, _make_extobj
    _IGNORE = _make_extobj(all="ignore")
    _reset = _ERRSTATE.reset
except (ImportError, AttributeError):  # pragma: no cover - another NumPy: the public way
    class _Quiet:
        def set(self, _):
            e = np.errstate(all="ignore")
            e.__enter__()
            return e

    _ERRSTATE, _IGNORE = _Quiet(), None

    def _reset(e):
        e.__exit__(None, None, None)
