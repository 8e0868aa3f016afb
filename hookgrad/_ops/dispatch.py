"""Running an op: the jit-cached forward, the node it records, and its backward.

An ``Op`` is one row of the op table: a pure JAX forward, the torch node name, and what
the backward keeps saved. Its backward is JAX's vjp of the forward, jit-cached per op,
static arguments and the layout of what was saved; with ``create_graph`` the backward is
itself run as an op (``vjp_op``), so its derivative is again JAX's vjp.
"""
import functools
import sys
import weakref
from weakref import ref as _weakref

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Literal as _Literal

from .. import _dtype, _errors, _meta, _mode
from .._views import StaleView, check_stale
from .._tensor import (Pending, Tensor, _set_arr, _set_fn, _set_nr, _set_rg,
                       _set_version)
from . import jax_errors, lazy as _lazy, tiered
from .._autograd import anomaly_mode
from .._autograd import grad_mode
from .._autograd.saved import (FREED_MESSAGE, SavedTensor, hook_state, open_contexts,
                               unpack_output, unpack_plain)
from .._autograd.graph import _Node, _sequence


class _Save:
    """A named way of saving (compared by identity: ``op.save is ALL``)."""

    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return self._name


# the node of an overload PyTorch has no derivative formula for: backward reaching it
# raises (``derivative for aten::<op> is not implemented``; ``_NotImplementedNode``)
NOT_IMPLEMENTED = "torch::autograd::NotImplemented"
ALL = _Save("ALL")  # save every Tensor argument (default)
OUT = _Save("OUT")  # save the output (as PyTorch does for exp, tanh, ...), backward from ``bwd``
_gm = grad_mode._state
_fm = _mode.state
_anomaly = anomaly_mode._state
_dual = [None]  # while a forward-AD level is open, forward_ad's apply (it fills the slot)
# once a DTensor exists, hookgrad.distributed.tensor's apply: it runs the op with the slot
# empty and makes the outputs of an op on DTensors DTensors
_subclass = [None]
INEXACT = frozenset(np.dtype(d) for d in (np.float16, jnp.bfloat16, np.float32, np.float64,
                                          np.complex64, np.complex128))


class Op:
    """One op-table entry.

    Args:
        fwd: ``fwd(*args, **statics)``, pure JAX; args are arrays or Python scalars.
        node: the torch name of the node it records (``MulBackward0``).
        save: ``ALL``; ``()``: nothing (linear ops: backward needs only shapes); ``OUT``;
            or ``{i: (j, ...)}``: the gradient of argument i needs arguments j, ...
            (PyTorch's conditional saving, visible to pack hooks).
        bwd: for ``save=OUT``: ``bwd(out, grad, **statics) -> grad_input``.
        scalar_edges: a Python-number operand still gets a ``(None, 0)`` edge (torch wraps
            numbers of binary arithmetic into tensors): True for the first two arguments,
            or the positions where a non-Tensor (a number, None for an absent optional
            Tensor, as conv's bias) gets one.
        jit: False for ops that cannot be jitted (data-dependent shapes, transfers).
        nondiff: positions of Tensor arguments that are not differentiable inputs (indices,
            masks, conditions): torch gives them no ``next_functions`` edge.
        names: what PyTorch saves, by its names and in its pack order:
            ``"self other -> other self"`` (the arguments' schema names, then the saved
            values; see ``saved_names``). Read when ``grad_fn._saved_<name>`` is asked for
            and when saved-tensor hooks pack; None: PyTorch's unary convention.
        promotes: narrow JAX's 64-bit promotions of integers to the default dtype
            (``_dtype.pytorch_result_dtype``); False for vjps.
        extras: ``extras(*args, **statics) -> (array, ...)``: values PyTorch's kernel
            returns beside the result and saves (layer_norm's mean and rstd, nll_loss's
            total_weight), ``result1``, ``result2``, ... in ``names``. The backward
            does not need them (JAX's vjp recomputes what it needs): they are computed
            only for saved-tensor hooks to pack and for ``grad_fn._saved_result1``.
        positions: for an op whose statics hold positions (a select's index, a slice's
            start), ``positions(shape, **statics) -> (fwd, fixed statics, positions)`` or
            None (``shape``: the first argument's): the forward runs as ``fwd(*args,
            *positions, **fixed)``, one program for every position (a loop writing row
            ``i`` compiles once), where a static would compile one per value. The node
            keeps all statics (``_saved_index``); ``fwd`` does no dtype promotion.
    """

    __slots__ = ("name", "fwd", "node", "save", "bwd", "scalar_edges", "jit", "nondiff",
                 "names", "extras", "pack_order", "positions", "_spec", "_fwd_cache", "_vjp_cache",
                 "_node_cls", "_avals", "_constant_cache",
                 "__weakref__")

    def __init__(self, name, fwd, node, save=ALL, bwd=None, scalar_edges=False, jit=True,
                 nondiff=(), names=None, promotes=True, extras=None, pack_order=None, positions=None):
        self.name, self.node, self.save = name, node, save
        self.positions = positions
        self.extras = extras
        # a variadic op's pack order, ``pack_order(number of arguments) -> positions``
        # (``_foreach_mul``'s packs every ``other`` before every ``self``); else ``names``
        self.pack_order = pack_order
        # a vjp's results have its primals' dtypes already (promotes=False): narrowing them
        # would turn a float64 input's gradient into float32 behind a cast to float32
        self.fwd = _dtype.pytorch_result_dtype(fwd) if promotes else fwd
        self.bwd, self.jit = bwd, jit
        self.scalar_edges = frozenset((0, 1) if scalar_edges is True else scalar_edges or ())
        self.nondiff = frozenset(nondiff)
        self.names, self._spec = names, None
        self._fwd_cache = {}
        self._vjp_cache = {}
        self._constant_cache = {}  # create_graph: which vjp results need no graph
        self._avals = {}  # argument types -> output type, once run (_ops/lazy.py)
        self._node_cls = None if node is None else node_class(node)
        _LIVE.add(self)

    def __repr__(self):
        return f"Op({self.name})"

    def forward_fn(self, key):
        fn = self._fwd_cache.get(key)
        if fn is None:
            if self.positions is not None and self.jit:
                fn = _AtPositions(self, key)
            else:
                # NOTE: a new partial even without statics: jax.jit caches traces per
                # function object, and _forget_programs must get a fresh trace
                f = functools.partial(self.fwd, **dict(key))
                fn = tiered.jit(f) if self.jit else f
            self._fwd_cache[key] = fn
        return fn

    def shared_program(self, fwd, fixed, donate=False):
        """The program of ``fwd`` with the statics ``fixed`` that every position shares
        (``positions``); ``donate``: its first argument's buffer goes to the result."""
        key = (fwd, donate, *fixed.items())
        program = self._fwd_cache.get(key)
        if program is None:
            program = self._fwd_cache[key] = tiered.jit(
                functools.partial(fwd, **fixed), **({"donate_argnums": 0} if donate else {}))
        return program


class _AtPositions:
    """The forward of an op with ``positions`` for one key: per shape of its first
    argument, the program every position shares and this call's positions, appended as
    Python ints (traced: any value runs the same program). A forward segment
    (``_ops/lazy.py``) composes ``fwd`` with ``fixed`` and passes the positions likewise."""
    __slots__ = ("op", "key", "_placed", "__weakref__")  # jax.eval_shape refers weakly

    def __init__(self, op, key):
        self.op, self.key, self._placed = op, key, {}

    def place(self, shape):
        """``(fwd, fixed statics, positions)`` for a first argument of ``shape``, or None:
        the op's own program with every static."""
        found = self._placed.get(shape, False)
        if found is False:
            found = self._placed[shape] = self.op.positions(shape, **dict(self.key))
        return found

    def __call__(self, *args):
        found = self.place(args[0].shape)
        if found is None:
            return self._static()(*args)
        fwd, fixed, where = found
        return self.op.shared_program(fwd, fixed)(*args, *where)

    def donated(self, *args):
        """The call with its first argument's buffer given to the result (``apply``
        checks nothing else holds it)."""
        found = self.place(args[0].shape)
        if found is None:
            return self._static()(*args)
        fwd, fixed, where = found
        return self.op.shared_program(fwd, fixed, donate=True)(*args, *where)

    def _static(self):
        return self.op.shared_program(self.op.fwd, dict(self.key))


def _unpack_hooked(node, as_tensors):
    """The values saved-tensor hooks packed, unpacked in PyTorch's order (the pack order:
    ``other`` before ``self`` for mm, atan2, ...): ``{argument position: value}``. Packed
    extras (``Op.extras``) and a packed result are unpacked in their place too, though the
    vjp reads neither (a result changed in place fails here, as PyTorch's)."""
    stored, extra, result = node._stored, node._extra, node._out_saved
    order = [w for w in _pack_order(node._op, len(stored))
             if w.__class__ is int or extra is not None and w.__class__ is tuple
             or w == "result" and result.__class__ is SavedTensor]
    order += [i for i in range(len(stored)) if i not in order]
    vals = {}
    for i in order:
        if i.__class__ is tuple:  # ("extra", k): output k of the kernel
            extra[i[1] - 1].unpack(node, False)
        elif i.__class__ is str:
            result.unpack(node, False)
        elif i < len(stored) and stored[i].__class__ is SavedTensor:
            vals[i] = stored[i].unpack(node, as_tensors)
    return vals


_LIVE = weakref.WeakSet()  # every Op, for forgetting traced programs


def _forget_programs():
    """After ``set_default_dtype``: an op's traced program narrows integer promotions to
    the default dtype it saw, so every op traces again."""
    for op in list(_LIVE):
        op._fwd_cache.clear()
        op._vjp_cache.clear()
        op._avals.clear()
    _lazy.forget()


_dtype.ON_DEFAULT_CHANGE.append(_forget_programs)


# --------------------------------------------------------------------------- forward


def apply(op, args, statics=None, out=None):
    """Run ``op`` on ``args`` (Tensors and constants), recording a node if needed.

    ``out``: the Tensor modified in place (its array is replaced, ``_version`` bumped and
    its history rebased onto the new node). Returns a Tensor or a tuple of Tensors.
    """
    if _dual[0]:
        return _dual[0](op, args, statics, out)
    if _subclass[0]:
        return _subclass[0](op, args, statics, out)
    key = tuple(statics.items()) if statics else ()
    fn = op._fwd_cache.get(key) or op.forward_fn(key)
    req = False
    pending = False  # an argument not computed yet (_ops/lazy.py), or on the meta device
    meta = False
    deferrable = out is None and op.jit and _lazy_state["enabled"]
    arrs = []
    for a in args:
        if isinstance(a, Tensor):
            v = a._arr
            arrs.append(v)
            if a._requires_grad:
                req = True
            c = v.__class__
            if c is Pending:
                pending = True
            elif c is not _ARRAY:
                deferrable = False  # a tracer: the compiled and functional modes
                if c is _MetaArray:  # checked where pending values are: off the fast path
                    pending = meta = True
        else:
            arrs.append(a)
            if a.__class__ not in _SCALARS:
                deferrable = False
    if req and _fm.backend is not None:  # hookgrad.func: JAX differentiates
        return _fm.backend.apply(op, key, args, out)
    record = req and _gm.enabled and op.node is not None
    if out is None:
        learn = None
        if deferrable:
            try:
                res = _defer(op, key, fn, arrs)
            except _FORWARD_RAISES as e:
                raise _forward_error(op, e)
            if res.__class__ is Pending:
                t = _record(op, key, args, res) if record else _wrap(res)
                res.ref = _weakref(t)
                return t
            learn = res  # first call with these argument types: run it now
        if pending:
            if meta:
                return _on_meta(op, key, fn, args, arrs, record, None)
            arrs = [_value(v) for v in arrs]
        try:
            res = fn(*arrs)
        except _FORWARD_RAISES as e:
            raise _forward_error(op, e)
        if learn is not None:
            _learn(op, learn, res)
        if record:
            return _record(op, key, args, res)
        return tuple(map(_wrap, res)) if res.__class__ is tuple else _wrap(res)
    if pending:
        if meta:
            return _on_meta(op, key, fn, args, arrs, record, out)
        arrs = [_value(v) for v in arrs]
    if fn.__class__ is _AtPositions and not record and arrs[0] is out._arr and \
            _refcount(arrs[0]) - (v is arrs[0]) <= _HELD_BY_APPLY:
        # a write at positions into an array nothing else holds: XLA writes it in place
        # (its buffer donated), so the write costs the region written, not the array
        fn = fn.donated
    if out._view is not None or out._views is not None:  # a view, or a base of views
        return _alias_inplace[0](op, key, args, arrs, fn, out, record)
    _check_inplace(out, record)
    if record:  # the node sees the tensor's value and history from before the write
        shadow = _shadow(out)
        args = tuple(shadow if a is out else a for a in args)
    try:
        res = fn(*arrs)
    except _FORWARD_RAISES as e:
        raise _forward_error(op, e)
    _write_inplace(out, res, op)
    if record:
        _record(op, key, args, None, out, shadow)
    return out


_wrap = Tensor._wrap
_MetaArray = _meta.MetaArray
# the Tensor's slot, ``apply``'s list of arrays, getrefcount's argument; NOTE: from Python
# 3.14 on, references the interpreter borrows are not counted: no donation there (-1)
_HELD_BY_APPLY = 3 if sys.version_info < (3, 14) else -1
_refcount = sys.getrefcount
_LeakedTracer = jax.errors.UnexpectedTracerError
# what JAX raises for arguments it cannot take (jax_errors makes them PyTorch's)
_JAX_RAISES = (TypeError, ValueError, IndexError, OverflowError)
_FORWARD_RAISES = (_LeakedTracer,) + _JAX_RAISES


def _forward_error(op, e):
    """What to raise for ``e``, raised by ``op``'s forward: PyTorch's error, or hookgrad's
    for a value kept from a compiled step's trace."""
    if isinstance(e, _LeakedTracer):
        err = _errors.leaked_tracer(op.name)
        err.__suppress_context__ = True  # as ``raise ... from None``
        return err
    return jax_errors.torch_error(op.name, e)


def _on_meta(op, key, fn, args, arrs, record, out):
    """``apply`` with an argument on the meta device: the forward's shapes and dtypes
    (``jax.eval_shape``), nothing computed; the node is recorded as for any Tensor."""
    arrs = [_meta.abstract(_value(v) if v.__class__ is Pending else v) for v in arrs]
    res = _meta.concrete(jax.eval_shape(fn, *arrs))
    if out is None:
        if record:
            return _record(op, key, args, res)
        return tuple(map(_wrap, res)) if res.__class__ is tuple else _wrap(res)
    if not out.is_meta:  # as PyTorch's copy_ from a meta Tensor
        raise NotImplementedError(_meta.NO_DATA)
    _check_inplace(out, record)
    if record:
        shadow = _shadow(out)
        args = tuple(shadow if a is out else a for a in args)
    _write_inplace(out, res, op)
    if record:
        _record(op, key, args, None, out, shadow)
    return out
_defer, _learn, _value, _force = _lazy.defer, _lazy.learn, _lazy.value, _lazy.force
_lazy_state, _ARRAY, _SCALARS = _lazy._state, _lazy.ARRAY, _lazy.SCALARS
_alias_inplace = [None]  # in-place on a view or base: hookgrad/_ops/views.py fills the slot


def _shadow(out):
    shadow = Tensor._wrap(out._data, out.grad_fn, out._output_nr)
    shadow._requires_grad = out._requires_grad
    if out._acc is not None:
        shadow._acc = out._acc
    return shadow


def _check_inplace(t, record):
    if t.grad_fn is None and t._requires_grad and _gm.enabled:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")


def _write_inplace(t, res, op):
    old = t._data
    if res.shape != old.shape:
        raise RuntimeError(f"output with shape {list(old.shape)} doesn't match the broadcast "
                           f"shape {list(res.shape)}")
    if res.dtype != old.dtype:
        if jnp.issubdtype(res.dtype, jnp.floating) and not jnp.issubdtype(old.dtype, jnp.inexact):
            raise RuntimeError(f"result type {_torch_kind(res.dtype)} can't be cast to the "
                               f"desired output type {_torch_kind(old.dtype)}")
        res = res.astype(old.dtype)
    t._write_(res)


_torch_kind = _dtype.torch_kind


def needed_inputs(save, args):
    """For a dict ``save`` (PyTorch's conditional saving), the argument positions that the
    gradients of the arguments requiring grad need; ``()`` for any other ``save``. With
    ``keeps``, the one description of what an op saves: recording and the functional
    mode's saved-tensor hooks both read it."""
    needed = ()
    if save.__class__ is dict:
        for i, a in enumerate(args):
            if isinstance(a, Tensor) and a._requires_grad:
                needed += save.get(i, ())
    return needed


def keeps(save, i, needed, dtype):
    """Whether an op keeps its Tensor argument ``i`` for backward: integer and bool
    Tensors (indices, masks) always, others when ``save`` or ``needed`` says so."""
    return save is ALL or i in needed or dtype not in INEXACT


def _record(op, key, args, res, out=None, shadow=None):
    """The node of one op call: returns the output Tensor(s) wrapping ``res`` with the node
    as their ``grad_fn`` (or, in place, rebases ``out`` onto it).

    Only what must be captured now is: the edges, the saved values, the shapes of unsaved
    inputs; the vjp's cache key is worked out at backward (``OpNode._keys``). This runs
    once per recorded op, hence the inlined constructors and saving rule.
    """
    save = op.save
    keep_all = save is ALL
    needed = needed_inputs(save, args) if save.__class__ is dict else ()
    nondiff = op.nondiff
    edges = []
    stored = []   # per argument: (array, tensor, version, edge) | SavedTensor | aval | _CONST
    consts = None
    has_saved = 0  # 1: something saved; 2: through saved-tensor hooks (never fused)
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            e = None
            if i not in nondiff:  # indices, masks, conditions: no edge, as in torch
                gf = a.grad_fn
                if gf is not None:
                    if type(gf) is StaleView:
                        check_stale(gf)
                    e = (gf, a._output_nr)
                elif a._requires_grad:
                    e = (a._grad_accumulator(), 0)
                edges.append(e)
            arr = a._arr  # NOTE: maybe pending: saving it computes nothing
            if not (keep_all or i in needed):  # NOTE: ``keeps``, inlined
                av = arr.aval
                if av.dtype in INEXACT:
                    stored.append(av)  # shape and dtype only
                    continue
            if arr.__class__ is Pending:
                arr.saved = True
            if not has_saved:
                has_saved = 2 if open_contexts[0] and _hooked() else 1
            # a plain tuple (cheaper than a SavedTensor); with hooks, packed below
            stored.append((arr, a, a._version, e))
        else:
            if i in op.scalar_edges:
                edges.append(None)
            stored.append(_CONST)
            if consts is None:
                consts = []
            consts.append(a)
            if i in needed and not has_saved:
                has_saved = 1
    node = _new(op._node_cls)  # Node.__init__, inlined (tests/ops check every slot is set)
    node._next = tuple(edges)
    node._seq = next(_sequence)
    node._pre_hooks = node._post_hooks = node._tensor_pre_hooks = node._retain_hooks = None
    node._metadata = node._out_saved = node._want = node._vkey = node._extra = None
    node._op, node._key, node._stored, node._consts = op, key, stored, consts
    node._freed = False
    if _anomaly.enabled:  # detect_anomaly: keep the forward's traceback
        anomaly_mode.store_stack(node)
    if out is None and res.__class__ is not tuple:  # one fresh output: the common case
        node._meta = m = res.aval  # shape and dtype, for zeros when no gradient arrives
        result = t = _new(Tensor)  # Tensor._wrap, inlined (a fresh Tensor's uncounted writes)
        _set_arr(t, res)
        _set_version(t, 0)
        _set_nr(t, 0)
        if m.dtype in INEXACT:
            _set_fn(t, node)
            _set_rg(t, True)
        else:
            _set_fn(t, None)
            _set_rg(t, False)
    else:
        result = _attach_outputs(node, res, out)
        t = out if out is not None else result[0]
    if save is OUT or has_saved == 2 or has_saved and _saves_result(op, len(stored)):
        if has_saved == 2 or open_contexts[0] and _hooked():
            _pack(node, stored, t, result)
            has_saved = 2
        else:  # a weak reference for the version check: the output holds the node (an
            # op that recomputes the result PyTorch saves keeps it for that check only)
            v = t._arr
            node._out_saved = (v, _weakref(t), t._version)
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


def _attach_outputs(node, res, out):
    """The outputs of a multi-output or in-place op call, with ``node`` as their grad_fn."""
    outs = (out,) if out is not None else tuple(map(_wrap, res))
    meta = tuple(t._data.aval for t in outs)
    node._meta = meta if len(meta) > 1 else meta[0]
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


class _SavedNames:
    """What ``saved_names`` lends the nodes (it sits above this module: it reads the op
    table's constants): filled when it is imported, with the op table."""

    attribute = listing = pack_order = None


SAVED_NAMES = _SavedNames()


def _pack_order(op, n):
    """The positions (``"result"``, extras) ``op`` packs in PyTorch's order, of ``n``
    arguments."""
    return SAVED_NAMES.pack_order(op) if op.pack_order is None else op.pack_order(n)


def _saves_result(op, n):
    """Whether PyTorch's node of ``op`` (of ``n`` arguments) saves its result."""
    return "result" in _pack_order(op, n)


def _later_outputs(op, n, outs):
    """For the version check only: weak references to the outputs after the first that
    PyTorch's node saves (aminmax's ``max``), or None."""
    kept = tuple((None, _weakref(outs[w[1]]), outs[w[1]]._version, w[1])
                 for w in _pack_order(op, n) if w.__class__ is tuple and w[1] < len(outs))
    return kept or None


def _pack(node, stored, out, outs):
    """Saved-tensor hooks pack what ``node`` saves, in PyTorch's order (the op's
    ``names``), then anything else it keeps in argument order. ``outs``: the outputs (a
    tuple for an op of several), whose later outputs PyTorch's node may save too."""
    op = node._op
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
    return [Tensor._wrap(v) for v in extras_fn(node._op, node._key)(*vals)]


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


_CONST = object()  # in ``OpNode._stored``: a non-Tensor argument (the value is in _consts)


# --------------------------------------------------------------------------- backward


_NODE_CLASSES = {}


def node_class(name):
    """The class of the nodes named ``name`` (``type(y.grad_fn).__name__ == "MulBackward0"``,
    as code that draws graphs reads it): one ``OpNode`` subclass per name, shared by ops
    that record the same name. PyTorch's ``torch::autograd::CopySlices`` is class
    ``CopySlices``."""
    cls = _NODE_CLASSES.get(name)
    if cls is None:
        short = name.rpartition("::")[2]
        base = _NotImplementedNode if name == NOT_IMPLEMENTED else OpNode
        cls = _NODE_CLASSES[name] = type(short, (base,), {"__slots__": (),
                                                         "__module__": "hookgrad.autograd"})
    return cls


class OpNode(_Node):
    """The node an op records: rebuilds the op's arguments from what was saved and runs
    the op's vjp."""

    __slots__ = ("_op", "_key", "_stored", "_consts", "_meta", "_out_saved", "_has_saved",
                 "_freed", "_vkey", "_want", "_extra")

    def name(self):
        return self._op.node

    def __getattr__(self, attr):
        # only for names the class lacks: ``_saved_<name>``, ``_raw_saved_<name>``
        if attr.startswith(("_saved_", "_raw_saved_")):
            return SAVED_NAMES.attribute(self, attr)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(SAVED_NAMES.listing(self)))

    def _out_meta(self):
        m = self._meta  # an aval, or a tuple of them for a multi-output op
        return m if m.__class__ is tuple else (m,)

    def _release(self):
        # dropping the saved values frees them (and whatever pack hooks returned); the
        # node remembers it was freed, so a second backward raises PyTorch's error
        if self._has_saved:
            self._freed = True
            self._stored = self._out_saved = self._extra = None

    def _keys(self):
        """Set ``_want`` (argument positions whose gradient flows somewhere) and ``_vkey``
        (the vjp's cache key: statics, what was saved, what is wanted)."""
        op = self._op
        stored = self._stored
        if op.save is OUT:  # the vjp reads the output only: no layout in the key
            layout = None
        elif op.save is ALL and self._consts is None:  # every argument a saved Tensor
            layout = ("S",) * len(stored)
        else:
            layout = []
            for s in stored:
                c = s.__class__
                layout.append("S" if c is tuple or c is SavedTensor else "C" if s is _CONST
                              else (s.shape, s.dtype))
            layout = tuple(layout)
        want = []
        edges = self._next
        if len(edges) == len(stored) and not op.nondiff:  # an edge per argument
            for i, e in enumerate(edges):
                if e is not None:
                    want.append(i)
        else:  # edges skip constants (unless scalar_edges) and non-differentiable inputs
            k = 0
            for i, s in enumerate(stored):
                if s is _CONST:
                    if i in op.scalar_edges:
                        k += 1
                elif i not in op.nondiff:
                    if edges[k] is not None:
                        want.append(i)
                    k += 1
        self._want = want = tuple(want)
        self._vkey = (self._key, want) if layout is None else (self._key, layout, want)
        return want

    def _unpack(self, as_tensors):
        """The vjp's leading arguments: saved values (version-checked) and constants."""
        if self._op.save is OUT:
            s = self._out_saved
            v = unpack_output(s, self, as_tensors) if s.__class__ is tuple \
                else s.unpack(self, as_tensors)
            return [_value(v)]
        vals = []
        consts = iter(self._consts or ())
        hooked = None
        for i, s in enumerate(self._stored):
            if s.__class__ is tuple:
                t = s[1]
                if as_tensors or t._version != s[2] or not t._requires_grad and s[3]:
                    # rebuild a Tensor, or raise (modified, or a non-leaf detached in place)
                    vals.append(_value(unpack_plain(s, self, as_tensors)))
                else:
                    v = s[0]
                    if v.__class__ is Pending:
                        v = v.value if v.value is not None else _force(v)
                    vals.append(v)
            elif s is _CONST:
                vals.append(next(consts))
            elif s.__class__ is SavedTensor:
                if hooked is None:
                    hooked = _unpack_hooked(self, as_tensors)
                vals.append(hooked[i])
        s = self._out_saved
        if s.__class__ is tuple:  # the results PyTorch saves: changed in place, they fail
            unpack_output(s, self, False)
            for s in self._extra or ():
                unpack_output(s, self, False)
        return vals

    def _apply(self, grads, create_graph):
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        want = self._want
        if want is None:
            want = self._keys()
        if not want:
            return [None] * len(self._next)
        meta = self._meta
        if meta.__class__ is not tuple:
            g = grads[0]
            if g is None:
                g = Tensor._wrap(jnp.zeros(meta.shape, meta.dtype))
            gs = (g,)
        else:  # multi-output: zeros for missing grads of differentiable outputs
            gs = []
            for i, m in enumerate(meta):
                if m.dtype in INEXACT:
                    g = grads[i]
                    gs.append(g if g is not None else Tensor._wrap(jnp.zeros(m.shape, m.dtype)))
        vop = self._op._vjp_cache.get(self._vkey) or vjp_op(self)
        vals = self._unpack(create_graph)
        if create_graph:
            args = (*vals, *gs)
            res = list(apply(vop, args))
            for k in _constant_outputs(vop, args):
                # NOTE: a gradient that does not depend on any input that requires grad
                # (JAX's zero cotangent: copy_'s self, zero_, floor) is PyTorch's
                # zeros_like(grad): a tensor outside the graph, so a second backward
                # does not reach back through it
                res[k] = Tensor._wrap(res[k]._data)
        else:
            fn = vop._fwd_cache.get(()) or vop.forward_fn(())
            res = fn(*vals, *[g._data for g in gs])
            res = [Tensor._wrap(r) for r in res]
        if len(want) == len(self._next):
            return list(res)
        out = [None] * len(self._next)
        it = iter(res)
        for k, e in enumerate(self._next):
            if e is not None:
                out[k] = next(it)
        return out


class _NotImplementedNode(OpNode):
    """The node of an overload with no derivative formula (fused chains skip it: its class
    is not a direct ``OpNode`` subclass)."""

    __slots__ = ()

    def _apply(self, grads, create_graph):
        raise RuntimeError(f"derivative for aten::{self._op.name.split('.')[0]} is not "
                           "implemented")


def _constant_outputs(vop, args):
    """Positions of ``vop``'s results that no argument requiring grad flows into."""
    sources = tuple(a.__class__ is Tensor and a._requires_grad for a in args)
    if not any(sources):
        return ()
    vals = [a._data if a.__class__ is Tensor else a for a in args]
    specs = [jax.ShapeDtypeStruct(v.shape, v.dtype) if hasattr(v, "shape") else v
             for v in vals]
    key = (sources, tuple((a.shape, a.dtype) if hasattr(a, "shape") else (type(a), a)
                          for a in specs))
    found = vop._constant_cache.get(key)
    if found is None:
        closed = jax.make_jaxpr(vop.fwd)(*specs)
        # one source flag per traced leaf (a None argument has none)
        leaves = [src for a, src in zip(specs, sources) for _ in jax.tree_util.tree_leaves(a)]
        flows = {v for v, src in zip(closed.jaxpr.invars, leaves) if src}
        for eqn in closed.jaxpr.eqns:  # a sub-program's results follow all its inputs
            if any(v.__class__ is not _Literal and v in flows for v in eqn.invars):
                flows.update(eqn.outvars)
        found = vop._constant_cache[key] = tuple(
            k for k, v in enumerate(closed.jaxpr.outvars)
            if v.__class__ is _Literal or v not in flows)
    return found


def vjp_op(node):
    """The Op computing ``node``'s gradients (for the argument positions ``node._want``)."""
    op = node._op
    ck = node._vkey
    vop = op._vjp_cache.get(ck)
    if vop is None:
        statics = dict(node._key)
        if op.save is OUT:
            def fwd(y, *gs):
                return (_conj(op.bwd(y, *[_conj(g) for g in gs], **statics)),)
        else:
            fwd = _make_vjp(op.fwd, statics, ck[1], node._want,
                            [m.dtype for m in node._out_meta()])
        vop = op._vjp_cache[ck] = Op(op.name + "_backward", fwd, _backward_node_name(op.node),
                                     jit=op.jit, promotes=False)
    return vop


# The node PyTorch records for a backward that is one op on the incoming gradient (what a
# backward under ``create_graph=True`` shows); other backwards record ``<node>Backward``.
_BACKWARD_NODES = {
    "SumBackward0": "ExpandBackward0", "NegBackward0": "NegBackward0",
    "TBackward0": "TBackward0", "TransposeBackward0": "TransposeBackward0",
    "PermuteBackward0": "PermuteBackward0", "ViewBackward0": "ViewBackward0",
    "ReshapeAliasBackward0": "ViewBackward0",
    "UnsqueezeBackward0": "SqueezeBackward1", "SqueezeBackward1": "UnsqueezeBackward0",
    "SelectBackward0": "SelectBackwardBackward0",
    "SliceBackward0": "SliceBackwardBackward0",
}


def _backward_node_name(node):
    return _BACKWARD_NODES.get(node) or node.rpartition("::")[2] + "Backward"


def _make_vjp(f, statics, layout, want, out_dtypes):
    f = functools.partial(f, **statics) if statics else f
    n_present = sum(1 for s in layout if not isinstance(s, tuple))
    diff_out = [dt in INEXACT for dt in out_dtypes]

    def fwd(*vals):
        present, gs = vals[:n_present], vals[n_present:]
        it = iter(present)
        full = [jnp.zeros(s[0], s[1]) if isinstance(s, tuple) else next(it) for s in layout]

        def g(*wanted):
            args = list(full)
            for i, w in zip(want, wanted):
                args[i] = w
            return f(*args)

        primals = [full[i] for i in want]
        out, pullback = jax.vjp(g, *primals)
        git = iter(gs)
        if isinstance(out, tuple):
            cot = tuple(next(git) if d else np.zeros(o.shape, jax.dtypes.float0)
                        for o, d in zip(out, diff_out))
        else:
            cot = next(git)
        res = pullback(jax.tree_util.tree_map(_conj, cot))
        # gradients w.r.t. Python-number operands are dropped by the caller; keep dtypes
        return tuple(_conj(r).astype(p.dtype) if hasattr(p, "dtype") and r.dtype != p.dtype
                     else _conj(r) for r, p in zip(res, primals))
    return fwd


def _conj(g):
    """PyTorch's gradient of a complex value is the conjugate of JAX's cotangent (its
    "Autograd for Complex Numbers" note: ``.grad`` is the conjugate Wirtinger derivative
    of a real loss, ``jax.grad`` its conjugate); conjugating a node's cotangents before
    JAX's vjp and its results after keeps every gradient between nodes, and so every
    hook and ``.grad``, PyTorch's (a no-op for real values)."""
    return jnp.conj(g) if jnp.iscomplexobj(g) else g
