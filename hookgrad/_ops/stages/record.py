"""Stage 6, record: the node of one op call, with its edges and what it saves.

Runs last, when an argument requires grad and grad mode is on: the outputs get the node as
``grad_fn`` (in place, the written Tensor's history is rebased onto it). Saved-tensor
hooks pack here, in PyTorch's order (the op's ``names``).
"""
import functools
from weakref import ref as _weakref

import jax.numpy as jnp

from ..._autograd import anomaly_mode, grad_mode
from ..._autograd.graph import _sequence
from ..._autograd.saved import SavedTensor, hook_state, open_contexts
from ..._tensor import Pending, Tensor, _set_arr, _set_fn, _set_nr, _set_rg, _set_version
from ... import _memo
from ..._views import StaleView, check_stale
from ..._watch import Moving as _Moving
from .. import lazy as _lazy, tiered
from ..op_node import _CONST, ALL, INEXACT, OUT, NodeSite, _pack_order, vjp_key

_gm = grad_mode._state
_anomaly = anomaly_mode._state
_wrap = Tensor._wrap
_value = _lazy.value


def needed_inputs(save, args):
    """For a dict ``save`` (PyTorch's conditional saving), the argument positions that the
    gradients of the arguments requiring grad need; ``()`` for any other ``save``. With
    ``keeps``, the one description of what an op saves: recording and the functional
    mode's saved-tensor hooks both read it."""
    needed = ()
    if save.__class__ is dict:
        for i, a in enumerate(args):
            if (a.__class__ is Tensor or isinstance(a, Tensor)) and a._requires_grad:
                needed += save.get(i, ())  # (no call for a plain Tensor: once per op)
    return needed


def keeps(save, i, needed, dtype):
    """Whether an op keeps its Tensor argument ``i`` for backward: integer and bool
    Tensors (indices, masks) always, others when ``save`` or ``needed`` says so."""
    return save is ALL or i in needed or dtype not in INEXACT


def _record(op, key, args, res, site=None, out=None, shadow=None):
    """The node of one op call: returns the output Tensor(s) wrapping ``res`` with the node
    as their ``grad_fn`` (or, in place, rebases ``out`` onto it).

    Only what must be captured now is: the edges, the saved values, the shapes of unsaved
    inputs, and with them the vjp's cache key (``OpNode._keys``, inlined: the loop below
    classifies each argument anyway, and a second walk at backward cost more). This runs
    once per recorded op, hence the inlined constructors and saving rule.

    ``site``: the op's ``lazy.Site`` for these argument types, from a deferred call. It
    keeps the ``NodeSite`` of the last node recorded there (``op_node``: the fields its
    nodes share, with what was worked out for them: ``needed``, the kept positions,
    whether the result is saved). A node with the same ``want`` needs the same arguments
    saved (a dict rule reads which of its arguments require grad, and an argument that
    is not non-differentiable has an edge exactly when it requires grad; another rule
    reads none of it; the site's argument dtypes are fixed), so the dict rule's walk
    (``needed_inputs``), each argument's dtype test, the result's rule and the vjp key
    (``vjp_key``) are worked out only when ``want`` changes there: the site's nodes share
    one ``NodeSite``, which the backward's plans (``_engine/fusion.py``) compare by
    identity first. An op at positions (a slice) has one site for every position, which
    are its nodes' statics: its ``NodeSite`` is kept per statics (``_AT_POSITIONS``).
    """
    save = op.save
    known = None if site is None else site.node
    if known is None:
        needed = () if save.__class__ is not dict else needed_inputs(save, args)
        keep = _EVERY if save is ALL else needed  # (and the dtype, below)
    else:  # (checked against ``want`` below)
        needed, keep = known.needed, known.keep  # the kept positions, dtype included
    nondiff = op.nondiff
    edges = []
    stored = []   # per argument: (array, tensor, version, edge) | SavedTensor | aval | _CONST
    want = ()     # the argument positions with an edge: their gradients flow somewhere
    consts = None
    has_saved = 0  # 1: something saved; 2: through saved-tensor hooks (never fused)
    for i, a in enumerate(args):
        if a.__class__ is Tensor or isinstance(a, Tensor):  # (no call for a plain one)
            e = None
            if i not in nondiff:  # indices, masks, conditions: no edge, as in torch
                gf = a.grad_fn
                if gf is not None:
                    if gf.__class__ is StaleView:
                        check_stale(gf)
                    e = (gf, a._output_nr)
                elif a._requires_grad:
                    e = (a._grad_accumulator(), 0)
                edges.append(e)
                if e is not None:  # (mostly one: a shared tuple, no tuple made per op)
                    want = want + (i,) if want or i >= _N_ONE else _ONE[i]
            arr = a._arr  # NOTE: maybe pending: saving it computes nothing
            if i not in keep:  # NOTE: ``keeps``, inlined (a site's types are fixed)
                av = arr.aval
                if known or av.dtype in INEXACT:
                    stored.append(av)  # shape and dtype only
                    continue
            if arr.__class__ is Pending:
                arr.saved = True
            if not has_saved:
                has_saved = 2 if open_contexts[0] and _hooked() else 1
            ver = a._ver  # NOTE: ``a._version``, inlined (a ``_watch.Moving`` is read now)
            if ver.__class__ is _Moving:
                ver = ver.value()
            # a plain tuple (cheaper than a SavedTensor); with hooks, packed below
            stored.append((arr, a, ver, e))
        else:
            if i in op.scalar_edges:
                edges.append(None)
            stored.append(_CONST)
            if consts is None:
                consts = []
            consts.append(a)
            if i in needed and not has_saved:
                has_saved = 1
    if known is None or want != known.want:  # (no site: known is None)
        if known is not None and save.__class__ is dict and \
                needed != (needed := needed_inputs(save, args)):
            # saved by the last node's rule here, wrongly: again, by this call's own
            site.node = None
            return _record(op, key, args, res, site, out, shadow)
        # (not where a dict rule reads whether an argument without an edge requires grad)
        shared = site is not None and (
            not nondiff or save.__class__ is not dict or nondiff.isdisjoint(save))
        # an op at positions: its statics (the positions) are not the site's, its memo is
        # kept per statics and ``want`` (``_AT_POSITIONS``)
        at = (site, key, want) if shared and op.positions is not None else None
        if at is not None and (known := _AT_POSITIONS.get(at)) is not None:
            saves = known.saves
        else:
            # a fresh ``NodeSite`` (inlined: off a site, once per op)
            known = NodeSite()  # (it has no __init__: no Python runs)
            known.op, known.key, known.want = op, key, want
            known.vkey = vjp_key(op, key, stored, consts, want)
            # the outputs' shapes and dtypes, for zeros where no gradient arrives (asking
            # a pending result computes nothing)
            m = out._arr.aval if out is not None else res.aval \
                if res.__class__ is not tuple else tuple([r.aval for r in res]) \
                if len(res) > 1 else res[0].aval
            known.meta = m
            known.fusable = op.jit and m.__class__ is not tuple
            known.keep = None  # (off a site's memo: ``OpNode._unpack`` looks at every one)
            # whether PyTorch's node saves the result: the op's parsed names answer once
            saves = save is OUT or has_saved and (
                spec.saves_result if (spec := op._spec) is not None and op.pack_order is None
                else "result" in _pack_order(op, len(stored)))
            if shared:
                known.needed, known.saves = needed, saves
                known.keep = tuple([i for i, s in enumerate(stored) if s.__class__ is tuple])
                if at is None:
                    known.plan = _plan(op, stored, want, needed)
                    site.node = known
                else:  # (positions a loop varies: bounded)
                    _memo.keep(_AT_POSITIONS, at, known)
    else:
        saves = known.saves
    node = _new_node(op, known, edges, stored, consts)
    if _anomaly.enabled:  # detect_anomaly: keep the forward's traceback
        anomaly_mode.store_stack(node)
    if out is None and res.__class__ is not tuple:  # one fresh output: the common case
        result = t = _fresh_output(node, res, known)
    else:
        result = _attach_outputs(node, res, out)
        t = out if out is not None else result[0]
    if saves or has_saved == 2:
        if has_saved == 2 or open_contexts[0] and _hooked():
            _pack(node, stored, t, result)
            has_saved = 2
        else:  # a weak reference for the version check: the output holds the node (an
            # op that recomputes the result PyTorch saves keeps it for that check only)
            v, ver = t._arr, t._ver  # ``t._version``, inlined
            node._out_saved = (v, _weakref(t), ver.value() if ver.__class__ is _Moving else ver)
            if v.__class__ is Pending:
                v.saved = True
            if result.__class__ is tuple and op.extras is None:
                node._extra = _later_outputs(op, len(stored), result)
            has_saved = 1
    node._has_saved = has_saved
    if out is not None:
        _rebase_inplace(node, out, shadow)
        return out
    return result


def record_at_site(op, key, args, res, site):
    """``_record(op, key, args, res, site)`` for a deferred op of one output (``res``, a
    ``Pending``) at ``site`` (its ``lazy.Site``), following the plan of the site's last
    node (``NodeSite.plan``): per argument one test of its kind, where ``_record`` asks
    whether it is a Tensor, non-differentiable, kept, and works ``want`` out to compare.
    An argument whose edge is not the plan's (``want`` changed there) takes ``_record``.

    NOTE: a Tensor kept before that argument was marked ``saved`` (its segment returns
    it): harmless where ``_record`` then keeps it not (one output more)."""
    known = site.node
    if known is None or _anomaly.enabled:
        return _record(op, key, args, res, site)
    edges, stored, consts, has_saved = [], [], None, 0
    for a, k in zip(args, known.plan):
        if k < _PLAN_NONE:  # an edge
            gf = a.grad_fn
            if gf is not None:
                if gf.__class__ is StaleView:
                    check_stale(gf)
                e = (gf, a._output_nr)
            elif a._requires_grad:
                e = (a._grad_accumulator(), 0)
            else:
                return _record(op, key, args, res, site)
            edges.append(e)
            if k == _PLAN_EDGE:
                stored.append(a._arr.aval)
                continue
        elif k < _PLAN_NONDIFF:  # no edge at a differentiable argument
            if a.grad_fn is not None or a._requires_grad:
                return _record(op, key, args, res, site)
            edges.append(None)
            e = None
            if k == _PLAN_NONE:
                stored.append(a._arr.aval)
                continue
        elif k < _PLAN_CONST:  # indices, masks, conditions: no edge, as in torch
            e = None
            if k == _PLAN_NONDIFF:
                stored.append(a._arr.aval)
                continue
        else:  # a constant (its bits: an edge of None, needed by the saving rule)
            if k & 1:
                edges.append(None)
            stored.append(_CONST)
            if consts is None:
                consts = []
            consts.append(a)
            if k & 2 and not has_saved:
                has_saved = 1
            continue
        # kept: as ``_record`` keeps it
        arr = a._arr
        if arr.__class__ is Pending:
            arr.saved = True
        if not has_saved:
            has_saved = 2 if open_contexts[0] and _hooked() else 1
        ver = a._ver
        if ver.__class__ is _Moving:
            ver = ver.value()
        stored.append((arr, a, ver, e))
    node = _new_node(op, known, edges, stored, consts)
    t = _fresh_output(node, res, known)
    if known.saves or has_saved == 2:
        if has_saved == 2 or open_contexts[0] and _hooked():
            _pack(node, stored, t, t)
            has_saved = 2
        else:
            ver = t._ver
            node._out_saved = (res, _weakref(t), ver.value() if ver.__class__ is _Moving else ver)
            res.saved = True
            has_saved = 1
    node._has_saved = has_saved
    return t



def _new_node(op, known, edges, stored, consts):
    """``op``'s node at ``known`` (its ``NodeSite``): Node.__init__, inlined (tests/ops
    check every slot is set)."""
    node = _new(op._node_cls)
    node._next = tuple(edges)
    node._seq = next(_sequence)
    node._hooks = node._metadata = node._out_saved = node._extra = None  # (hooks: all kinds)
    node._site, node._stored, node._consts = known, stored, consts
    node._freed = False
    return node


def _fresh_output(node, res, known):
    """``node``'s one output, a new Tensor of value ``res``: Tensor._wrap, inlined (a fresh
    Tensor's uncounted writes)."""
    t = _new(Tensor)
    _set_arr(t, res)
    _set_version(t, 0)
    _set_nr(t, 0)
    if known.meta.dtype in INEXACT:
        _set_fn(t, node)
        _set_rg(t, True)
    else:
        _set_fn(t, None)
        _set_rg(t, False)
    return t

def _plan(op, stored, want, needed):
    """``NodeSite.plan`` of a node whose arguments ``_record`` stored as ``stored``."""
    plan = []
    for i, s in enumerate(stored):
        kept = s.__class__ is tuple
        if s is _CONST:
            plan.append(_PLAN_CONST + (i in op.scalar_edges) + 2 * (i in needed))
        elif i in op.nondiff:
            plan.append(_PLAN_NONDIFF + kept)
        else:
            plan.append((_PLAN_EDGE if i in want else _PLAN_NONE) + kept)
    return tuple(plan)


# ``NodeSite.plan``'s codes, per argument: a Tensor with an edge, one without at a
# differentiable position, a non-differentiable one (each +1 where it is kept), a constant
# (+1 with an edge of None, ``Op.scalar_edges``; +2 where the saving rule needs it)
_PLAN_EDGE, _PLAN_NONE, _PLAN_NONDIFF, _PLAN_CONST = 0, 2, 4, 8


def _attach_outputs(node, res, out):
    """The outputs of a multi-output or in-place op call, with ``node`` as their grad_fn."""
    outs = (out,) if out is not None else tuple(map(_wrap, res))
    meta = node._site.meta
    if meta.__class__ is not tuple:
        meta = (meta,)
    for i, t in enumerate(outs):
        if meta[i].dtype in INEXACT:
            if out is None:   # fresh outputs: uncounted writes
                _set_fn(t, node)
                _set_nr(t, i)
                _set_rg(t, True)
            else:
                t.grad_fn = node
                t._output_nr = i
                t._requires_grad = True
    return outs


def _rebase_inplace(node, out, shadow):
    out._backward_hooks = None  # hooks registered before stay with the old node
    if out._retains_grad:  # retain_grad moves to the new history
        old = shadow.grad_fn
        if old is not None and old._retain_hooks:
            old._retain_hooks.pop(shadow._output_nr, None)
        node._set_retain_grad(out)


_new = object.__new__
# ``want`` of a node with one edge, shared: each tuple a node keeps is one more object for
# the cyclic garbage collector to count and scan while the graph lives
_ONE = tuple((i,) for i in range(8))
_N_ONE = len(_ONE)
_EVERY = range(2 ** 31)  # every argument position (a range's ``in`` is arithmetic)
# the memo of the sites of ops at positions: ``(lazy.Site, statics, want) -> NodeSite``
_AT_POSITIONS = {}


def _later_outputs(op, n, outs):
    """Weak references to the outputs after the first that PyTorch's node saves
    (aminmax's ``max``), or None: for the version check only, and their values too for an
    ``OUT`` op, whose backward reads them."""
    kept = tuple((outs[w[1]]._arr if op.save is OUT else None, _weakref(outs[w[1]]),
                  outs[w[1]]._version, w[1])
                 for w in _pack_order(op, n) if w.__class__ is tuple and w[1] < len(outs))
    for k in kept:
        if k[0].__class__ is Pending:
            k[0].saved = True
    return kept or None


def _pack(node, stored, out, outs):
    """Saved-tensor hooks pack what ``node`` saves, in PyTorch's order (the op's
    ``names``), then anything else it keeps in argument order. ``outs``: the outputs (a
    tuple for an op of several), whose later outputs PyTorch's node may save too."""
    op = node._site.op
    extras = _extras(node, stored) if op.extras is not None else \
        outs[1:] if outs.__class__ is tuple and len(outs) > 1 else None
    for where in _pack_order(op, len(stored)):  # argument positions; "result": the output
        if where == "result":
            if op.save is OUT or node._out_saved is None:
                node._out_saved = SavedTensor(out, True)
        elif where.__class__ is tuple:  # ("extra", k): the kernel's (or the op's) output k
            if extras is not None:
                node._extra = (node._extra or ()) + (SavedTensor(extras[where[1] - 1], False),)
        elif where < len(stored) and stored[where].__class__ is tuple:
            stored[where] = SavedTensor(stored[where][1], False)
    for i, s in enumerate(stored):
        if s.__class__ is tuple:
            stored[i] = SavedTensor(s[1], False)
    if op.save is OUT and node._out_saved is None:
        node._out_saved = SavedTensor(out, True)


def pack_before_error(op, args):
    """PyTorch records an op's node, its saved values packed by saved-tensor hooks, before
    the kernel checks the index values: an eager index check calls this before it raises,
    so the pack hooks see what PyTorch's saw (then nothing is recorded)."""
    if not (open_contexts[0] and _hooked() and _gm.enabled) or op.node is None or \
            op.save is OUT or not any(isinstance(a, Tensor) and a._requires_grad for a in args):
        return
    needed = needed_inputs(op.save, args)
    keep = [i for i, a in enumerate(args)
            if isinstance(a, Tensor) and keeps(op.save, i, needed, a._arr.aval.dtype)]
    order = [w for w in _pack_order(op, len(args)) if w.__class__ is int and w in keep]
    for i in order + [i for i in keep if i not in order]:
        SavedTensor(args[i], False)


def _extras(node, stored):
    """``Op.extras`` of a node's arguments (saved, not yet packed) as Tensors."""
    consts = iter(node._consts or ())
    vals = [_value(s[0]) if s.__class__ is tuple else next(consts) if s is _CONST
            else jnp.zeros(s.shape, s.dtype) for s in stored]
    site = node._site
    return [Tensor._wrap(v) for v in extras_fn(site.op, site.key)(*vals)]


def extras_fn(op, key):
    """The jitted ``op.extras`` for the statics ``key``."""
    fn = op._fwd_cache.get(("extras", key))
    if fn is None:
        fn = op._fwd_cache[("extras", key)] = tiered.jit(functools.partial(op.extras, **dict(key)))
    return fn


def _hooked():
    """Whether values saved now go through SavedTensor: saved-tensor hooks or
    allow_mutation_on_saved_tensors are active in this thread (callers first check
    ``open_contexts``, which is 0 unless such a context is open in some thread)."""
    return hook_state.stack or hook_state.mutation_ctx is not None
