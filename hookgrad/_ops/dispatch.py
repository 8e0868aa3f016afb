"""Running an op: ``apply`` passes an op call through the stages, in order.

1. modes (``stages/modes.py``): an interceptor takes the call (compile's lineage,
   DTensor's stage, Python dispatch modes);
2. forward AD (``_dual``, filled by ``_engine/forward_ad.py`` while a level is open);
3. host values (``stages/host.py``): a row with a NumPy form (``host_forms.py``) on small
   CPU values that nothing records runs in NumPy, and an in-place ``+ - * /`` on a Tensor
   held on the host writes its memory (``host_tier.py``);
4. the functional backend (``_mode.state.backend``: inside ``hookgrad.func`` JAX
   differentiates, nothing is recorded);
5. lazy and tiered values (``stages/values.py``, ``lazy.py``, ``tiered.py``);
6. alias and in-place (``stages/inplace.py``, ``views.inplace``);
7. record (``stages/record.py``): the node, its edges and saved values.

Stages 1, 2 and 4 are slots: empty, each costs one test. Stage 3 runs once the arguments
are read (reading them changes nothing) and only for a call no argument requiring grad
reaches and no pending argument is in (its forms leave those to stage 5), or an in-place
one: a recorded op pays one test for it, any other a dict lookup
for a row with no NumPy form. An op with nothing to record runs the forward and wraps its
result (the fast path). docs/architecture.md says how to add a stage.
"""
import sys
from weakref import ref as _weakref


from .. import _host_transfer, _meta, _mode
from .._tensor import Host as _Host, Pending, Tensor
from .._autograd import grad_mode
from . import box_index as _box_index, jax_errors, lazy as _lazy
from .op import Op, _AtPositions
from .op_node import ALL, APPLY, INEXACT, NOT_IMPLEMENTED, OUT
from .stages import host as _host_stage, inplace as _inplace
from .stages.modes import INTERCEPT as _intercept
from .stages.record import _record, pack_before_error, record_at_site as _record_at_site
from .stages.values import on_meta as _on_meta

__all__ = ["ALL", "INEXACT", "NOT_IMPLEMENTED", "OUT", "Op", "apply", "pack_before_error"]

_gm = grad_mode._state
_fm = _mode.state
_dual = [None]  # while a forward-AD level is open, forward_ad's apply (it fills the slot)


def apply(op, args, statics=None, out=None):
    """Run ``op`` on ``args`` (Tensors and constants), recording a node if needed.

    ``out``: the Tensor modified in place (its array is replaced, ``_version`` bumped and
    its history rebased onto the new node). Returns a Tensor or a tuple of Tensors."""
    if _intercept[0]:
        return _intercept[0](op, args, statics, out)
    if _dual[0]:
        return _dual[0](op, args, statics, out)
    a0 = args[0] if args else None
    # NOTE: a first argument held on the host, or a CPU array whose NumPy value the host
    # stage read before (a loop's ``base * k`` each row: the lazy walk would only find
    # stage 3 due, ~3 us a call), tries stage 3 first; it declines what the walk would not
    # have sent it (an argument pending or requiring grad)
    tried = a0.__class__ is Tensor and ((c := (v := a0._arr).__class__) is _Host or
                                        c is _ARRAY and id(v) in _known_ids) and \
        not a0._requires_grad and (found := _HOST_FORMS.get(op.name)) is not None
    if tried and (res := _host_run(op, found, statics, args, out)) is not None:
        return res  # a loop's host-held value: stage 3 before reading the arguments twice
    key = tuple(statics.items()) if statics else ()
    if out is None and op.jit and _lazy_state["enabled"] and _fm.backend is None:
        # the lazy path: one walk over the arguments decides it and wires the op into the
        # trace (``lazy.defer``); what it leaves (a first call, a value held on the host,
        # a tracer, a constant array) takes the general path below. NOTE: no forward
        # (``fn``) given: an op following the trace cache takes its memo's, the walk
        # looks it up (``lazy.forward``)
        try:
            res, req = _defer(op, key, None, args, None, None if tried else _HOST_FORMS)
            if res is _HOST_DUE:  # no argument requires grad or is pending: stage 3 first
                if (res := _host_run(op, _HOST_FORMS[op.name], statics, args, None)) is not None:
                    return res
                tried = True
                res, req = _defer(op, key, None, args)
        except jax_errors.RAISES as e:
            raise jax_errors.torch_error(op.name, e)
        if res.__class__ is Pending:
            # (``req``: the op's ``lazy.Site`` where an argument requires grad)
            t = _record_at_site(op, key, args, res, req) if req and _gm.enabled and \
                op.node is not None else _wrap(res)
            res.ref = _weakref(t)
            return t
        if res.__class__ is list:  # the outputs of a multi-output op
            return _deferred_outputs(op, key, args, tuple(res),
                                     req and _gm.enabled and op.node is not None, req)
    return _general(op, args, statics, out, tried, key)


def _general(op, args, statics, out, tried, key):
    """``apply``'s general path: the host stage, hookgrad.func, a first call, in place."""
    try:  # (no call when the program is made: nearly always)
        fn = op._fwd_cache[key]
    except KeyError:
        fn = op.forward_fn(key)
    req = False
    pending = False  # an argument not computed yet (_ops/lazy.py), or on the meta device
    meta = False
    deferrable = out is None and op.jit and _lazy_state["enabled"]
    held = False  # a Tensor held on the host (``_host_value.py``)
    arrs = []
    for a in args:  # NOTE: reading the arguments changes nothing: the host stage may follow
        if a.__class__ is Tensor or isinstance(a, Tensor):  # (no call for a plain one)
            v = a._arr
            arrs.append(v)
            if a._requires_grad:
                req = True
            c = v.__class__
            if c is Pending:
                pending = True
            elif c is not _ARRAY:
                if c is _Host:
                    held = True  # its values, copied into XLA below unless NumPy computes
                else:
                    deferrable = False  # a tracer: the compiled and functional modes
                    if c is _MetaArray:  # checked where pending values are: off the fast path
                        pending = meta = True
        else:
            arrs.append(a)
            if a.__class__ not in _SCALARS:
                deferrable = False
    # the host stage computes nothing an argument requiring grad reaches, nor one with a
    # pending (or meta) argument, which its forms leave to the lazy path (an in-place write
    # asks it always): a recorded or deferred op pays one test for it
    # (a form that declined above declines again: asked once)
    if not tried and (out is not None or not (req or pending)) and \
            (found := _HOST_FORMS.get(op.name)) is not None and \
            (res := _host_run(op, found, statics, args, out)) is not None:
        return res  # small values held on the host (``stages/host.py``): NumPy computed it
    if held:  # (copied into XLA: the Tensors hold the arrays from now on)
        arrs = [a._data if v.__class__ is _Host else v for a, v in zip(args, arrs)]
    if req and _fm.backend is not None:  # hookgrad.func: JAX differentiates
        return _fm.backend.apply(op, key, args, out)
    record = req and _gm.enabled and op.node is not None
    if out is None:
        learn = None
        if deferrable:
            try:  # (``site``: as in ``apply``, the op's ``lazy.Site`` for the record stage)
                res, site = _defer(op, key, fn, args)
            except jax_errors.RAISES as e:
                raise jax_errors.torch_error(op.name, e)
            if res.__class__ is Pending:
                t = _record(op, key, args, res, site or None) if record else _wrap(res)
                res.ref = _weakref(t)
                return t
            if res.__class__ is list:  # the outputs of a multi-output op
                return _deferred_outputs(op, key, args, tuple(res), record, site)
            learn = res  # first call with these argument types: run it now
        if pending:
            if meta:
                return _on_meta(op, key, fn, args, arrs, record, None)
            arrs = [_value(v) for v in arrs]
        try:  # ``jax_errors.forward``, inlined: once per eager op
            res = fn(*arrs)
        except jax_errors.RAISES as e:
            raise jax_errors.torch_error(op.name, e)
        if learn is not None:
            _learn(op, learn, res)
        if record:
            return _record(op, key, args, res)
        return tuple(map(_wrap, res)) if res.__class__ is tuple else _wrap(res)
    if pending:
        if meta:
            return _on_meta(op, key, fn, args, arrs, record, out)
        v = arrs[0]
        if v.__class__ is Pending and v.fn.__class__ is _BoxRead and not record and \
                v is out._arr and _read_modify_write(op, key, arrs, out) is not None:
            return out  # ``x[i, a:b] += v``: the index read, the op and the write as one
        arrs = [_value(v) for v in arrs]
    if fn.__class__ is _AtPositions and not record and arrs[0] is out._arr and \
            _refcount(arrs[0]) - (v is arrs[0]) <= _HELD_BY_APPLY:
        # a write at positions into an array nothing else holds: XLA writes it in place
        # (its buffer donated), so the write costs the region written, not the array
        fn = fn.donated
    return _inplace.run(op, key, args, arrs, fn, out, record)


def _deferred_outputs(op, key, args, res, record, site):
    """The Tensors of a deferred multi-output op's outputs ``res`` (their node's, with
    ``record``; ``site``: the op's ``lazy.Site``, or False), each output's ``Pending``
    knowing its Tensor."""
    outs = _record(op, key, args, res, site or None) if record else tuple(map(_wrap, res))
    for p, t in zip(res, outs):
        p.ref = _weakref(t)
    return outs


def on_host(op, args, statics=None):
    """``op`` on ``args`` by its NumPy form alone (stage 3), or None: a public function
    whose own checks cost more than the form's (``gather``) tries this first, and takes
    its full way (checks, PyTorch's errors, the XLA path) on None. Stages 1 and 2 have
    nothing to do here; the form refuses what needs grad or is not its case."""
    if _intercept[0] or _dual[0]:
        return None
    found = _HOST_FORMS.get(op.name)
    return None if found is None else _host_run(op, found, statics, args, None)


APPLY[0] = apply
_wrap = Tensor._wrap
_MetaArray = _meta.MetaArray
# the Tensor's slot, ``apply``'s list of arrays, getrefcount's argument; NOTE: from Python
# 3.14 on, references the interpreter borrows are not counted: no donation there (-1)
_HELD_BY_APPLY = 3 if sys.version_info < (3, 14) else -1
_refcount = sys.getrefcount
_defer, _learn, _value = _lazy.defer, _lazy.learn, _lazy.value
_lazy_state, _ARRAY, _SCALARS = _lazy._state, _lazy.ARRAY, _lazy.SCALARS
_BoxRead, _read_modify_write = _box_index.BoxRead, _box_index.read_modify_write
_host_run, _HOST_FORMS, _HOST_DUE = _host_stage.run, _host_stage.FORMS, _lazy.HOST
_known_ids = _host_transfer.KNOWN_IDS
