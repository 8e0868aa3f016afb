"""``hookgrad.compile``: run an eager-style training step as one XLA program.

::

    @hookgrad.compile
    def step(x, y):
        loss = loss_fn(model(x), y)
        loss.backward()          # hookgrad's engine, hooks included, traced once
        opt.step()
        opt.zero_grad()
        return loss

The first call traces the step under ``jax.jit`` with every Tensor it can reach holding a
tracer: the Parameters and buffers of the Modules it closes over, their ``.grad``, the
state of its optimizers, the global PRNG key and its Tensor arguments. The eager engine
runs once at trace time, so tensor, Node, module, saved-tensor and multi-grad hooks are
traced into the program. What the step writes to that state comes back as outputs of the
compiled program and is written into the same Python objects after each call, so N
compiled calls leave the state N eager calls leave. Later calls with the same shapes,
dtypes, hooks, ``train()``/``eval()`` flags and ``.grad`` presence run the cached program.

Hooks that need concrete values on the host (logging, appending to a list) are marked
with :func:`host_hook`: their Tensor arguments become outputs of the program and the hook
runs after each run with that run's values. Reading a traced value any other way
(``.item()``, ``float(t)``, printing) raises :class:`TracedValueError`. Discovery of the
state and the cache keys live in ``hookgrad._compile.state``, re-running the last call's
program in ``hookgrad._compile.replay``, host hooks in ``hookgrad._compile.host_hook``, XLA options
and ``mode="max-autotune"`` in ``hookgrad._compile.tune``.

``hookgrad.compile`` is this module made callable: ``hookgrad.compile(fn)`` compiles,
``hookgrad.compile.host_hook`` marks host hooks.
"""
import functools
import sys
import types

import jax
import jax.extend.core as _jex
import numpy as np

from ._compile import replay as _replay
from ._compile import tune as _tune
from . import _mode, _watch
from ._random import GLOBAL as _KEY
from ._compile.state import (_Plan, _Roots, _State, _arg_array_key, _context_key, _dict_key,
                             _global_hook_dicts, _is_optimizer, _module_cls,
                             _module_hook_attrs, _opt_install, _opt_key, _opt_load, _opt_tree,
                             _Split, _state_part, _tensor_key, _Walk)
from ._compile.host_hook import (TracedValueError, _ctx, _current_trace, _flatten_containers,
                                 _Tracing, host_hook, is_host_hook, traced_value_error)
from ._tensor import Tensor
from ._watch import WATCHED
from ._autograd import grad_mode
from ._autograd.saved import hook_state as _saved_state

__all__ = ["compile", "host_hook", "is_host_hook", "CompiledFunction", "TracedValueError"]

_gm = grad_mode._state
_Tracer = jax.core.Tracer


class _Entry:
    """One traced and compiled program, with how to write its outputs back."""

    __slots__ = ("exe", "exe_plain", "fn", "donated", "data_out", "grad_out", "grad_none",
                 "grad_new", "versions", "opt_out", "opt_state_in", "key_out", "key_in",
                 "host_calls", "user_spec", "user_build", "n_out", "jaxpr", "fixed_point",
                 "options", "tuning")


class CompiledFunction:
    """The callable ``hookgrad.compile(fn)`` returns.

    Attributes:
        trace_count: how many times the step was traced (one per distinct cache key).

    Methods ``lower(*args, **kwargs)`` (the ``jax.stages.Lowered`` program for these
    arguments: ``.as_text()`` prints its StableHLO), ``cost_analysis(*args, **kwargs)`` and
    ``jaxpr(*args, **kwargs)`` inspect what runs; ``cache_clear()`` drops the programs.
    """

    _is_compiled_function = True

    def __init__(self, fn, *, donate=None, disable=False, autotune=False, options=None):
        self._fn = fn
        self._autotune = autotune
        self._options = options or {}   # XLA compiler options (_compile_tune)
        self._roots = _Roots(fn)
        self._cache = {}
        self._found = None      # the cached walk of the roots, with its guards
        self._replay = None     # the last call, for the next to re-run (_compile_replay)
        self._donate = donate
        self._disable = disable
        self.trace_count = 0
        self._key_data = None   # (typed key, its raw data) from the last call
        functools.update_wrapper(self, fn, updated=())

    def __repr__(self):
        return f"<hookgrad.compile of {getattr(self._fn, '__name__', self._fn)!r}>"

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)

    def cache_clear(self):
        self._cache.clear()
        self._found = self._replay = None

    # ---- the call
    def __call__(self, *args, **kwargs):
        if self._disable or _mode.state.compiling or _mode.state.functional:
            # nested in another compiled step or a functional call: inline
            return self._fn(*args, **kwargs)
        last, self._replay = self._replay, None
        plan = None if last is None else _replay.check(self, last, args, kwargs, _module_cls())
        # ``last`` holds this call's input arrays: a donated buffer must have no other holder
        del last
        if plan is not None:
            entry = plan.basis.entry
        else:
            plan = self._plan(args, kwargs)
            if plan is None:  # an outer JAX trace is running: just trace through
                return self._fn(*args, **kwargs)
            entry = self._cache.get(plan.key)
            if entry is None:
                entry = self._trace(plan, args, kwargs)
            plan.basis = _replay.basis(plan, entry)
        out = self._run(entry, plan)
        self._replay = plan.written
        return out

    def _entry(self, args, kwargs):
        plan = self._plan(args, kwargs)
        return plan, self._cache.get(plan.key) or self._trace(plan, args, kwargs)

    def lower(self, *args, **kwargs):
        """The lowered XLA program this call would run (``.as_text()``, ``.compile()``)."""
        plan, entry = self._entry(args, kwargs)
        flat = plan.flat + [jax.random.key_data(plan.rng)] if entry.key_in else plan.flat
        return entry.exe.lower(*flat)

    def cost_analysis(self, *args, **kwargs):
        """XLA's cost analysis (flops, bytes accessed) of the program for these arguments."""
        return self.lower(*args, **kwargs).compile().cost_analysis()

    def jaxpr(self, *args, **kwargs):
        """The traced program (a ``ClosedJaxpr``) for these arguments."""
        return self._entry(args, kwargs)[1].jaxpr

    def compiler_options(self, *args, **kwargs):
        """The XLA compiler options the program for these arguments is compiled with: the
        ``options`` given to ``compile``, or what ``mode="max-autotune"`` picked."""
        return dict(self._entry(args, kwargs)[1].options)

    # ---- planning: what is state, what the cache key is
    def _discover(self, module_cls):
        """The state the step's roots reach, and the part of the cache key read from its
        Modules and the global hooks. The walk is redone only when a guard fails: a root
        rebound, a container or Module slot re-pointed, an attribute of a Module rebound
        (``train()``/``eval()``), a hook added or removed."""
        roots, root_ids = self._roots.values()
        found = self._found
        if found is not None and found.holds(root_ids):
            return found.state, found.module_key
        now = _watch.epoch()
        st = _State()
        for v in roots:
            st.walk(v, module_cls)
        for d in _global_hook_dicts():
            st._guard(_dict_key, d, type(d) not in WATCHED)
        module_key = self._module_key(st)
        # the roots are held by ``_Roots`` and the guarded objects by ``st``: the ids
        # compared cannot be reused by new objects
        self._found = _Walk(root_ids, st, module_key, now)
        return st, module_key

    @staticmethod
    def _module_key(st):
        key = [(id(m), m.training,
                tuple(_dict_key(m.__dict__.get(a)) for a in _module_hook_attrs(m)))
               for m in st.modules]
        key.append(tuple(_dict_key(d) for d in _global_hook_dicts()))
        return tuple(key)

    def _plan(self, args, kwargs):
        module_cls = _module_cls()
        epoch = _watch.epoch()
        st, module_key = self._discover(module_cls)
        plan = _Plan()
        plan.found, plan.epoch, plan.n_walk = self._found, epoch, len(st.tensors)
        plan.flags = list(map(_replay._FLAGS, st.tensors))
        # ``st`` is the cached walk: copied before adding to it (None: its Tensors copied)
        shared = True
        arg_leaves, rebuild = _flatten_containers((args, kwargs))
        arg_only = {}
        arg_slots = []   # per leaf: ("t", tensor index) | ("a", flat index) | ("s", value)
        static_key = []
        for v in arg_leaves:
            if isinstance(v, Tensor):
                if id(v) not in st.tensor_ids:
                    arg_only[id(v)] = len(arg_only)  # keyed by position, not identity
                    if shared:
                        st, shared = st.copy(deep=False), None
                    st.add_tensor(v)
                arg_slots.append(("t", st.tensor_ids[id(v)]))
                static_key.append(("T", st.tensor_ids[id(v)]))
            elif isinstance(v, (jax.Array, np.ndarray, np.generic)):
                arg_slots.append(("a", None))
                static_key.append(_arg_array_key(v))
            elif module_cls is not None and isinstance(v, module_cls) or _is_optimizer(v):
                if shared is not False:
                    st, shared = st.copy(), False
                n_modules = len(st.modules)
                st.walk(v, module_cls)
                if len(st.modules) != n_modules:
                    module_key = self._module_key(st)
                arg_slots.append(("s", v))
                static_key.append(("obj", id(v)))
            else:
                arg_slots.append(("s", v))
                try:
                    hash(v)
                    static_key.append(("v", type(v), v))
                except TypeError:
                    static_key.append(("id", id(v)))
        flat = []
        plan.ctx = _context_key(_gm.enabled, _saved_state)
        key = [tuple(static_key), plan.ctx, module_key]
        grads_in = []
        for i, t in enumerate(st.tensors):
            arr = t._data
            if isinstance(arr, _Tracer):
                return None
            flat.append(arr)
            if t._grad is not None:
                flat.append(t._grad._data)
                grads_in.append(i)
            tid = id(t)
            key.append(_tensor_key(t, ("arg", arg_only[tid]) if tid in arg_only else tid))
        opt_trees = []
        plan.groups, plan.opt_keys = [], []
        for opt in st.optimizers:
            plan.groups.append((_replay.group_values(opt),
                                [list(g.values()) for g in opt.param_groups]))
            tree, leaves, treedef = _opt_tree(opt)
            opt_trees.append((len(flat), len(leaves), treedef, tree))
            flat.extend(leaves)
            opt_key = _opt_key(opt, tree, leaves)
            plan.opt_keys.append(opt_key)
            key.append((id(opt), treedef) + opt_key)
        rng = _KEY.get()
        key.append(rng.dtype)
        for v, slot in zip(arg_leaves, arg_slots):
            if slot[0] == "a":
                flat.append(v)
        plan.key = tuple(key)
        plan.flat = flat
        plan.state = st
        plan.tensors, plan.optimizers = st.tensors, st.optimizers
        plan.n_args, plan.kw_names = len(args), tuple(kwargs)
        plan.grads_in = grads_in
        plan.opt_trees = opt_trees
        plan.rng = rng
        plan.arg_leaves = arg_leaves
        plan.arg_slots = arg_slots
        plan.rebuild = rebuild
        return plan

    # ---- tracing
    def _trace(self, plan, args, kwargs):
        st = plan.state
        tensors = st.tensors
        entry = _Entry()
        entry.fixed_point = None
        # snapshot what tracing overwrites, to restore it afterwards
        saved = [t._compile_snapshot() for t in tensors]
        mod_slots = [(m, dict(m._parameters), dict(m._buffers)) for m in st.modules]
        opt_saved = [(opt, treedef, plan.flat[start:start + n])
                     for opt, (start, n, treedef, _) in zip(st.optimizers, plan.opt_trees)]
        rng_saved = _KEY.peek()
        grads_in = set(plan.grads_in)

        def body(*flat):
            it = iter(flat)
            in_data, in_grad = [], {}
            for i, t in enumerate(tensors):
                t._data = next(it)
                in_data.append(t._data)
                if i in grads_in:
                    t._grad._data = next(it)
                    in_grad[i] = t._grad._data
            in_grad_obj = {i: tensors[i]._grad for i in grads_in}
            opt_in = []
            for opt, (start, n, treedef, _) in zip(st.optimizers, plan.opt_trees):
                leaves = [next(it) for _ in range(n)]
                tree = treedef.unflatten(leaves)
                pos = {id(v): start + j for j, v in enumerate(leaves)}
                opt_in.append({id(v): pos[id(v)]
                               for v in jax.tree_util.tree_leaves(_state_part(tree))})
                _opt_load(opt, tree)
            leaves = list(plan.arg_leaves)
            for j, (slot, v) in enumerate(zip(plan.arg_slots, leaves)):
                if slot[0] == "a":
                    leaves[j] = next(it)
            # the global PRNG key, as raw key data (typed keys take jit's slow path)
            key_in = jax.random.wrap_key_data(next(it), impl=_key_impl(plan.rng))
            _KEY.set(key_in)
            a, k = plan.rebuild(leaves)
            tracing = _Tracing(_current_trace())
            _ctx.stack.append(tracing)
            try:
                with _mode.compiling_mode():
                    result = self._fn(*a, **k)
            finally:
                _ctx.stack.pop()
            # ---- what changed becomes an output
            outs = []
            data_out, grad_out, grad_none, grad_new, versions = [], [], [], [], []
            for m, params, bufs in mod_slots:
                for d, before in ((m._parameters, params), (m._buffers, bufs)):
                    for name, obj in before.items():
                        now = d.get(name)
                        if now is not obj and isinstance(now, Tensor) and obj is not None:
                            # the step rebound the slot: its value goes into the original
                            obj._data = now._data
            for i, t in enumerate(tensors):
                if t._data is not in_data[i]:
                    data_out.append((i, len(outs)))
                    outs.append(t._data)
                dv = t._version - saved[i][2]
                gv = 0
                g = t._grad
                if g is None:
                    if i in grads_in:
                        grad_none.append(i)
                elif i in grads_in and g is in_grad_obj[i]:
                    if g._data is not in_grad[i]:
                        grad_out.append((i, len(outs)))
                        outs.append(g._data)
                    gv = g._version - saved[i][6][1]
                else:
                    grad_new.append((i, len(outs), g._requires_grad and g.grad_fn is None))
                    outs.append(g._data)
                if dv or gv:
                    versions.append((i, dv, gv))
            opt_out = []
            entry.opt_state_in = [p for ids in opt_in for p in ids.values()]
            for opt, ids_in in zip(st.optimizers, opt_in):
                tree = opt._state_arrays() if hasattr(opt, "_state_arrays") else None
                leaves, treedef = jax.tree_util.tree_flatten(_state_part(tree))
                spec = []
                for leaf in leaves:
                    if id(leaf) in ids_in:
                        spec.append(("in", ids_in[id(leaf)]))
                    else:
                        spec.append(("out", len(outs)))
                        outs.append(jax.numpy.asarray(leaf))
                opt_out.append((treedef, spec))
            key_now = _KEY.peek()
            if key_now is not key_in:
                entry.key_out = len(outs)
                outs.append(jax.random.key_data(key_now))
            else:
                entry.key_out = None
            ures, ubuild = _flatten_containers(result)
            uspec = []
            for v in ures:
                if isinstance(v, Tensor):
                    uspec.append(("T", len(outs), type(v)))
                    outs.append(v._data)
                elif isinstance(v, (jax.Array, _Tracer)):
                    uspec.append(("A", len(outs)))
                    outs.append(v)
                else:
                    uspec.append(("S", v))
            host = []
            for call, arrays in tracing.host_calls:
                host.append((call, list(range(len(outs), len(outs) + len(arrays)))))
                outs.extend(arrays)
            entry.host_calls = host
            entry.data_out, entry.grad_out = data_out, grad_out
            entry.grad_none, entry.grad_new, entry.versions = grad_none, grad_new, versions
            entry.opt_out = opt_out
            entry.user_spec, entry.user_build = uspec, ubuild
            entry.n_out = len(outs)
            return outs

        try:
            traced = jax.jit(body).trace(*plan.flat, jax.random.key_data(plan.rng))
        finally:
            for t, snap in zip(tensors, saved):
                t._compile_restore(snap)
            for m, params, bufs in mod_slots:
                m._parameters.update(params)
                m._buffers.update(bufs)
            for opt, treedef, leaves in opt_saved:
                _opt_install(opt, treedef, leaves)
            _KEY.set(rng_saved)
        self.trace_count += 1
        entry.jaxpr = traced.jaxpr
        donated = ()
        if self._donate is not False:
            # inputs whose value is replaced by an output: their buffers can be reused
            changed = set()
            pos = 0
            for i, t in enumerate(tensors):
                if any(j == i for j, _ in entry.data_out):
                    changed.add(pos)
                pos += 1
                if i in grads_in:
                    if any(j == i for j, _ in entry.grad_out) or i in entry.grad_none:
                        changed.add(pos)
                    pos += 1
            kept = {j for _, spec in entry.opt_out for kind, j in spec if kind == "in"}
            changed.update(p for p in entry.opt_state_in if p not in kept)
            # only where an output of the same type can take the buffer over (XLA warns
            # about donations it cannot use, e.g. a .grad dropped by zero_grad)
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
            donated = tuple(usable)
        fn = _jex.jaxpr_as_fun(traced.jaxpr)
        jaxpr = traced.jaxpr.jaxpr
        entry.key_in = entry.key_out is not None or _uses_last_input(jaxpr)
        if not entry.key_in:  # the step draws no randomness: the key is not passed
            full, shape = fn, jaxpr.invars[-1].aval

            def fn(*xs):
                return full(*xs, jax.numpy.zeros(shape.shape, shape.dtype))
        entry.fn = fn
        entry.donated = donated
        entry.options, entry.tuning = self._options, None
        entry.exe = (_tune.Autotuned(fn, donated, entry) if self._autotune else
                     _tune.jit(fn, donated, entry.options))
        entry.exe_plain = None if donated else entry.exe
        self._cache[plan.key] = entry
        return entry

    # ---- running and writing back
    def _run(self, entry, plan):
        exe = entry.exe
        flat = plan.flat
        if entry.key_in:
            rng = plan.rng
            cached = self._key_data
            if cached is not None and cached[0] is rng:
                data = cached[1]
            else:
                data = jax.random.key_data(rng)
            flat = flat + [data]
        if entry.donated:
            # donate a replaced buffer only if nothing but its Tensor (or optimizer) holds
            # it: a user's alias (``old = p.detach()``) must stay readable
            refs = sys.getrefcount
            for i in entry.donated:
                if refs(flat[i]) > 3:
                    exe = entry.exe_plain
                    if exe is None:
                        exe = entry.exe_plain = _tune.jit(entry.fn, (), entry.options)
                    break
        res = exe(*flat)
        del flat
        tensors = plan.tensors
        for i, k in entry.data_out:
            tensors[i]._data = res[k]
        for i, k in entry.grad_out:
            tensors[i]._grad._data = res[k]
        for i in entry.grad_none:
            tensors[i]._grad = None
        for i, k, rg in entry.grad_new:
            g = Tensor._wrap(res[k])
            g._requires_grad = rg
            tensors[i]._grad = g
        for i, dv, gv in entry.versions:
            t = tensors[i]
            if dv:
                t._version += dv
            if gv:
                t._grad._version += gv
        for opt, (_, _, in_def, tree), (treedef, spec) in zip(plan.optimizers, plan.opt_trees,
                                                               entry.opt_out):
            leaves = [plan.flat[j] if kind == "in" else res[j] for kind, j in spec]
            if type(in_def) is _Split:   # kept flat: the next call passes it straight in
                opt._load_flat_state(treedef, leaves)
            else:
                new = treedef.unflatten(leaves)
                _opt_load(opt, dict(tree, state=new) if isinstance(tree, dict) and
                          "state" in tree else new)
        # the replaced inputs are freed now, while the program runs, not after it
        plan.flat = None
        if entry.key_out is not None:
            data = res[entry.key_out]
            new_key = jax.random.wrap_key_data(data, impl=_key_impl(plan.rng))
            _KEY.set(new_key)
            self._key_data = (new_key, data)
        if plan.basis is not None:
            plan.written = _replay.written(plan)
        out = []
        for s in entry.user_spec:
            if s[0] == "T":
                out.append(s[2]._wrap(res[s[1]]) if s[2] is Tensor else _wrap_as(s[2], res[s[1]]))
            elif s[0] == "A":
                out.append(res[s[1]])
            else:
                out.append(s[1])
        # host hooks reached while tracing, in that order, with this run's values
        for call, idx in entry.host_calls:
            call(*[res[k] for k in idx])
        return entry.user_build(out)


def _uses_last_input(jaxpr):
    try:
        from jax._src.interpreters import partial_eval as pe
        _, used = pe.dce_jaxpr(jaxpr, [True] * len(jaxpr.outvars))
        return bool(used[-1])
    except Exception:  # noqa: BLE001 - other JAX versions: assume it is used
        return True


def _key_impl(key):
    return jax.random.key_impl(key)


def _wrap_as(cls, arr):
    t = Tensor._wrap(arr)
    try:
        t.__class__ = cls
    except TypeError:
        pass
    return t


def compile(model=None, *, fullgraph=False, dynamic=None, backend="xla", mode=None,
            options=None, disable=False, donate=None):
    """Compile an eager-style step (forward, ``backward()``, optimizer step) with XLA.

    ::

        hookgrad.compile(model=None, *, fullgraph=False, dynamic=None, backend="xla",
                         mode=None, options=None, disable=False, donate=None)

    Use it as a decorator (``@hookgrad.compile`` or ``@hookgrad.compile(...)``) or call it
    on a function. Called on a Module, it returns an ``OptimizedModule`` whose forward is
    compiled and whose outputs backpropagate through one compiled node, for eager training
    loops (see ``hookgrad._compile.optimized_module``). The step may close over Modules, optimizers
    and Tensors: their parameters, buffers, ``.grad``, optimizer state and the global PRNG key are
    inputs and outputs of the compiled program, written back after every call. It is
    retraced on new shapes/dtypes, hooks added or removed, ``train()``/``eval()``
    changes and ``.grad`` appearing or disappearing.

    ``mode="max-autotune"`` (or ``"max-autotune-no-cudagraphs"``): from a program's second
    run on, compile it under a few XLA option sets for its backend (on the CPU: which
    library runs the matmuls), run the step's calls on each in turn, timed, and keep the
    fastest (``step.compiler_options(*args)`` tells which);
    ``"default"``, ``"lite"`` and ``"reduce-overhead"`` compile as XLA does by default.
    ``options`` is a dict of XLA compiler options (as ``jax.jit``'s ``compiler_options``;
    ``"max_autotune": True`` autotunes on top of them); not both ``mode`` and ``options``.
    ``fullgraph``, ``dynamic`` and ``backend`` are accepted for PyTorch compatibility (the
    whole step is always one XLA program: there are no graph breaks). ``donate``: let XLA
    reuse the buffers of the state the step replaces (the default, ``None``, donates a
    buffer on a call where nothing but its Tensor or optimizer holds it; ``False`` never
    donates).

    Example::

        >>> @hookgrad.compile
        ... def step(x, y):
        ...     loss = F.mse_loss(model(x), y)
        ...     loss.backward()
        ...     opt.step()
        ...     opt.zero_grad()
        ...     return loss
        >>> for x, y in data:
        ...     loss = step(x, y)
    """
    autotune, xla_options = _tune.resolve(mode, options)
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic,
                                 backend=backend, mode=mode, options=options, disable=disable,
                                 donate=donate)
    kw = dict(donate=donate, disable=disable, autotune=autotune, options=xla_options)
    module_cls = _module_cls()
    if module_cls is not None and isinstance(model, module_cls):
        # as torch.compile(model): an OptimizedModule whose forward is compiled
        from ._compile.optimized_module import compile_module
        if disable:
            return model
        return compile_module(model, fullgraph=fullgraph, options=xla_options)
    if not callable(model):
        raise RuntimeError("compile() expects a callable (a function or a Module), got "
                           f"{type(model).__name__}")
    return CompiledFunction(model, **kw)


def _module_compile_options(model=None, *, fullgraph=False, dynamic=None, backend="xla",
                            mode=None, options=None, disable=False, donate=None):
    """``Module.compile``'s arguments (``hookgrad.compile``'s, without ``model``): the
    options of its compiled forward, or None for ``disable=True``."""
    if model is not None:
        raise TypeError("Module.compile() takes no positional arguments; pass the options by "
                        "keyword, as hookgrad.compile(fn, ...)")
    _, xla_options = _tune.resolve(mode, options)
    return None if disable else {"fullgraph": fullgraph, "options": xla_options}


class _CallableModule(types.ModuleType):
    """``hookgrad.compile`` is both this module and the ``compile`` function."""

    def __call__(self, *args, **kwargs):
        return compile(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
# the function carries the same names, for code holding ``from hookgrad.compile import compile``
compile.host_hook = host_hook
compile.is_host_hook = is_host_hook
compile.TracedValueError = TracedValueError
