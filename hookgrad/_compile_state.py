"""What a compiled step reads and writes: finding its state and keying its programs.

``hookgrad.compile`` lifts the Tensors, Modules and optimizers a step can reach (closure,
the globals its code names, bound ``self``, ``functools.partial`` arguments, followed
into helper functions) into the compiled program; the cache key of a program is built
here from their shapes, dtypes, hooks and flags.
"""
import functools
import sys
import types
import weakref

import jax
import numpy as np

from ._tensor import Tensor
from ._watch import WATCHED

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
        if getattr(type(v), "_is_compiled_function", False):  # a compiled helper
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
    Modules, optimizers; and the guards under which a later call may reuse this walk."""

    __slots__ = ("tensors", "tensor_ids", "modules", "module_ids", "optimizers", "opt_ids",
                 "guards", "watched")

    def __init__(self):
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

    def copy(self, deep=True):
        """A copy to add to; ``deep=False`` shares all but the Tensors (for Tensors passed
        as arguments)."""
        new = _State.__new__(_State)
        new.tensors, new.tensor_ids = list(self.tensors), dict(self.tensor_ids)
        if deep:
            new.modules, new.module_ids = list(self.modules), set(self.module_ids)
            new.optimizers, new.opt_ids = list(self.optimizers), set(self.opt_ids)
            new.guards, new.watched = list(self.guards), list(self.watched)
        else:
            new.modules, new.module_ids = self.modules, self.module_ids
            new.optimizers, new.opt_ids = self.optimizers, self.opt_ids
            new.guards, new.watched = self.guards, self.watched
        return new

    def guard_groups(self, watched=False):
        """The guards grouped by snapshot function, for :func:`_snapshot`."""
        groups = {}
        for f, obj in (self.watched if watched else self.guards):
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
                self.guards.append((_param_groups_id, obj))
                self.guards.append((_ids, obj.param_groups))
                for g in obj.param_groups:
                    self.guards.append((_params_ids, g))
                    for p in g["params"]:
                        self.add_tensor(p)
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
        elif depth < 2 and not isinstance(obj, _OPAQUE):
            # a trainer object, an LR scheduler: the Modules/optimizers/Tensors it holds
            d = getattr(obj, "__dict__", None)
            if type(d) is dict and len(d) < 1000:
                self.guards.append((_holdings, d))
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
            self._guard(_value_ids, d, own_setattr)
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


def _ids(seq):
    return tuple(map(id, seq))


def _value_ids(d):
    return tuple(map(id, d.values()))


def _first(seq):
    return (id(seq[0]), len(seq) <= _MAX_ITEMS) if seq else None


def _first_value(d):
    return (id(next(iter(d.values()))), len(d) <= _MAX_ITEMS) if d else None


def _params_ids(group):
    return tuple(map(id, group["params"]))


def _param_groups_id(opt):
    return id(opt.param_groups)


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


def _holdings(d):
    # a counter or flag the object rebinds each step does not void the walk
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


def _dict_key(d):
    return tuple(d) if d else ()


def _node_key(node):
    if node is None or not (node._pre_hooks or node._post_hooks or node._tensor_pre_hooks):
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
                              if isinstance(v, dict) and _step_hooks(k))
    return _global_dicts


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
    as (tree, leaves, treedef), leaves as arrays. ``treedef.unflatten(leaves)`` rebuilds
    the tree."""
    get = getattr(opt, "_state_arrays", None)
    if get is None:
        return None, [], jax.tree_util.tree_structure(None)
    tree = get()
    states = tree.get("state") if type(tree) is dict and len(tree) == 2 else None
    if type(states) is list and "hparams" in tree and all(type(g) is list for g in states):
        hp, hdef = jax.tree_util.tree_flatten(tree["hparams"])
        if _all_arrays(hp):
            objs = [s for group in states for s in group]
            memo = _flat_memo.get(opt)
            if memo is not None and list(map(id, objs)) == memo[0]:
                sl = [r() for r in memo[1]]
                sdef = memo[2]
                if any(v is None for v in sl):
                    memo = None
            else:
                memo = None
            if memo is None:
                sl, sdef = jax.tree_util.tree_flatten(states)
                if _all_arrays(sl):
                    _remember(opt, states, sl, sdef)
                    memo = True
            if memo is not None:
                return tree, hp + sl, _Split(hdef, sdef, len(hp))
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    if not _all_arrays(leaves):
        leaves = [v if isinstance(v, (jax.Array, np.ndarray)) else jax.numpy.asarray(v)
                  for v in leaves]
        tree = treedef.unflatten(leaves)
    return tree, leaves, treedef


class _Split(tuple):
    """The treedef of ``{"hparams": ..., "state": [[per-parameter state]]}`` as two parts,
    so the per-parameter states, replaced each step but never changed in place, need not
    be flattened again: ``_run`` hands the leaves it loads to :func:`_remember`."""

    def __new__(cls, hdef, sdef, n_hparams):
        return super().__new__(cls, (hdef, sdef, n_hparams))

    def unflatten(self, leaves):
        hdef, sdef, n = self
        return {"hparams": hdef.unflatten(leaves[:n]), "state": sdef.unflatten(leaves[n:])}


_flat_memo = weakref.WeakKeyDictionary()   # optimizer -> (ids of its states, leaves, sdef)


def _remember(opt, states, leaves, sdef):
    """Record the flattening of ``states`` (a list of lists of per-parameter states)."""
    objs = [s for group in states for s in group]
    # weak references: a donated buffer must have no holder but its state; the states
    # themselves are held so their ids are not reused while the memo lives
    _flat_memo[opt] = (list(map(id, objs)), [weakref.ref(v) for v in leaves], sdef, objs)


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
