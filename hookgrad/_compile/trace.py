"""Tracing a ``hookgrad.compile`` step: one ``jax.jit`` program from an eager step.

:func:`trace` runs the step once with every state Tensor holding a tracer, in four parts:

1. **snapshot** what tracing overwrites (each Tensor's own snapshot, Module slots, the
   optimizers' state, the global PRNG key), restored afterwards whatever happens;
2. **bind** the program's flat inputs into that state (Tensors, ``.grad``, optimizer
   state, array arguments, the key);
3. **collect** what the step changed as outputs, with how to write each back
   (:class:`Entry`);
4. **donate** the input buffers an output of the same aval replaces.
"""
from operator import itemgetter

import jax
import jax.extend.core as _jex

from . import after_run as _after_run
from . import arg_objects as _arg_objects
from . import checks as _checks
from . import host_run as _host_run
from . import speculate as _speculate
from . import sharding as _sharding
from . import tune as _tune
from .. import _mode, _tensor
from .._ops.gather import TRACED as _TRACED
from .._autograd.hooks import TENSOR_DICTS
from .._random import GLOBAL as _KEY
from .._tensor import Tensor
from .host_hook import _ctx, _current_trace, _flatten_containers, _Tracing
from .state import _opt_install, _opt_load, _Split, _state_part

_Tracer = jax.core.Tracer


class Entry:
    """One traced and compiled program, with how to write its outputs back."""

    __slots__ = ("exe", "exe_plain", "fn", "donated", "data_out", "grad_out", "grad_none",
                 "grad_new", "versions", "opt_out", "opt_state_in", "key_out", "key_in",
                 "host_calls", "user_spec", "user_build", "n_out", "jaxpr", "fixed_point",
                 "options", "tuning", "layout", "opt_take", "checks", "check_out",
                 "check_src", "guard", "exe_checked", "donated_get", "replay_get",
                 "host_first", "host_reached", "spec", "path", "siblings", "appends")


def items_getter(positions):
    """A function of a list giving its items at ``positions`` (one or more) as a sequence:
    a slice (a list) where they run in order, as a program's outputs mostly do, else a
    tuple."""
    a = positions[0]
    if len(positions) > 1 and list(positions) == list(range(a, a + len(positions))):
        return itemgetter(slice(a, a + len(positions)))
    if len(positions) > 1:
        return itemgetter(*positions)
    return lambda xs: (xs[a],)


def trace(cf, plan):
    """Trace ``cf``'s step for ``plan`` (a ``_compile.state._Plan``), compile it and cache
    the :class:`Entry` under ``plan.key``."""
    entry = Entry()
    entry.fixed_point = entry.siblings = None
    # a sharded step: every input's sharding, checked before anything changes
    cfgs = _sharding.configs(cf._sharding, plan.state.modules)
    entry.layout = _sharding.Layout(cfgs, plan, cf._fn) if cfgs else None
    snap = _Snapshot(plan)

    def body(*flat):
        bound = _Bound(plan, flat)
        tracing = _Tracing(_current_trace(), plan.state.tensor_ids, *cf._hooks_known)
        checks = _checks.collector(tracing.trace)
        _ctx.stack.append(tracing)
        _TRACED.stack.append(checks)
        runner, _mode.state.hook_runner = _mode.state.hook_runner, _host_run.run
        # the step's own reads branch as the last eager run's values (``speculate``)
        reader = None if cf._fullgraph else _speculate.Reader(cf._spec_log)
        prev_reader = _tensor.READER[0]
        if reader is not None:
            _tensor.READER[0] = reader.read
        try:
            with _mode.compiling_mode():
                result = cf._fn(*bound.args, **bound.kwargs)
        finally:
            _tensor.READER[0] = prev_reader
            _mode.state.hook_runner = runner
            _host_run.settle(tracing)
            _TRACED.stack.pop()
            _ctx.stack.pop()
        if reader is not None:
            reader.done()
        appends = _after_run.found(cf, plan, cf._watch, reader, tracing.host_reached)
        return _collect(entry, plan, snap, bound, result, tracing, checks, reader, appends)

    try:
        traced = jax.jit(body).trace(*plan.flat, jax.random.key_data(plan.rng))
    finally:
        snap.restore()
        cf._hooks_registered = snap.hooks_changed
    cf.trace_count += 1
    entry.jaxpr = traced.jaxpr
    entry.check_src = _checks.sources(entry, traced.jaxpr)
    # host calls run before the write-back: the inputs stay readable (``host_run``)
    entry.donated = () if cf._donate is False or entry.host_first else \
        _donations(entry, plan, traced)
    entry.donated_get = items_getter(entry.donated) if entry.donated else None
    private = _private_state(entry, plan)
    held = tuple(p for p in entry.donated if p not in private)
    entry.replay_get = items_getter(held) if held else None
    entry.guard, entry.exe_checked = [], None
    if entry.donated and entry.check_out is not None:
        _checks.guarded_donations(entry, plan, traced)
    _build(entry, plan, traced, cf._options, cf._autotune)
    cf._cache[plan.key] = entry
    return entry


# --------------------------------------------------------------------------- 1. snapshot


class _Snapshot:
    """What tracing overwrites: taken before the trace, put back by :meth:`restore`."""

    def __init__(self, plan):
        st = plan.state
        self.tensors = st.tensors
        self.saved = [t._compile_snapshot() for t in st.tensors]
        # versions before the step: the program's version bumps are counted from them
        self.versions = [(t._version, None if t._grad is None else t._grad._version)
                         for t in st.tensors]
        self.mod_slots = [(m, dict(m._parameters), dict(m._buffers)) for m in st.modules]
        self.opts = [(opt, treedef, plan.flat[start:start + n])
                     for opt, (start, n, treedef, _) in zip(st.optimizers, plan.opt_trees)]
        self.key = _KEY.peek()
        # the hooks of the state Tensors: one the step registers on them (a multi-grad
        # hook over a leaf) is its Python's, gone after the trace (``hooks_changed``)
        self.hooks = [(t, name, d, None if d is None else list(d.items()))
                      for t in st.tensors for name in TENSOR_DICTS
                      for d in (t.__dict__.get(name),)]
        self.hooks_changed = False

    def restore(self):
        for t, name, d, items in self.hooks:
            now = t.__dict__.get(name)
            if now is None or (now is d and list(now.items()) == items):
                continue
            self.hooks_changed = True
            now.clear()
            now.update(items or ())
        for t, snap in zip(self.tensors, self.saved):
            t._compile_restore(snap)
        for m, params, bufs in self.mod_slots:
            m._parameters.update(params)
            m._buffers.update(bufs)
        for opt, treedef, leaves in self.opts:
            _opt_install(opt, treedef, leaves)
        _KEY.set(self.key)


# --------------------------------------------------------------------------- 2. bind


class _Bound:
    """The program's flat inputs put into the state: each state Tensor's array (and its
    ``.grad``'s), the optimizers' state, the array arguments and the global PRNG key."""

    def __init__(self, plan, flat):
        st = plan.state
        it = iter(flat)
        grads_in = set(plan.grads_in)
        self.data, self.grad = [], {}
        for i, t in enumerate(st.tensors):
            t._data = next(it)
            self.data.append(t._data)
            if i in grads_in:
                t._grad._data = next(it)
                self.grad[i] = t._grad._data
        self.grad_obj = {i: st.tensors[i]._grad for i in grads_in}
        self.grads_in = grads_in
        self.opt = []   # per optimizer: id of each state leaf -> its flat input position
        for opt, (start, n, treedef, _) in zip(st.optimizers, plan.opt_trees):
            leaves = [next(it) for _ in range(n)]
            tree = treedef.unflatten(leaves)
            pos = {id(v): start + j for j, v in enumerate(leaves)}
            self.opt.append({id(v): pos[id(v)]
                             for v in jax.tree_util.tree_leaves(_state_part(tree))})
            _opt_load(opt, tree)
        leaves = list(plan.arg_leaves)
        for j, slot in enumerate(plan.arg_slots):
            if slot[0] == "a":
                leaves[j] = next(it)
        # the global PRNG key, as raw key data (typed keys take jit's slow path)
        self.key = jax.random.wrap_key_data(next(it), impl=key_impl(plan.rng))
        _KEY.set(self.key)
        self.args, self.kwargs = plan.rebuild(leaves)


# --------------------------------------------------------------------------- 3. collect


def _collect(entry, plan, snap, bound, result, tracing, checks, reader, appends):
    """What the step changed, as the program's outputs; ``entry`` learns where each goes
    (the index checks' output last: ``hookgrad._compile.checks``)."""
    outs = []
    _rebound_slots(snap)
    _collect_tensors(entry, plan, snap, bound, outs)
    _collect_optimizers(entry, plan, bound, outs)
    key_now = _KEY.peek()
    if key_now is not bound.key:
        entry.key_out = len(outs)
        outs.append(jax.random.key_data(key_now))
    else:
        entry.key_out = None
    ures, entry.user_build = _flatten_containers(result)
    entry.user_spec = []
    objects = _arg_objects.where(plan) if plan.arg_objects else {}
    for v in ures:
        if isinstance(v, Tensor):
            entry.user_spec.append(("T", len(outs), type(v)))
            outs.append(v._data)
        elif isinstance(v, (jax.Array, _Tracer)):
            entry.user_spec.append(("A", len(outs)))
            outs.append(v)
        elif type(v) is _speculate.Scalar:   # ``return loss.item()``: read after the run
            entry.user_spec.append(("P", len(outs)))
            outs.append(v.arr)
        elif id(v) in objects:   # an argument object (a KV cache): this call's
            entry.user_spec.append(("R", objects[id(v)]))
        else:
            entry.user_spec.append(("S", v))
    entry.host_calls = []
    entry.host_first = any(getattr(c, "auto", False) for c, _ in tracing.host_calls)
    entry.host_reached = tracing.host_reached
    for call, arrays in tracing.host_calls:
        entry.host_calls.append((call, list(range(len(outs), len(outs) + len(arrays)))))
        outs.extend(arrays)
    _after_run.collect(entry, appends, outs)
    _speculate.collect(entry, reader, outs)
    # guarded reads, as host calls, are checked before the write-back: no donation
    entry.host_first = entry.host_first or bool(entry.spec)
    _checks.collect(entry, checks, outs)
    entry.n_out = len(outs)
    return outs


def _rebound_slots(snap):
    # a Module slot the step rebound to a new Tensor: its value goes into the original
    for m, params, bufs in snap.mod_slots:
        for d, before in ((m._parameters, params), (m._buffers, bufs)):
            for name, obj in before.items():
                now = d.get(name)
                if now is not obj and isinstance(now, Tensor) and obj is not None:
                    obj._data = now._data


def _collect_tensors(entry, plan, snap, bound, outs):
    data_out, grad_out, grad_none, grad_new, versions = [], [], [], [], []
    for i, t in enumerate(plan.state.tensors):
        if t._data is not bound.data[i]:
            data_out.append((i, len(outs)))
            outs.append(t._data)
        ver, grad_ver = snap.versions[i]
        dv, gv = t._version - ver, 0
        g = t._grad
        if g is None:
            if i in bound.grads_in:
                grad_none.append(i)
        elif i in bound.grads_in and g is bound.grad_obj[i]:
            if g._data is not bound.grad[i]:
                grad_out.append((i, len(outs)))
                outs.append(g._data)
            gv = g._version - grad_ver
        else:
            grad_new.append((i, len(outs), g._requires_grad and g.grad_fn is None))
            outs.append(g._data)
        if dv or gv:
            versions.append((i, dv, gv))
    entry.data_out, entry.grad_out = data_out, grad_out
    entry.grad_none, entry.grad_new, entry.versions = grad_none, grad_new, versions


def _collect_optimizers(entry, plan, bound, outs):
    entry.opt_state_in = [p for ids in bound.opt for p in ids.values()]
    entry.opt_out = []
    for opt, ids_in in zip(plan.state.optimizers, bound.opt):
        tree = opt._state_arrays() if hasattr(opt, "_state_arrays") else None
        leaves, treedef = jax.tree_util.tree_flatten(_state_part(tree))
        spec = []
        for leaf in leaves:
            if id(leaf) in ids_in:
                spec.append(("in", ids_in[id(leaf)]))
            else:
                spec.append(("out", len(outs)))
                outs.append(jax.numpy.asarray(leaf))
        entry.opt_out.append((treedef, spec))
    # the leaves' getter from the outputs where all are outputs (a training step's)
    entry.opt_take = [_taker([k for _, k in spec]) if spec and
                      all(kind == "out" for kind, _ in spec) else None
                      for _, spec in entry.opt_out]


def _taker(idx):
    # a list, as the optimizer keeps it (``_flat_state().leaves``): a slice of the
    # outputs where they are a list and the leaves run in order
    get = items_getter(idx)
    return lambda res: got if type(got := get(res)) is list else list(got)


# --------------------------------------------------------------------------- 4. donate


def _donations(entry, plan, traced):
    """Input positions whose value an output replaces and whose buffer an output of the
    same shape and dtype can take over (XLA warns about donations it cannot use, e.g. a
    ``.grad`` dropped by ``zero_grad``)."""
    changed = set()
    pos = 0
    replaced = {i for i, _ in entry.data_out}
    grad_replaced = {i for i, _ in entry.grad_out} | set(entry.grad_none)
    grads_in = set(plan.grads_in)
    for i in range(len(plan.state.tensors)):
        if i in replaced:
            changed.add(pos)
        pos += 1
        if i in grads_in:
            if i in grad_replaced:
                changed.add(pos)
            pos += 1
    kept = {j for _, spec in entry.opt_out for kind, j in spec if kind == "in"}
    changed.update(p for p in entry.opt_state_in if p not in kept)
    free = {}
    for v in traced.jaxpr.jaxpr.outvars:
        k = (v.aval.shape, v.aval.dtype)
        free[k] = free.get(k, 0) + 1
    usable = []
    for p in sorted(changed):
        a = traced.jaxpr.jaxpr.invars[p].aval
        k = (a.shape, a.dtype)
        if free.get(k, 0) > 0:
            free[k] -= 1
            usable.append(p)
    return tuple(usable)


def _private_state(entry, plan):
    """Input positions of optimizer state that, in a call re-running this program on what
    its last run left (``hookgrad._compile.replay``), only the optimizer's flat state
    holds: the leaves are outputs of that run which the program gives nothing else
    (no Tensor, ``.grad``, result or host hook took them), and anything reading the
    state otherwise ends the flat state (the re-run is then not made). Such a buffer
    needs no check for aliases before it is donated."""
    exposed = [k for s in entry.user_spec if s[0] not in "SR" for k in (s[1],)]
    exposed += [k for _, idx in entry.host_calls for k in idx]
    exposed += [k for _, k in _after_run.outputs(entry)]
    exposed += [k for _, k in entry.data_out] + [k for _, k in entry.grad_out]
    exposed += [k for _, k, _ in entry.grad_new] + [entry.key_out, entry.check_out]
    outs = [k for _, spec in entry.opt_out for kind, k in spec if kind == "out"]
    once = {k for k in outs if outs.count(k) == 1} - set(exposed)
    private = set()
    for (start, _, td, _), (_, spec) in zip(plan.opt_trees, entry.opt_out):
        if type(td) is _Split:
            base = start + td[2]
            private.update(base + m for m, (kind, k) in enumerate(spec)
                           if kind == "out" and k in once)
    return private


def _build(entry, plan, traced, options, autotune):
    """The executable: the traced program, without the key input when nothing uses it,
    with its inputs' and outputs' shardings where the step is sharded."""
    fn = _jex.jaxpr_as_fun(traced.jaxpr)
    jaxpr = traced.jaxpr.jaxpr
    entry.key_in = entry.key_out is not None or _uses_last_input(jaxpr)
    if not entry.key_in:  # the step draws no randomness: the key is not passed
        full, shape = fn, jaxpr.invars[-1].aval

        def fn(*xs):
            return full(*xs, jax.numpy.zeros(shape.shape, shape.dtype))
    entry.fn = fn
    if entry.layout is not None:
        entry.layout.finish(entry, plan)
    entry.options, entry.tuning = options, None
    if entry.check_out is not None:   # run where the checks are proved: none computed
        fn = _checks.unchecked(fn, entry)
    entry.exe = (_tune.Autotuned(fn, entry.donated, entry) if autotune else
                 _tune.jit(fn, entry.donated, entry.options, entry.layout))
    entry.exe_plain = None if entry.donated else entry.exe


def _uses_last_input(jaxpr):
    try:
        from jax._src.interpreters import partial_eval as pe
        _, used = pe.dce_jaxpr(jaxpr, [True] * len(jaxpr.outvars))
        return bool(used[-1])
    except Exception:  # noqa: BLE001 - other JAX versions: assume it is used
        return True


def key_impl(key):
    return jax.random.key_impl(key)
