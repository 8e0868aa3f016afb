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
    small = v.size <= _host_transfer.HOST_MAX
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
