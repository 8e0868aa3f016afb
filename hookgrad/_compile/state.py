"""What a compiled step reads and writes: finding its state and keying its programs.

``hookgrad.compile`` lifts the Tensors, Modules and optimizers a step can reach (closure,
the globals its code names, bound ``self``, ``functools.partial`` arguments, followed
into helper functions) into the compiled program; the cache key of a program is built
here from their shapes, dtypes, hooks and flags.
"""
import dis
import functools
import operator
import sys
import types

import jax
import numpy as np

from .. import _watch
from .._tensor import Tensor
from .._autograd.anomaly_mode import _state as _anomaly
from .._autograd.hooks import NODE_KEYED, TENSOR_KEYED, hook_ids as _dict_key
from .._watch import WATCHED

_SKIP_MODULES = ("hookgrad", "jax", "jaxlib", "numpy", "optax", "torch", "builtins",
                 "functools", "collections", "typing")
_MAX_DEPTH = 4


# NOTE: compiling a Module (``hookgrad.compile(model)``, ``Module.compile()``) is done by
# ``hookgrad.nn._optimized_module``, whose OptimizedModule subclasses Module, above this
# package: importing ``hookgrad.nn`` (as making any Module does) fills these slots.
MODULE_COMPILE = {"new": None, "in_place": None}


def _module_cls():
    nn = sys.modules.get("hookgrad.nn.modules.module")
    return nn.Module if nn is not None else None


def _is_optimizer(obj):
    return hasattr(obj, "param_groups") and hasattr(obj, "state") and hasattr(obj, "step")


def _user_function(f):
    mod = getattr(f, "__module__", None) or ""
    return not mod.split(".")[0] in _SKIP_MODULES


# the opcodes that name a global (``co_names`` also holds attribute and import names)
_GLOBAL_OPS = frozenset(("LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_NAME",
                         "LOAD_FROM_DICT_OR_GLOBALS"))


def _code_names(code, out, seen):
    if code in seen:
        return
    seen.add(code)
    out.update(_global_names(code))
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _code_names(c, out, seen)


@functools.lru_cache(maxsize=4096)
def _global_names(code):
    # NOTE: cached by the code's value (code objects compare by their contents): decoding
    # the bytecode of every helper a step reaches is most of finding its state, and a
    # source run again (a notebook cell, a generated program) has equal code
    return frozenset(i.argval for i in dis.get_instructions(code) if i.opname in _GLOBAL_OPS)


class _Roots:
    """Where a step's state is read from: closure cells, globals its code names, default
    argument values, bound ``self`` and ``functools.partial`` arguments, followed into user
    helper functions.
    Globals are read at each call (a model defined after the decorated step is found)."""

    def __init__(self, fn):
        self.cells = []     # cell objects
        self.globals = []   # (dict, name)
        self.objects = []   # fixed objects (bound self, partial args)
        self._seen = set()
        self._ids = self._vals = self._reader = None
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
        # default argument values (def step(x, model=model)) are read like closure cells
        self.objects.extend(f.__defaults__ or ())
        self.objects.extend((f.__kwdefaults__ or {}).values())
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
        if getattr(type(v), "_is_compiled_function", False):  # a compiled helper
            v = v._fn
        if isinstance(v, (types.FunctionType, types.MethodType, functools.partial)) and \
                _user_function(getattr(v, "__func__", getattr(v, "func", v))):
            self._visit(v, depth + 1)

    def values(self):
        """The roots' values now (None for an unbound global or an empty cell) and their
        ids. Helpers bound since the last call are followed first."""
        vals = self._read()
        ids = list(map(id, vals))
        if ids != self._ids:
            size = len(vals)
            depths = [d for _, d in self.cells] + [d for _, _, d in self.globals]
            for v, depth in zip(vals[len(self.objects):], depths):
                if id(v) not in self._seen:
                    self._follow(v, depth)
            if len(self.objects) + len(self.cells) + len(self.globals) != size:
                vals = self._read()   # a helper added its roots
                ids = list(map(id, vals))
            self._ids, self._vals = ids, vals   # held, so the ids compared stay theirs
        return vals, ids

    def held(self):
        """The values :meth:`values` last returned (held: their ids stay theirs)."""
        return self._vals

    def _read(self):
        reader = self._reader
        if reader is None or reader[0] != len(self.cells) + len(self.globals):
            # the read as C-level maps (each call of a compiled step does it)
            reader = self._reader = (len(self.cells) + len(self.globals),
                                     [c for c, _ in self.cells],
                                     [g for g, _, _ in self.globals],
                                     [n for _, n, _ in self.globals])
        _, cell_objs, dicts, names = reader
        try:   # one list, built in C
            return [*self.objects, *map(_CONTENTS, cell_objs), *map(dict.get, dicts, names)]
        except ValueError:   # an empty cell: a name the enclosing scope binds later
            return [*self.objects, *map(_cell_value, cell_objs), *map(dict.get, dicts, names)]


_CONTENTS = operator.attrgetter("cell_contents")


def code_of(v):
    """What of a root value decides the code a step runs: a function's code object (a
    bound method's, a ``functools.partial``'s, a compiled helper's), a builtin or a class
    itself; None for anything else (state, plain values: found and guarded elsewhere).

    NOTE: part of a program's key, so a helper or builtin rebound between calls (a global
    ``abs`` shadowing the builtin, a notebook cell defining ``helper`` anew with other
    code) traces a program of its own, as Dynamo guards the functions a frame calls;
    code objects compare by content, so a cell re-run with the same code finds its
    program again."""
    t = type(v)
    if t is types.FunctionType:
        return v.__code__
    if t is types.MethodType:
        return code_of(v.__func__)
    if t is functools.partial:
        return code_of(v.func)
    if getattr(t, "_is_compiled_function", False):
        return code_of(v._fn)
    if t is types.BuiltinFunctionType or isinstance(v, type):
        return v
    return None


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:
        return None


_NOT_STATE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType,
              str, bytes, int, float, bool, type(None))


_OPAQUE = (types.ModuleType, type, types.FunctionType, types.MethodType, functools.partial,
           jax.Array, np.ndarray, np.generic)


_MAX_ITEMS = 4096
# the attribute holding a Module's sharding (``hookgrad._compile.sharding.MODULE_ATTR``)
SHARDING_ATTR = "_compile_sharding"


def _maybe_state(v, module_cls):
    return isinstance(v, (Tensor, list, tuple, dict)) or _is_optimizer(v) or (
        module_cls is not None and isinstance(v, module_cls))


class _State:
    """The state one call of a step reads and may write: Tensors (with their ``.grad``),
    Modules, optimizers; and the guards under which a later call may reuse this walk."""

    __slots__ = ("tensors", "tensor_ids", "modules", "module_ids", "optimizers", "opt_ids",
                 "guards", "watched", "layouts", "skip")

    def __init__(self, skip=()):
        self.skip = skip   # ids of lists the step only appends to (``_compile.after_run``)
        self.tensors = []
        self.tensor_ids = {}
        self.modules = []
        self.module_ids = set()
        self.optimizers = []
        self.opt_ids = set()
        # (snapshot function, object): the walk saw these containers as they snapshot now;
        # ``watched``: those that change only with the counter of ``hookgrad._watch``
        self.guards = []
        self.watched = []
        # ``layouts``: the Tensors an optimizer's groups list, where each list counts its
        # changes: a re-run call reads them with the groups' other options (``replay``)
        self.layouts = []

    def copy(self, deep=True):
        """A copy to add to; ``deep=False`` shares all but the Tensors (for Tensors passed
        as arguments)."""
        new = _State.__new__(_State)
        new.skip = self.skip
        new.tensors, new.tensor_ids = list(self.tensors), dict(self.tensor_ids)
        if deep:
            new.modules, new.module_ids = list(self.modules), set(self.module_ids)
            new.optimizers, new.opt_ids = list(self.optimizers), set(self.opt_ids)
            new.guards, new.watched = list(self.guards), list(self.watched)
            new.layouts = list(self.layouts)
        else:
            new.modules, new.module_ids = self.modules, self.module_ids
            new.optimizers, new.opt_ids = self.optimizers, self.opt_ids
            new.guards, new.watched, new.layouts = self.guards, self.watched, self.layouts
        return new

    def guard_groups(self, guards):
        """``guards`` (``self.guards``, ``.watched`` or ``.layouts``) grouped by snapshot
        function, for :func:`_snapshot`."""
        groups = {}
        for f, obj in guards:
            groups.setdefault(f, []).append(obj)
        # a hook dict's keys, ``_dict_key``, are ``tuple(d)``: the same snapshot taken in C
        return [(tuple if f is _dict_key else f, objs) for f, objs in groups.items()]

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
                counted = all(type(g["params"]) in WATCHED for g in obj.param_groups)
                (self.layouts if counted else self.guards).append((_param_layout, obj))
                for g in obj.param_groups:
                    for p in g["params"]:
                        self.add_tensor(p)
        elif id(obj) in self.skip:   # what the step appends there is not its state
            return
        elif depth < 3 and isinstance(obj, (list, tuple)):
            # a container of state (a parameter list, a dict of models) is walked; one
            # whose first item is not state (a list of logged losses) is not
            if obj and _maybe_state(obj[0], module_cls) and len(obj) <= _MAX_ITEMS:
                if type(obj) is not tuple:
                    self.guards.append((_ids, obj))
                for v in obj:
                    self.walk(v, module_cls, depth + 1)
            elif type(obj) is not tuple:
                self.guards.append((_first, obj))
        elif depth < 3 and isinstance(obj, dict):
            if obj and len(obj) <= _MAX_ITEMS and _maybe_state(next(iter(obj.values())),
                                                               module_cls):
                self.guards.append((_value_ids, obj))
                for v in obj.values():
                    self.walk(v, module_cls, depth + 1)
            else:
                self.guards.append((_first_value, obj))
        elif depth < 2 and not isinstance(obj, _OPAQUE) and \
                not getattr(type(obj), "_is_compiled_function", False):
            # a trainer object, an LR scheduler: the Modules/optimizers/Tensors it holds
            # (not a compiled step: a step named ``step`` names itself, as in ``opt.step()``;
            # a compiled helper's roots are the step's, ``_Roots``)
            d = getattr(obj, "__dict__", None)
            if type(d) is dict and len(d) < 1000:
                self.guards.append((_attr_ids, d))
                for v in _holdings_of(d):
                    self.walk(v, module_cls, depth + 1)

    def _walk_module(self, m):
        stack = [m]
        while stack:
            mod = stack.pop()
            if id(mod) in self.module_ids:
                continue
            self.module_ids.add(id(mod))
            self.modules.append(mod)
            d = mod.__dict__
            # attributes rebound (``training``, a hook dict replaced), slots re-pointed
            # (``model._modules["fc"] = new``) and hooks added or removed; what changes
            # only through counting dicts and ``Module.__setattr__`` is watched by the
            # counter of ``hookgrad._watch``
            own_setattr = type(mod).__setattr__ is not _module_setattr()
            self._guard(_module_attrs, mod, own_setattr)
            for slots in (mod._parameters, mod._buffers, mod._modules):
                self._guard(_value_ids, slots, type(slots) not in WATCHED)
            for a in _module_hook_attrs(mod):
                hooks = d.get(a)
                if hooks is not None:
                    self._guard(_dict_key, hooks, type(hooks) not in WATCHED)
            for p in mod._parameters.values():
                if p is not None:
                    self.add_tensor(p)
            for b in mod._buffers.values():
                if b is not None:
                    self.add_tensor(b)
            stack.extend(c for c in reversed(mod._modules.values()) if c is not None)

    def _guard(self, f, obj, unwatched=True):
        (self.guards if unwatched else self.watched).append((f, obj))


def _module_setattr():
    return sys.modules["hookgrad.nn.modules.module"].Module.__setattr__


# --------------------------------------------------------------------------- guards
# Snapshot functions: a cached walk is reused while every guard's snapshot is unchanged.


def _snapshot(groups):
    return [list(map(f, objs)) for f, objs in groups]


class _Walk:
    """A walk of a step's roots (``state``, and the part of the cache key read from its
    Modules and the global hooks) with the guards under which it still describes them."""

    __slots__ = ("root_ids", "state", "module_key", "epoch", "unwatched", "snap",
                 "precise", "watched", "snap_watched", "layouts", "snap_layouts")

    def __init__(self, root_ids, state, module_key, epoch):
        self.root_ids, self.state, self.module_key, self.epoch = \
            root_ids, state, module_key, epoch
        self.unwatched = state.guard_groups(state.guards)
        self.snap = _snapshot(self.unwatched)
        self.precise = [list(map(_holdings, objs)) if f is _attr_ids else None
                        for f, objs in self.unwatched]
        self.watched = state.guard_groups(state.watched)
        self.snap_watched = _snapshot(self.watched)
        self.layouts = state.guard_groups(state.layouts)
        self.snap_layouts = _snapshot(self.layouts)

    def holds(self, root_ids):
        """Whether nothing the walk read has changed, the roots being ``root_ids`` now."""
        if root_ids != self.root_ids:
            return False
        snap = _snapshot(self.unwatched)
        if snap != self.snap:
            # an object's attributes are compared by id, then, where they differ, again
            # without its plain values: a counter it bumps each step does not void the walk
            for (f, objs), now, before, precise in zip(self.unwatched, snap, self.snap,
                                                       self.precise):
                if now != before and (precise is None or list(map(_holdings, objs)) != precise):
                    return False
            self.snap = snap
        if self.layouts and _snapshot(self.layouts) != self.snap_layouts:
            return False
        now = _watch.epoch()
        if now != self.epoch:
            if _snapshot(self.watched) != self.snap_watched:
                return False
            self.epoch = now
        return True


def _module_attrs(mod):
    """What the walk and the module key read from a Module's ``__dict__``: ``training`` and
    which slot dicts, hook dicts and sharding it holds. Other attributes (a hook's record
    of an activation, a counter) are not read: setting them keeps the walk."""
    d = mod.__dict__
    return (d.get("training"), id(d.get("_parameters")), id(d.get("_buffers")),
            id(d.get("_modules")), id(d.get(SHARDING_ATTR)),
            tuple([id(d.get(a)) for a in _module_hook_attrs(mod)]))


def _ids(seq):
    return tuple(map(id, seq))


def _value_ids(d):
    return tuple(map(id, d.values()))


def _first(seq):
    return (id(seq[0]), len(seq) <= _MAX_ITEMS) if seq else None


def _first_value(d):
    return (id(next(iter(d.values()))), len(d) <= _MAX_ITEMS) if d else None


def _param_layout(opt):
    # the Tensors each param group lists, in order: what the walk took from ``opt`` (ids
    # of Tensors the walk holds; which list or dict lists them does not change the walk)
    return [tuple(map(id, g["params"])) for g in opt.param_groups]


def _is_holding(v):
    # cheapest tests first: ``hasattr`` on a Module goes through its ``__getattr__``
    if isinstance(v, (Tensor, list, tuple, dict)):
        return True
    if isinstance(v, _OPAQUE) or isinstance(v, _NOT_STATE):
        return False
    return hasattr(v, "__dict__") or _is_optimizer(v)


def _holdings_of(d):
    # what an object's attributes may hold state through (Modules have a ``__dict__``)
    return [v for v in list(d.values()) if _is_holding(v)]


_PLAIN = frozenset((int, float, bool, str, bytes, type(None)))


def _attr_ids(d):
    return tuple(map(id, d.values()))


def _holdings(d):
    # ``_attr_ids`` without the plain values (see ``_Walk.holds``)
    return tuple([id(v) for v in d.values() if type(v) not in _PLAIN])


# --------------------------------------------------------------------------- cache keys

_hook_attr_cache = {}


def _module_hook_attrs(m):
    cls = type(m)
    names = _hook_attr_cache.get(cls)
    if names is None:
        names = tuple(k for k, v in m.__dict__.items() if isinstance(v, dict) and _step_hooks(k))
        _hook_attr_cache[cls] = names
    return names


def _step_hooks(name):
    """Whether a hook dict named ``name`` holds hooks a step's forward or backward runs.
    The ``_with_kwargs``/``_always_called`` dicts flag ids of ``_forward[_pre]_hooks``
    (a flag changes only with a new registration, a new id); state-dict and registration
    hooks do not run in a step."""
    return "hook" in name and ("forward" in name or "backward" in name) and not \
        name.endswith(("_with_kwargs", "_always_called"))


_NODE_HOOKS = operator.attrgetter(*(k.node_attr for k in NODE_KEYED))
_NODE_KEYS = tuple(k.node_key for k in NODE_KEYED)


def _node_key(node):
    """The hooks of ``node`` a compiled step's program depends on: a key per kind the
    hook table (``_autograd.hooks.KINDS``) keys on the node."""
    if node is None:
        return _NO_HOOKS
    dicts = _NODE_HOOKS(node)
    if not any(dicts):
        return _NO_HOOKS
    return tuple(key(d) for key, d in zip(_NODE_KEYS, dicts))


_NO_HOOKS = ((),) * len(NODE_KEYED)
_global_dicts = None


def _global_hook_dicts():
    global _global_dicts
    mod = sys.modules.get("hookgrad.nn.modules._global_hooks")
    if mod is None:
        return ()
    if _global_dicts is None:
        _global_dicts = tuple(v for k, v in sorted(vars(mod).items())
                              if isinstance(v, dict) and _step_hooks(k))
    return _global_dicts


def _tensor_key(t, ident):
    """What a program traced with ``t`` as an input depends on: its array's shape and
    dtype, its flags, hooks and ``.grad``'s shape; ``ident`` says which input it is."""
    g = t._grad
    return (ident, _aval_of(t._data), t._requires_grad, t.grad_fn is None,
            None if g is None else _aval_of(g._data), *_tensor_hooks(t))


# ``_tensor_key``'s hook entries: a key per kind the hook table keys on the Tensor, then
# its AccumulateGrad node's
_KEY_HOOKS = slice(5, None)
_TENSOR_HOOKS = operator.attrgetter(*(k.tensor_attr for k in TENSOR_KEYED))
_TENSOR_KEYS = tuple(k.tensor_key for k in TENSOR_KEYED)
# those of a Tensor without hooks (the class's defaults)
PLAIN_HOOKS = (*(key(v) for key, v in zip(_TENSOR_KEYS, _TENSOR_HOOKS(Tensor))), _NO_HOOKS)
# where a plan's key (``CompiledFunction._plan``) has its first ``_tensor_key``: after the
# arguments' static part, the context key and the module key
_KEY_TENSORS = 3


def _tensor_hooks(t):
    """``_tensor_key(t, ...)[_KEY_HOOKS]``."""
    return (*(key(v) for key, v in zip(_TENSOR_KEYS, _TENSOR_HOOKS(t))), _node_key(t._acc))


def _context_key(grad_enabled, saved):
    """Grad mode, the saved-tensor hooks in force (``saved``: their state object) and
    anomaly mode (a program traced with it on carries its NaN checks)."""
    hooks = _Same(f for pair in saved.stack for f in pair) if saved.stack else ()
    ctx = None if saved.mutation_ctx is None else _Same((saved.mutation_ctx,))
    return (grad_enabled, hooks, saved.disabled_message, ctx, _anomaly.enabled,
            _anomaly.check_nan)


class _Same:
    """Objects in a key, compared and hashed by identity, and held by it: a key of bare
    ``id()``s would match a new hook created at a freed one's address."""

    __slots__ = ("objs", "ids")

    def __init__(self, objs):
        self.objs = tuple(objs)
        self.ids = tuple(map(id, self.objs))

    def __eq__(self, other):
        return type(other) is _Same and other.ids == self.ids

    def __hash__(self):
        return hash(self.ids)


def _arg_array_key(v):
    """The key of an array passed as an argument (a jax.Array or NumPy value)."""
    return (v.shape, v.dtype, False) if isinstance(v, np.ndarray) else _aval_key(v)


def _aval_key(arr):
    return (arr.shape, arr.dtype, getattr(arr, "weak_type", False))


def _aval_of(arr):
    """A jax.Array's cached aval (shape, dtype, weak type), or its ``_aval_key``."""
    try:
        return arr.aval
    except AttributeError:
        return _aval_key(arr)


# --------------------------------------------------------------------------- optimizers


def _opt_tree(opt):
    """The optimizer's array state (``Optimizer._state_arrays()``: ``{"state", "hparams"}``)
    as (tree, leaves, treedef), leaves as arrays; :func:`_opt_install` installs such leaves.

    An optimizer that can hold its state flat (``_load_flat_state``/``_flat_state``) gets a
    :class:`_Split` treedef, and while it holds the state as the last compiled call left
    it (for the parameters its groups still list, in order), the state is not rebuilt nor
    flattened again (``tree`` then has the hyper-parameters only)."""
    flat_state = getattr(opt, "_flat_state", None)
    fs = flat_state() if flat_state is not None else None
    if fs is not None and not fs.placed(opt.param_groups):
        fs = None   # its groups list other parameters now: rebuilt from each one's state
    if fs is not None:
        hparams = opt._hparam_arrays()
        hp, hdef = jax.tree_util.tree_flatten(hparams)
        return {"hparams": hparams}, hp + fs.leaves, _Split(hdef, fs.treedef, len(hp))
    get = getattr(opt, "_state_arrays", None)
    if get is None:
        return None, [], jax.tree_util.tree_structure(None)
    tree = get()
    if flat_state is not None:
        hp, hdef = jax.tree_util.tree_flatten(tree["hparams"])
        sl, sdef = jax.tree_util.tree_flatten(tree["state"])
        if _all_arrays(hp) and _all_arrays(sl):
            return tree, hp + sl, _Split(hdef, sdef, len(hp))
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    if not _all_arrays(leaves):
        leaves = [v if isinstance(v, (jax.Array, np.ndarray)) else jax.numpy.asarray(v)
                  for v in leaves]
        tree = treedef.unflatten(leaves)
    return tree, leaves, treedef


class _Split(tuple):
    """The treedef of ``{"hparams": ..., "state": ...}`` as its two parts: the state goes
    back to the optimizer as leaves (``_load_flat_state``) and comes in as them next call."""

    def __new__(cls, hdef, sdef, n_hparams):
        return super().__new__(cls, (hdef, sdef, n_hparams))

    def unflatten(self, leaves):
        hdef, sdef, n = self
        return {"hparams": hdef.unflatten(leaves[:n]), "state": sdef.unflatten(leaves[n:])}


def _opt_install(opt, treedef, leaves):
    """Install leaves of :func:`_opt_tree`'s layout (``treedef``) as the optimizer's state."""
    if type(treedef) is _Split:
        opt._load_flat_state(treedef[1], leaves[treedef[2]:])
    else:
        _opt_load(opt, treedef.unflatten(leaves))


_ARRAY_TYPES = set()   # concrete array classes seen (``isinstance(v, jax.Array)`` is slow)


def _all_arrays(leaves):
    for v in leaves:
        if type(v) not in _ARRAY_TYPES:
            if not isinstance(v, (jax.Array, np.ndarray)):
                return False
            _ARRAY_TYPES.add(type(v))
    return True


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
                items.append((k, _Same((v,))))
        out.append((len(g["params"]), tuple(items)))
    return tuple(out)


def _opt_key(opt, tree, leaves):
    """The part of a program's key read from an optimizer (besides its treedef): the
    options read as Python values, the avals of its leaves (``_opt_tree``'s)."""
    return _opt_static_key(opt, tree), tuple(map(_aval_of, leaves))


def _opt_load(opt, tree):
    load = getattr(opt, "_load_state_arrays", None)
    if load is not None:
        load(tree)


def _state_part(tree):
    return tree["state"] if isinstance(tree, dict) and "state" in tree else tree


# --------------------------------------------------------------------------- a call's plan


class _Plan:
    """One call of a compiled step: its cache key, the program's inputs (``flat``), the
    Tensors and optimizers they come from, and what ``_compile_replay`` needs to re-run
    it (``basis``; ``written``, set by the run)."""

    __slots__ = ("key", "flat", "state", "tensors", "optimizers", "grads_in", "opt_trees",
                 "rng", "arg_leaves", "arg_slots", "rebuild", "n_args", "kw_names", "found",
                 "roots", "epoch", "ctx", "flags", "n_walk", "groups", "opt_keys", "hp_leaves",
                 "basis", "written", "meta", "replayed", "arg_objects")

    def __init__(self):
        self.basis = self.written = self.meta = None
        self.arg_objects = ()   # (argument leaf, objects, ids) (``_compile.arg_objects``)
        self.arg_leaves = None  # a re-run call's (``replay.check``) has no objects
        self.replayed = False   # made by ``replay.check``

