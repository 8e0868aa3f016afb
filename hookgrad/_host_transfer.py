"""Small arrays on the host side: NumPy values to JAX arrays in one C++ call each, and the
NumPy values of small CPU arrays remembered, so reading a part of one costs no XLA call.

``jax.device_put(values)`` spends 40-190 microseconds of Python per call on a loaded CPU
(flattening the tree, inferring shardings, profiler hooks) for what jaxlib's
``batched_device_put`` does in about 4. Where hookgrad computes a value on the host (the
tiered first tier, hookgrad/_ops/tiered.py; index reads of small arrays,
hookgrad/_views.py) every result crosses this way. The arrays are uncommitted, as
``jax.jit``'s outputs and ``jax.device_put(x)``'s are. When JAX's private entry point is
missing, or a default device is configured (``jax.default_device``), ``jax.device_put``
does it.

A Python loop reads single entries and rows of small tensors (``labels[i].item()``): each
read as an XLA program costs a dispatch, 10-90 microseconds, where the read itself is a
NumPy index of a few elements. :func:`host_copy` gives a small CPU array's NumPy value,
copied from the device once per array (JAX arrays never change), and the arrays made from
such a value remember it (:func:`known`), so ``.item()`` reads it without a transfer.
"""
import collections
import functools
import operator
import struct
import weakref

import jax
import numpy as np

from . import _jax_trace
from ._memo import keep

__all__ = ["put", "put_plain", "put_known", "host_copy", "known", "KNOWN_IDS", "remember",
           "numbers_placed", "HOST_MAX"]

HOST_MAX = 4096  # elements: an array this small is read on the host
# arrays whose NumPy values are remembered (the oldest dropped; a dead array's at once): a
# collate loop stacks a few hundred samples, and each one read again costs a transfer
_KNOWN_MAX = 1024
_known = collections.OrderedDict()  # id(array) -> (weak reference to the array, its NumPy value)
# ``id(arr) in KNOWN_IDS``: a hot path's hint that ``known(arr)`` may answer (an id can be
# a dead array's, reused): the op dispatcher's test for stage 3 first (``_ops/dispatch.py``)
KNOWN_IDS = _known
_DTYPES = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64, np.complex64, np.complex128))


def put(values, avals, remember=False):
    """``values`` (NumPy arrays with exactly the shapes and dtypes of ``avals``, JAX
    abstract values without weak types) as uncommitted JAX arrays on the default device.
    The values are copied during the call: the arrays do not hold them. ``remember``:
    arrays of at most ``HOST_MAX`` elements remember their values (:func:`known`), so
    the host reads them with no transfer."""
    fast = _entry()
    if fast is None or jax.config.jax_default_device is not None:
        return jax.device_put(values)
    device_put, device, sharding, copy = fast
    try:
        arrs = [device_put(a, sharding, [v], [device], False, False, copy)
                for v, a in zip(values, avals)]
    except (TypeError, ValueError):  # a signature this jaxlib's entry does not take
        return jax.device_put(values)
    if remember:
        for arr, v in zip(arrs, values):
            if v.__class__ is np.ndarray and v.size <= HOST_MAX:
                v.flags.writeable = False  # a reader's NumPy must not change the array's value
                _remember(arr, v)
    return arrs


def put_plain(value):
    """``value`` (a NumPy array the caller hands over) as ``jax.device_put(value)`` makes
    it, or None where that call must do it: a dtype JAX would change (float64 without
    x64), a default device configured, off the CPU, or while JAX traces (there
    ``jax.device_put`` stages the value into the program being traced)."""
    if not _jax_trace.no_trace():
        return None
    if value.dtype not in _DTYPES or jax.dtypes.canonicalize_dtype(value.dtype) != value.dtype:
        return None
    if _entry() is None or jax.config.jax_default_device is not None:
        return None
    return put([value], [_aval(value.shape, value.dtype)])[0]


def put_known(value):
    """``value`` (a NumPy array of a dtype JAX keeps) as a JAX array that remembers it."""
    arr, = put([value], [_aval(value.shape, value.dtype)])
    _remember(arr, value)
    return arr


def host_copy(arr):
    """The NumPy value of ``arr`` when it is a small, concrete, uncommitted, strongly typed
    array on the CPU (copied once per array, then remembered), else None: read it with
    XLA."""
    value = known(arr)
    if value is not None:
        return value
    if arr.__class__ is not _array_class() or arr.size > HOST_MAX or arr._committed or \
            arr.weak_type or arr.dtype not in _DTYPES or _entry() is None or \
            jax.config.jax_default_device is not None:
        return None
    # NOTE: a copy (``np.array``): ``np.asarray`` of a CPU array shares its buffer and
    # holds the array, so the entry kept its own array alive (its weak reference never
    # died: every array read stayed until 1024 newer ones pushed it out, 5 a GPT-2
    # ``generate`` call)
    value = np.array(arr)
    value.flags.writeable = False
    _remember(arr, value)
    return value


def remember(arr, value):
    """Remember ``value`` (a NumPy array nobody writes afterwards: made read-only here) as
    the values of ``arr``, the small, uncommitted CPU array just made from it, so that the
    host reads them with no transfer (a collate loop stacking the samples it made)."""
    if arr.__class__ is _array_class() and value.size <= HOST_MAX and \
            value.dtype == arr.dtype and not arr._committed and not arr.weak_type:
        value.flags.writeable = False
        _remember(arr, value)


def known(arr):
    """``arr``'s NumPy value if it is remembered (:func:`host_copy`), else None."""
    e = _known.get(id(arr))
    return e[1] if e is not None and e[0]() is arr else None


def _remember(arr, value):
    if len(_known) >= _KNOWN_MAX:
        try:  # NOTE: another thread may remember at the same time: dropping is best effort
            _known.popitem(last=False)  # the oldest, in O(1) (a dict's first key is not)
        except KeyError:
            pass
    key = id(arr)
    # the array dies (its id is not reused before this runs): its values go with it
    _known[key] = (weakref.ref(arr, lambda _, key=key, known=_known: known.pop(key, None)),
                   value)


def numbers_placed(args):
    """``args`` (a jitted program's arguments) with each Python number (bool, int, float)
    replaced by the JAX scalar ``jax.jit`` makes of it (uncommitted, on the default device,
    weakly typed as the number is), made once per value and kept; ``args`` itself when
    none is a number or a default device is configured (``jax.default_device``), and for
    numbers not yet kept while JAX traces.

    jaxlib puts a number argument on the device at every call, ~10,000 instructions (an
    XLA buffer), where a kept one costs a dict lookup: a deferred forward segment takes
    ~40 numbers each run (the positions of its slices, its scales and epsilons,
    ``hookgrad/_ops/lazy.py``), a ``generate`` step ~55. The program sees the same
    abstract values, so it compiles nothing new."""
    sig = tuple(map(type, args))
    plan = _plans.get(sig)
    if plan is None:
        plan = _plan(sig)
    if plan is _NO_NUMBERS or jax.config.jax_default_device is not None:
        return args
    numbers_of, fmt, pick = plan
    numbers = numbers_of(args)
    # NOTE: the numbers' bits are the key, in one C call: a zero's sign and a NaN are
    # values (0.0 and -0.0 compare equal), and a class is its format letter (True, 1)
    try:
        key = fmt, _pack(fmt, *numbers)
    except _struct.error:  # an int past 64 bits: jax.jit raises its own error for it
        return args
    kept = _numbers[jax.config.jax_enable_x64]  # int64 scalars in 64-bit mode, else int32
    placed = kept.get(key)
    if placed is None:
        # NOTE: while JAX traces, ``jax.device_put`` stages the number into the program
        # being traced and gives a tracer: kept, it would leak into later calls. Asked only
        # on a miss (kept scalars are concrete, usable in any trace).
        if not _jax_trace.no_trace():
            return args
        placed = keep(kept, key, tuple(map(_number, numbers)))  # (positions: bounded)
    return pick(tuple(args) + placed)


def _plan(sig):
    """For arguments of classes ``sig``: a getter of the numbers among them, their
    ``struct`` format and a picker of the arguments with the numbers' scalars in their
    places, out of ``args + scalars`` (each one C call); or ``_NO_NUMBERS``."""
    at = [k for k, c in enumerate(sig) if c in _FORMATS]
    plan = _NO_NUMBERS
    if at:
        n = len(sig)
        order = list(range(n))
        for j, k in enumerate(at):
            order[k] = n + j
        plan = (_getter(at), "=" + "".join(_FORMATS[sig[k]] for k in at), _getter(order))
    return keep(_plans, sig, plan)


def _getter(positions):
    """A tuple of the items at ``positions`` (``operator.itemgetter`` gives one item
    alone for one position)."""
    if len(positions) > 1:
        return operator.itemgetter(*positions)
    k = positions[0]
    return lambda items: (items[k],)


def _number(v):
    try:
        return jax.device_put(v)
    except (OverflowError, TypeError, ValueError):  # (an int past int32 without 64-bit
        return v                                    # mode): jax.jit's own error, there


_FORMATS = {bool: "?", int: "q", float: "d"}
_NO_NUMBERS = ()
_plans = {}  # the classes of a call's arguments -> ``_plan``'s answer
# by 64-bit mode (False, True): (format, the numbers' bytes) -> their JAX scalars
_numbers = ({}, {})
_pack, _struct = struct.pack, struct


@functools.lru_cache(maxsize=1024)
def _aval(shape, dtype):
    return jax.core.ShapedArray(shape, dtype)


@functools.lru_cache(maxsize=None)
def _array_class():
    from jax._src.array import ArrayImpl  # NOTE: private; JAX has no public name for it
    return ArrayImpl


@functools.lru_cache(maxsize=None)
def _entry():
    """jaxlib's device put, the CPU device and its sharding; None off the CPU (there a
    host read would be a transfer) or when the private entry point is missing."""
    if jax.default_backend() != "cpu":
        return None
    try:  # NOTE: private: jax.device_put's own last step, without its Python around it
        from jax._src.lib import xla_client
        device_put = xla_client.batched_device_put
        copy = xla_client.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL
    except (ImportError, AttributeError):
        return None
    # NOTE: this process's first device: in a job of several processes, jax.devices()[0]
    # may be another process's (the default device jax.device_put uses is local)
    device = jax.local_devices()[0]
    # NOTE: copied, not zero-copy (jax.device_put's default): a zero-copy array holds its
    # NumPy value, and jaxlib may drop that reference from one of its own threads; at
    # interpreter exit such a thread cannot take the interpreter lock and the process
    # aborts ("terminate called ... FATAL: exception not rethrown", seen at the exit of
    # test subprocesses in full runs, not reproduced alone). Small values copy in ~2 us.
    return device_put, device, jax.sharding.SingleDeviceSharding(device), copy
