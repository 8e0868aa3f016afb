"""Stage 3, host values: an op on small CPU values that nothing records runs in NumPy.

A Python loop's ``(x - mean) / std``, ``pred.argmax(1) == y`` or ``.sum().item()`` on a few
hundred elements costs PyTorch 2-5 microseconds an op; as an XLA program each costs a
dispatch (10-50) and, for each new shape, a compile. Here a row with a NumPy form
(``host_forms.FORMS``) runs that form when every Tensor argument is held on the host
(``hookgrad/_host_value.py``: written by a loop, read from one, or made by this stage) or
is a concrete CPU array of at most ``HOST_MAX`` elements, and no argument requires grad.
Its result is held on the host too, read-only (a later write copies it, ``host_tier``),
until an op that needs XLA reads it (``Tensor._data`` copies it in once).

The earlier stages have run: nothing intercepts (modes, forward AD). A pending value is
left to the lazy path (``lazy.py``): a deferred chain, such as a small model's forward,
stays one fused program rather than breaking into NumPy ops. A tracer, a committed array
(placed on a device) or a configured default device sends the op on, as does a form that
raises (the XLA path then raises PyTorch's error). The result's dtype is PyTorch's, by the
row's rule (``host_forms.RULES``).
"""
import operator

import numpy as np

from ... import _host_transfer
from ..._host_value import Host
from ..._tensor import Tensor
from .. import host_tier
from ..host_forms import FORMS, RULES as _RULES, promoted
from ..lazy import ARRAY

__all__ = ["FORMS", "run"]

_HOST_MAX = _host_transfer.HOST_MAX
_known = _host_transfer.known
_NUMBERS = frozenset((bool, int, float))
_NO_STATICS = {}  # what a row without static arguments passes its form
_DTYPES = host_tier._DTYPES
_PROMOTE = "promote"  # the rule of most rows: called directly
_hold = host_tier.held
_DEFAULT_DEVICE = host_tier.DEFAULT_DEVICE
_ND = np.ndarray
# ``host_tier``'s floating-point quieting, called directly (once per op)
_quiet, _IGNORE, _reset = host_tier._ERRSTATE.set, host_tier._IGNORE, host_tier._reset


def run(op, found, statics, args, out):
    """``op`` on ``args`` (its static arguments ``statics``) by its NumPy form (``found``:
    its ``FORMS`` entry) as a host-held Tensor; with ``out``, written into ``out`` where it
    is held on the host (``host_tier.inplace``); else None: the op goes on."""
    if out is not None:
        return host_tier.inplace(op, tuple(statics.items()) if statics else (), args, out)
    rule, form = found
    vals = []
    xla = False  # an argument whose values XLA holds: read only once every one qualifies
    held = False  # a Tensor argument (numbers alone are not this stage's)
    if len(args) > 4 and (parts := _held_parts(args)) is not None:
        vals, held, args = parts, True, ()  # a join's parts, all held: read in C loops
    for a in args:
        c = a.__class__
        if c in _NUMBERS:
            vals.append(a)
            continue
        if not isinstance(a, Tensor) or a._requires_grad:
            return None
        held = True
        v = a._arr
        c = v.__class__
        if c is Host:
            v = v.np
        elif c is not ARRAY:
            return None
        elif (known := _known(v)) is not None and known.dtype in _DTYPES:
            v = known  # its values, read once already (``_host_transfer``)
        elif v.size <= _HOST_MAX and not v.weak_type:
            v, xla = a, True
        else:
            return None
        vals.append(v)
    if not held or xla and (vals := _read_xla(vals)) is None:
        return None
    try:
        if rule != _PROMOTE:
            result = _RULES[rule](vals, statics or _NO_STATICS)
        elif len(vals) == 2 and (a := vals[0]).__class__ is _ND and \
                (b := vals[1]).__class__ is _ND and a.dtype is b.dtype:
            result = a.dtype  # ``x - m``: ``promoted``'s first answer, without its frame
        else:
            result = promoted(vals)
    except Exception:  # noqa: BLE001 - an operand no rule knows: the XLA path decides
        return None
    if result not in _DTYPES or _DEFAULT_DEVICE.value is not None:
        return None
    token = _quiet(_IGNORE)  # PyTorch computes ``x / 0`` and overflows quietly
    try:
        res = form(vals, result, **statics) if statics else form(vals, result)
    except Exception:  # noqa: BLE001 - not this form's case: the XLA path decides
        return None
    finally:
        _reset(token)
    if res.__class__ is not np.ndarray:
        res = np.asarray(res)
    if res.dtype is not result and res.dtype != result:
        res = res.astype(result)
    res.setflags(write=False)  # a host-held value nothing writes (a write copies it)
    return _hold(res)


def _held_parts(args):
    """The NumPy values of ``args`` when each is a plain Tensor held on the host that
    does not require grad (``torch.stack(samples)``), else None (the general loop)."""
    if set(map(type, args)) != _PLAIN or any(map(_requires_grad, args)):
        return None
    arrs = list(map(_arr, args))
    return list(map(_np, arrs)) if set(map(type, arrs)) == _HOST else None


_PLAIN, _HOST = {Tensor}, {Host}
_arr, _np, _requires_grad = (operator.attrgetter(n) for n in ("_arr", "np", "_requires_grad"))


def _read_xla(vals):
    """``vals`` with each Tensor's values read from XLA: NumPy arrays, remembered by
    ``_host_transfer`` (a loop reads an array once); None when one is not a plain CPU
    array of a dtype the host holds."""
    out = []
    for v in vals:
        if isinstance(v, Tensor):
            v = _host_transfer.host_copy(v._data)
            if v is None or v.dtype not in _DTYPES:
                return None
        out.append(v)
    return out
