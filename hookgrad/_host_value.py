"""A Tensor's values held as a writable NumPy array: the host tier.

PyTorch's CPU tensors are host memory: ``imgs[i, 0, r:r + 8] += 2.0`` writes a few floats
in place. A JAX array never changes, so the same statement is an XLA program (10-15
microseconds of dispatch on the CPU, more than PyTorch's whole statement). A small
Tensor written by a Python loop (``hookgrad/_ops/host_tier.py`` decides which) holds a
:class:`Host` instead of a ``jax.Array``: a NumPy array, the Tensor's values, that the loop's
writes, reads and ``.item()`` act on directly.

The views of such a Tensor hold NumPy views of the same memory (:class:`Store`), so a
write is seen by every alias, as PyTorch's shared storage is. The first read that needs
XLA (``Tensor._data``) copies the values into a ``jax.Array`` that takes the Host's
place (:func:`to_jax`); a later loop write copies them back.
"""
import operator
import weakref

import numpy as np

from . import _device, _host_transfer

# the dtypes a Tensor may be held on the host in: those NumPy computes in as PyTorch does
DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int8, np.int16,
                                         np.int32, np.int64, np.uint8, np.bool_))


class Store:
    """The memory a root Tensor and its host-held aliases share: ``np``, the root's array
    (C-contiguous, writable); ``tally``, the root's ``[times held, writes]`` (what
    holding it has paid for: ``hookgrad/_ops/host_tier.py``)."""

    __slots__ = ("np", "tally", "__weakref__")

    def __init__(self, array, tally):
        self.np, self.tally = array, tally


class Host:
    """A host-held Tensor's values: ``np``, a NumPy view of ``store``'s memory (a root's
    whole array, or a view's part of it), or of a read-only copy when ``store`` is None
    (a read of a small JAX array: never written through). It answers the metadata a
    ``jax.Array`` does, so asking a Tensor's shape or dtype transfers nothing."""

    __slots__ = ("np", "store")
    weak_type = False
    _committed = False

    def __init__(self, array, store):
        self.np, self.store = array, store

    # C getters (no Python frame): a loop's every op asks a few of these
    shape = property(operator.attrgetter("np.shape"))
    dtype = property(operator.attrgetter("np.dtype"))
    ndim = property(operator.attrgetter("np.ndim"))
    size = property(operator.attrgetter("np.size"))
    aval = property(lambda self: _host_transfer._aval(self.np.shape, self.np.dtype))

    def devices(self):
        return {_host_transfer._entry()[1]}


def to_jax(h):
    """The values of ``h`` as an uncommitted ``jax.Array`` on the CPU (copied: later writes
    of ``h`` do not change it); a small one remembers its NumPy copy (a host read of it
    costs no transfer)."""
    v = h.np
    if v.base is not None and v.size <= _COPY_MAX:
        # a view made anew each step of a host-held root (``labels.view(-1)``, a buffer's
        # ``expand``) would copy the same values each time, where a transfer costs 5-140
        # us (it queues behind XLA work in flight): the root's memory keeps the copies
        # it gave by value (bytes, shape, dtype), as JAX arrays never change. By value,
        # not by a count of writes: NumPy views of the memory (``.numpy()``) write uncounted.
        # Views only: a root's own copy takes its place (``Tensor._data``), and the host
        # stage's results, roots made anew each op, would pay for keeping and never hit.
        memory = h.store if h.store is not None else _memory(v)
        if memory.__class__ is np.ndarray and not memory.flags.writeable:
            # memory nothing writes (a host op's result, ``tensor()``'s copy, a read of an
            # XLA array) is made anew each step by a model's host ops (BERT's gathered
            # ``token_type_ids``, GPT-2's padded labels): its views share one pool of copies
            # by value. Only views: a root's own copy, which ``data_ptr`` reads, is its own
            memory = _READ_ONLY
        key = (v.tobytes(), v.shape, v.dtype)
        entry = _copies.get(id(memory))
        if entry is not None and entry[0]() is memory:
            arr = entry[1].get(key)
            if arr is not None and not arr.is_deleted():  # (not donated to a compiled step)
                _device.record_bounds(arr, v)  # again: the bounds kept are forgotten in time
                return arr
        arr = _put(v, True)
        try:
            _keep(memory, key, arr)
        except TypeError:  # memory that takes no weak reference (``bytes``): not kept
            pass
        return arr
    return _put(v, v.size <= _host_transfer.HOST_MAX)


_COPY_MAX = 256  # elements: a copy this small is kept for the next alias of equal values
_COPIES_KEPT = 4  # copies a root's memory keeps (one per alias made each step, a few)
_MEMORIES_KEPT = 512  # roots whose copies are kept (the dead dropped, or all)
_copies = {}  # id(root memory) -> (weak reference to it, {(bytes, shape, dtype): jax.Array})
_READ_ONLY = Store(None, None)  # the views of read-only memory: one pool (``to_jax``)
_SHARED_KEPT = 32  # copies that pool keeps (a step's few small views, a few steps)


def _memory(v):
    """The object that owns NumPy array ``v``'s memory (its last ``base``: an array, or
    what NumPy wraps, such as a ``memoryview``)."""
    while (b := getattr(v, "base", None)) is not None:
        v = b
    return v


def _keep(memory, key, arr):
    entry = _copies.get(id(memory))
    if entry is None or entry[0]() is not memory:
        if len(_copies) >= _MEMORIES_KEPT:
            dead = [k for k, e in _copies.items() if e[0]() is None]
            for k in dead if len(dead) > _MEMORIES_KEPT // 4 else list(_copies):
                del _copies[k]
        entry = _copies[id(memory)] = (weakref.ref(memory), {})
    if len(entry[1]) >= (_SHARED_KEPT if memory is _READ_ONLY else _COPIES_KEPT):
        entry[1].clear()
    entry[1][key] = arr


def _put(v, small):
    if small or not v.flags.c_contiguous:
        v = np.array(v, order="C")  # the copy a small array remembers: nothing writes it
    # NOTE: ``put`` copies during the call: a larger one reads the host memory directly
    arr, = _host_transfer.put([v], [_host_transfer._aval(v.shape, v.dtype)], remember=small)
    _device.record_bounds(arr, v)  # an index's bounds prove it in range with no read back
    return arr


def readable(t):
    """Tensor ``t``'s values for NumPy to read: its host memory itself where it is held
    on the host (no transfer; a later write changes it), else its ``jax.Array``."""
    a = t._arr
    return a.np if a.__class__ is Host else t._data
