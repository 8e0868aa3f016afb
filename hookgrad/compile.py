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
with :func:`host_hook`; their Tensor arguments arrive through ``jax.debug.callback`` each
time the program runs. Reading a traced value any other way (``.item()``, ``float(t)``,
printing) raises :class:`TracedValueError`.

``hookgrad.compile`` is this module made callable: ``hookgrad.compile(fn)`` compiles,
``hookgrad.compile.host_hook`` marks host hooks.
"""
import functools
import sys
import types

import jax
import jax.extend.core as _jex
import numpy as np

from . import _mode
from . import random as _random
from ._tensor import Tensor
from .autograd import grad_mode
from .autograd._saved import hook_state as _saved_state

__all__ = ["compile", "host_hook", "is_host_hook", "CompiledFunction", "TracedValueError"]

_gm = grad_mode._state
_Tracer = jax.core.Tracer


class TracedValueError(RuntimeError):
    """A traced Tensor's value was read on the host (``.item()``, ``float(t)``, printing)
    inside ``hookgrad.compile`` or a JAX transformation."""


def traced_value_error(what):
    where = ("a hookgrad.compile step" if _mode.state.compiling else
             "a JAX transformation (hookgrad.compile, hookgrad.func, jax.jit/grad/vmap)")
    return TracedValueError(
        f"{what} needs the concrete value of a Tensor, but inside {where} Tensors hold JAX "
        "tracers: values exist only when the compiled program runs. Keep the computation on "
        "Tensors, or mark the hook that needs values on the host with "
        "@hookgrad.compile.host_hook (its Tensor arguments are then delivered as concrete "
        "values through jax.debug.callback every time the program runs), or use "
        "jax.debug.print.")


# --------------------------------------------------------------------------- host hooks


def host_hook(fn=None, *, ordered=True):
    """Mark a hook as one that runs on the host with concrete Tensors.

    ::

        @hookgrad.compile.host_hook
        def log_norm(grad):
            norms.append(grad.norm().item())

        h = x.register_hook(log_norm)

    Eagerly it is called as usual. When its Tensor arguments are traced (inside
    ``hookgrad.compile`` or a JAX transformation of ``hookgrad.func.functional_call``), the
    call becomes a ``jax.debug.callback`` (``ordered=True`` keeps the host calls in program
    order): each time the compiled program runs, the hook is called with Tensors holding
    that run's values (non-Tensor arguments such as the module are passed as they were at
    trace time). A host hook must return ``None``: it observes, it cannot replace a
    gradient or an output.
    """
    if fn is None:
        return functools.partial(host_hook, ordered=ordered)
    if getattr(fn, "__hookgrad_host_hook__", False):
        return fn

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        leaves, rebuild = _flatten_containers((args, kwargs))
        pos = [i for i, v in enumerate(leaves)
               if isinstance(v, Tensor) or isinstance(v, (jax.Array, _Tracer))]
        traced = any(isinstance(leaves[i]._data if isinstance(leaves[i], Tensor) else leaves[i],
                                _Tracer) for i in pos)
        if not traced and not _mode.state.compiling and not _in_jax_trace():
            return _call_host(fn, args, kwargs)
        arrays = [leaves[i]._data if isinstance(leaves[i], Tensor) else leaves[i] for i in pos]
        was_tensor = [isinstance(leaves[i], Tensor) for i in pos]

        def callback(*values):
            new = list(leaves)
            for i, v, t in zip(pos, values, was_tensor):
                arr = v if isinstance(v, jax.Array) else jax.numpy.asarray(v)
                new[i] = Tensor._wrap(arr) if t else arr
            a, k = rebuild(new)
            _call_host(fn, a, k)

        jax.debug.callback(callback, *arrays, ordered=ordered)
        return None

    wrapper.__hookgrad_host_hook__ = True
    return wrapper


def _in_jax_trace():
    """Whether a JAX transformation is tracing the running code (jit, grad, vmap)."""
    try:
        from jax._src import core
        return not isinstance(core.trace_ctx.trace, core.EvalTrace)
    except (ImportError, AttributeError):  # other JAX versions: tensors decide alone
        return False


def is_host_hook(fn):
    """Whether ``fn`` was marked with :func:`host_hook`."""
    return bool(getattr(fn, "__hookgrad_host_hook__", False))


def _call_host(fn, args, kwargs):
    with grad_mode.no_grad():
        res = fn(*args, **kwargs)
    if res is not None:
        raise RuntimeError(f"host hook {getattr(fn, '__name__', fn)!r} returned a value: a "
                           "hook marked with hookgrad.compile.host_hook runs on the host after "
                           "the fact and must return None")
    return None


def _flatten_containers(tree):
    """Leaves of nested tuples/lists/dicts (anything else is a leaf, Modules included)
    and a function rebuilding the tree from new leaves."""
    leaves = []

    def walk(x):
        if type(x) in (tuple, list):
            return (type(x), [walk(v) for v in x])
        if type(x) is dict:
            return (dict, [(k, walk(v)) for k, v in x.items()])
        if isinstance(x, tuple) and hasattr(x, "_fields"):  # namedtuple
            return (type(x), [walk(v) for v in x], "nt")
        leaves.append(x)
        return len(leaves) - 1

    spec = walk(tree)

    def build(s, new):
        if isinstance(s, int):
            return new[s]
        kind = s[0]
        if kind is dict:
            return {k: build(v, new) for k, v in s[1]}
        vals = [build(v, new) for v in s[1]]
        if len(s) == 3:
            return kind(*vals)
        return kind(vals)

    return leaves, lambda new: build(spec, new)


# --------------------------------------------------------------------------- discovery

_SKIP_MODULES = ("hookgrad", "jax", "jaxlib", "numpy", "optax", "torch", "builtins",
                 "functools", "collections", "typing")
_MAX_DEPTH = 4


def _module_cls():
    nn = sys.modules.get("hookgrad.nn.modules.module")
    return nn.Module if nn is not None else None


def _is_optimizer(obj):
    return hasattr(obj, "param_groups") and hasattr(obj, "state") and hasattr(obj, "step")


def _user_function(f):
    mod = getattr(f, "__module__", None) or ""
    return not mod.split(".")[0] in _SKIP_MODULES


def _code_names(code, out, seen):
    if code in seen:
        return
    seen.add(code)
    out.update(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _code_names(c, out, seen)


class _Roots:
    """Where a step's state is read from: closure cells, globals its code names, bound
    ``self`` and ``functools.partial`` arguments, followed into user helper functions.
    Globals are read at each call (a model defined after the decorated step is found)."""

    def __init__(self, fn):
        self.cells = []     # cell objects
        self.globals = []   # (dict, name)
        self.objects = []   # fixed objects (bound self, partial args)
        self._seen = set()
        self._visit(fn, 0)

    def _visit(self, f, depth):
        if id(f) in self._seen or depth > _MAX_DEPTH:
            return
        self._seen.add(id(f))
        if isinstance(f, types.MethodType):
            self.objects.append(f.__self__)
            f = f.__func__
        if isinstance(f, functools.partial):
            self.objects.extend(f.args)
            self.objects.extend(f.keywords.values())
            return self._visit(f.func, depth)
        if not isinstance(f, types.FunctionType):
            self.objects.append(f)
            return
        if f.__closure__:
            for cell in f.__closure__:
                self.cells.append((cell, depth))
                try:
                    v = cell.cell_contents
                except ValueError:
                    continue
                self._follow(v, depth)
        names = set()
        _code_names(f.__code__, names, set())
        g = f.__globals__
        for n in sorted(names):
            self.globals.append((g, n, depth))
            if n in g:
                self._follow(g[n], depth)

    def _follow(self, v, depth):
        if isinstance(v, CompiledFunction):  # a compiled helper: its state is ours too
            v = v._fn
        if isinstance(v, (types.FunctionType, types.MethodType, functools.partial)) and \
                _user_function(getattr(v, "__func__", getattr(v, "func", v))):
            self._visit(v, depth + 1)

    def values(self):
        out = list(self.objects)
        for cell, depth in self.cells:
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            out.append(v)
            if id(v) not in self._seen:
                self._follow(v, depth)
        i = 0
        while i < len(self.globals):  # helpers bound after decoration are followed now
            g, n, depth = self.globals[i]
            v = g.get(n)
            if v is not None:
                out.append(v)
                if id(v) not in self._seen:
                    self._follow(v, depth)
            i += 1
        return out


_NOT_STATE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType,
              str, bytes, int, float, bool, type(None))


_OPAQUE = (types.ModuleType, type, types.FunctionType, types.MethodType, functools.partial,
           jax.Array, np.ndarray, np.generic)


_MAX_ITEMS = 4096


def _maybe_state(v, module_cls):
    return isinstance(v, (Tensor, list, tuple, dict)) or _is_optimizer(v) or (
        module_cls is not None and isinstance(v, module_cls))


class _State:
    """The state one call of a step reads and may write: Tensors (with their ``.grad``),
    Modules, optimizers."""

    __slots__ = ("tensors", "tensor_ids", "modules", "module_ids", "optimizers", "opt_ids")

    def __init__(self):
        self.tensors = []
        self.tensor_ids = {}
        self.modules = []
        self.module_ids = set()
        self.optimizers = []
        self.opt_ids = set()

    def add_tensor(self, t):
        if id(t) not in self.tensor_ids:
            self.tensor_ids[id(t)] = len(self.tensors)
            self.tensors.append(t)

    def walk(self, obj, module_cls, depth=0):
        if isinstance(obj, _NOT_STATE):
            return
        if isinstance(obj, Tensor):
            self.add_tensor(obj)
        elif module_cls is not None and isinstance(obj, module_cls):
            self._walk_module(obj)
        elif _is_optimizer(obj):
            if id(obj) not in self.opt_ids:
                self.opt_ids.add(id(obj))
                self.optimizers.append(obj)
                for g in obj.param_groups:
                    for p in g["params"]:
                        self.add_tensor(p)
        elif depth < 3 and isinstance(obj, (list, tuple)):
            # a container of state (a parameter list, a dict of models) is walked; one
            # whose first item is not state (a list of logged losses) is not
            if obj and _maybe_state(obj[0], module_cls) and len(obj) <= _MAX_ITEMS:
                for v in obj:
                    self.walk(v, module_cls, depth + 1)
        elif depth < 3 and isinstance(obj, dict):
            if obj and len(obj) <= _MAX_ITEMS and _maybe_state(next(iter(obj.values())),
                                                               module_cls):
                for v in obj.values():
                    self.walk(v, module_cls, depth + 1)
        elif depth < 2 and not isinstance(obj, _OPAQUE):
            # a trainer object, an LR scheduler: the Modules/optimizers/Tensors it holds
            d = getattr(obj, "__dict__", None)
            if type(d) is dict and len(d) < 1000:
                for v in list(d.values()):
                    if isinstance(v, (Tensor, list, tuple, dict)) or _is_optimizer(v) or (
                            module_cls is not None and isinstance(v, module_cls)) or (
                            hasattr(v, "__dict__") and not isinstance(v, _OPAQUE)):
                        self.walk(v, module_cls, depth + 1)

    def _walk_module(self, m):
        stack = [m]
        while stack:
            mod = stack.pop()
            if id(mod) in self.module_ids:
                continue
            self.module_ids.add(id(mod))
            self.modules.append(mod)
            for p in mod._parameters.values():
                if p is not None:
                    self.add_tensor(p)
            for b in mod._buffers.values():
                if b is not None:
                    self.add_tensor(b)
            stack.extend(c for c in reversed(mod._modules.values()) if c is not None)


# --------------------------------------------------------------------------- cache keys

_hook_attr_cache = {}


def _module_hook_attrs(m):
    cls = type(m)
    names = _hook_attr_cache.get(cls)
    if names is None:
        names = tuple(k for k, v in m.__dict__.items() if "hook" in k and isinstance(v, dict))
        _hook_attr_cache[cls] = names
    return names


def _dict_key(d):
    return tuple(d) if d else ()


def _node_key(node):
    if node is None:
        return _NO_HOOKS
    return (_dict_key(node._pre_hooks), _dict_key(node._post_hooks),
            tuple((nr, tuple(h)) for nr, h in node._tensor_pre_hooks.items() if h)
            if node._tensor_pre_hooks else ())


_NO_HOOKS = ((), (), ())
_global_dicts = None


def _global_hook_dicts():
    global _global_dicts
    mod = sys.modules.get("hookgrad.nn.modules._global_hooks")
    if mod is None:
        return ()
    if _global_dicts is None:
        _global_dicts = tuple(v for k, v in sorted(vars(mod).items())
                              if "hook" in k and isinstance(v, dict))
    return _global_dicts


def _aval_key(arr):
    return (arr.shape, arr.dtype, getattr(arr, "weak_type", False))


# --------------------------------------------------------------------------- optimizers


def _opt_tree(opt):
    """The optimizer's array state (``Optimizer._state_arrays()``: ``{"state", "hparams"}``)
    as (tree, leaves, treedef), leaves as arrays."""
    get = getattr(opt, "_state_arrays", None)
    if get is None:
        return None, [], jax.tree_util.tree_structure(None)
    tree = get()
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    for i, v in enumerate(leaves):
        if not isinstance(v, (jax.Array, np.ndarray)):
            leaves[i] = jax.numpy.asarray(v)
            tree = None
    if tree is None:
        tree = jax.tree_util.tree_unflatten(treedef, leaves)
    return tree, leaves, treedef


def _opt_static_key(opt, tree):
    """Options read as Python values at trace time (those not fed as ``hparams``)."""
    hps = tree.get("hparams") if isinstance(tree, dict) else None
    out = [type(opt)]
    for gi, g in enumerate(opt.param_groups):
        dyn = hps[gi] if isinstance(hps, (list, tuple)) and gi < len(hps) and \
            isinstance(hps[gi], dict) else {}
        items = []
        for k, v in g.items():
            if k in ("params", "param_names") or k in dyn:
                continue
            try:
                hash(v)
                items.append((k, v))
            except TypeError:
                items.append((k, id(v)))
        out.append((len(g["params"]), tuple(items)))
    return tuple(out)


def _opt_load(opt, tree):
    load = getattr(opt, "_load_state_arrays", None)
    if load is not None:
        load(tree)


def _state_part(tree):
    return tree["state"] if isinstance(tree, dict) and "state" in tree else tree


# --------------------------------------------------------------------------- the compiled step


class _Entry:
    """One traced and compiled program, with how to write its outputs back."""

    __slots__ = ("exe", "exe_plain", "fn", "donated", "data_out", "grad_out", "grad_none", "grad_new", "versions",
                 "opt_out", "opt_state_in", "key_out", "key_in", "user_spec", "user_build", "n_out", "jaxpr",
                 "hp_in")


class CompiledFunction:
    """The callable ``hookgrad.compile(fn)`` returns.

    Attributes:
        trace_count: how many times the step was traced (one per distinct cache key).

    Methods ``lower(*args, **kwargs)`` (the ``jax.stages.Lowered`` program for these
    arguments: ``.as_text()`` prints its StableHLO), ``cost_analysis(*args, **kwargs)`` and
    ``jaxpr(*args, **kwargs)`` inspect what runs; ``cache_clear()`` drops the programs.
    """

    def __init__(self, fn, *, donate=None, disable=False):
        self._fn = fn
        self._roots = _Roots(fn)
        self._cache = {}
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

    # ---- the call
    def __call__(self, *args, **kwargs):
        if self._disable or _mode.state.compiling or _mode.state.functional:
            # nested in another compiled step or a functional call: inline
            return self._fn(*args, **kwargs)
        plan = self._plan(args, kwargs)
        if plan is None:  # an outer JAX trace is running: just trace through
            return self._fn(*args, **kwargs)
        entry = self._cache.get(plan.key)
        if entry is None:
            entry = self._trace(plan, args, kwargs)
        return self._run(entry, plan)

    def lower(self, *args, **kwargs):
        """The lowered XLA program this call would run (``.as_text()``, ``.compile()``)."""
        plan = self._plan(args, kwargs)
        entry = self._cache.get(plan.key) or self._trace(plan, args, kwargs)
        flat = plan.flat + [jax.random.key_data(plan.rng)] if entry.key_in else plan.flat
        return entry.exe.lower(*flat)

    def cost_analysis(self, *args, **kwargs):
        """XLA's cost analysis (flops, bytes accessed) of the program for these arguments."""
        return self.lower(*args, **kwargs).compile().cost_analysis()

    def jaxpr(self, *args, **kwargs):
        """The traced program (a ``ClosedJaxpr``) for these arguments."""
        plan = self._plan(args, kwargs)
        entry = self._cache.get(plan.key) or self._trace(plan, args, kwargs)
        return entry.jaxpr

    # ---- planning: what is state, what the cache key is
    def _plan(self, args, kwargs):
        module_cls = _module_cls()
        st = _State()
        for v in self._roots.values():
            st.walk(v, module_cls)
        arg_leaves, rebuild = _flatten_containers((args, kwargs))
        arg_only = {}
        arg_slots = []   # per leaf: ("t", tensor index) | ("a", flat index) | ("s", value)
        static_key = []
        for v in arg_leaves:
            if isinstance(v, Tensor):
                if id(v) not in st.tensor_ids:
                    arg_only[id(v)] = len(arg_only)  # keyed by position, not identity
                st.add_tensor(v)
                arg_slots.append(("t", st.tensor_ids[id(v)]))
                static_key.append(("T", st.tensor_ids[id(v)]))
            elif isinstance(v, (jax.Array, np.ndarray, np.generic)):
                arg_slots.append(("a", None))
                static_key.append(_aval_key(v) if not isinstance(v, np.ndarray)
                                  else (v.shape, v.dtype, False))
            elif module_cls is not None and isinstance(v, module_cls) or _is_optimizer(v):
                st.walk(v, module_cls)
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
        key = [tuple(static_key), _gm.enabled,
               tuple((id(p), id(u)) for p, u in _saved_state.stack),
               _saved_state.disabled_message, id(_saved_state.mutation_ctx)]
        grads_in = []
        for i, t in enumerate(st.tensors):
            arr = t._data
            if isinstance(arr, _Tracer):
                return None
            flat.append(arr)
            g = t._grad
            if g is not None:
                flat.append(g._data)
                grads_in.append(i)
                gk = _aval_key(g._data)
            else:
                gk = None
            acc = t._acc
            tid = id(t)
            key.append((("arg", arg_only[tid]) if tid in arg_only else tid, _aval_key(arr),
                        t._requires_grad, t.grad_fn is None, gk,
                        _dict_key(t._backward_hooks), _dict_key(t._post_acc_hooks),
                        _node_key(acc), t._retains_grad))
        for m in st.modules:
            key.append((id(m), m.training,
                        tuple(_dict_key(m.__dict__.get(a)) for a in _module_hook_attrs(m))))
        key.append(tuple(_dict_key(d) for d in _global_hook_dicts()))
        opt_trees = []
        for opt in st.optimizers:
            tree, leaves, treedef = _opt_tree(opt)
            opt_trees.append((len(flat), len(leaves), treedef, tree))
            flat.extend(leaves)
            key.append((id(opt), _opt_static_key(opt, tree), treedef,
                        tuple(_aval_key(x) for x in leaves)))
        rng = _random._state["key"]
        if rng is None:
            rng = _random._state["key"] = jax.random.key(_random._state["seed"])
        key.append(rng.dtype)
        arg_pos = []
        for v, slot in zip(arg_leaves, arg_slots):
            if slot[0] == "a":
                arg_pos.append(len(flat))
                flat.append(v)
        plan = _Plan()
        plan.key = tuple(key)
        plan.flat = flat
        plan.state = st
        plan.grads_in = grads_in
        plan.opt_trees = opt_trees
        plan.rng = rng
        plan.arg_leaves = arg_leaves
        plan.arg_slots = arg_slots
        plan.arg_pos = arg_pos
        plan.rebuild = rebuild
        return plan

    # ---- tracing
    def _trace(self, plan, args, kwargs):
        st = plan.state
        tensors = st.tensors
        entry = _Entry()
        # snapshot what tracing overwrites, to restore it afterwards
        saved = [(t._data, t._grad, t._version, t.grad_fn, t._output_nr, t._requires_grad,
                  (t._grad._data, t._grad._version) if t._grad is not None else None)
                 for t in tensors]
        mod_slots = [(m, dict(m._parameters), dict(m._buffers)) for m in st.modules]
        opt_saved = [(opt, tree) for opt, (_, _, _, tree) in zip(st.optimizers, plan.opt_trees)]
        rng_saved = _random._state["key"]
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
                tree = jax.tree_util.tree_unflatten(treedef, leaves)
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
            _random._state["key"] = key_in
            a, k = plan.rebuild(leaves)
            with _mode.compiling_mode():
                result = self._fn(*a, **k)
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
            key_now = _random._state["key"]
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
            entry.data_out, entry.grad_out = data_out, grad_out
            entry.grad_none, entry.grad_new, entry.versions = grad_none, grad_new, versions
            entry.opt_out = opt_out
            entry.user_spec, entry.user_build = uspec, ubuild
            entry.n_out = len(outs)
            return outs

        try:
            traced = jax.jit(body).trace(*plan.flat, jax.random.key_data(plan.rng))
        finally:
            for t, (data, grad, ver, gfn, onr, rg, gsave) in zip(tensors, saved):
                t._data, t._version, t.grad_fn, t._output_nr = data, ver, gfn, onr
                t._requires_grad = rg
                t._grad = grad
                if gsave is not None:
                    grad._data, grad._version = gsave
            for m, params, bufs in mod_slots:
                m._parameters.update(params)
                m._buffers.update(bufs)
            for opt, tree in opt_saved:
                if tree is not None:
                    _opt_load(opt, tree)
            _random._state["key"] = rng_saved
        self.trace_count += 1
        entry.jaxpr = traced.jaxpr
        donated = ()
        donate = self._donate
        if donate is None:  # on CPU, measured slower (the buffers are cheap to allocate)
            donate = jax.default_backend() != "cpu"
        if donate:
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
            donated = tuple(sorted(changed))
        fn = _jex.jaxpr_as_fun(traced.jaxpr)
        jaxpr = traced.jaxpr.jaxpr
        entry.key_in = entry.key_out is not None or _uses_last_input(jaxpr)
        if not entry.key_in:  # the step draws no randomness: the key is not passed
            full, shape = fn, jaxpr.invars[-1].aval

            def fn(*xs):
                return full(*xs, jax.numpy.zeros(shape.shape, shape.dtype))
        entry.fn = fn
        entry.donated = donated
        entry.exe = jax.jit(fn, donate_argnums=donated) if donated else jax.jit(fn)
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
                        exe = entry.exe_plain = jax.jit(entry.fn)
                    break
        res = exe(*flat)
        del flat
        tensors = plan.state.tensors
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
        for opt, (_, _, _, tree), (treedef, spec) in zip(plan.state.optimizers, plan.opt_trees,
                                                          entry.opt_out):
            leaves = [plan.flat[j] if kind == "in" else res[j] for kind, j in spec]
            new = jax.tree_util.tree_unflatten(treedef, leaves)
            if isinstance(tree, dict) and "state" in tree:
                new = dict(tree, state=new)
            _opt_load(opt, new)
        if entry.key_out is not None:
            data = res[entry.key_out]
            new_key = jax.random.wrap_key_data(data, impl=_key_impl(plan.rng))
            _random._state["key"] = new_key
            self._key_data = (new_key, data)
        out = []
        for s in entry.user_spec:
            if s[0] == "T":
                out.append(s[2]._wrap(res[s[1]]) if s[2] is Tensor else _wrap_as(s[2], res[s[1]]))
            elif s[0] == "A":
                out.append(res[s[1]])
            else:
                out.append(s[1])
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


class _Plan:
    __slots__ = ("key", "flat", "state", "grads_in", "opt_trees", "rng",
                 "arg_leaves", "arg_slots", "arg_pos", "rebuild")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="xla", mode=None,
            options=None, disable=False, donate=None):
    """Compile an eager-style step (forward, ``backward()``, optimizer step) with XLA.

    ::

        hookgrad.compile(model=None, *, fullgraph=False, dynamic=None, backend="xla",
                         mode=None, options=None, disable=False, donate=None)

    Use it as a decorator (``@hookgrad.compile`` or ``@hookgrad.compile(...)``) or call it
    on a function or a Module. The step may close over Modules, optimizers and Tensors:
    their parameters, buffers, ``.grad``, optimizer state and the global PRNG key are
    inputs and outputs of the compiled program, written back after every call. It is
    retraced on new shapes/dtypes, hooks added or removed, ``train()``/``eval()``
    changes and ``.grad`` appearing or disappearing.

    ``fullgraph``, ``dynamic``, ``backend``, ``mode`` and ``options`` are accepted for
    PyTorch compatibility (the whole step is always one XLA program: there are no graph
    breaks). ``donate``: let XLA reuse the buffers of the state the step replaces
    (default: on non-CPU backends).

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
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic,
                                 backend=backend, mode=mode, options=options, disable=disable,
                                 donate=donate)
    module_cls = _module_cls()
    if module_cls is not None and isinstance(model, module_cls):
        mod = model

        def call(*args, **kwargs):
            return mod(*args, **kwargs)
        call.__name__ = type(mod).__name__
        return CompiledFunction(call, donate=donate, disable=disable)
    if not callable(model):
        raise RuntimeError("compile() expects a callable (a function or a Module), got "
                           f"{type(model).__name__}")
    return CompiledFunction(model, donate=donate, disable=disable)


class _CallableModule(types.ModuleType):
    """``hookgrad.compile`` is both this module and the ``compile`` function."""

    def __call__(self, *args, **kwargs):
        return compile(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
# the function carries the same names, for code holding ``from hookgrad.compile import compile``
compile.host_hook = host_hook
compile.is_host_hook = is_host_hook
compile.TracedValueError = TracedValueError
