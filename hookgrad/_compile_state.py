"""What a compiled step reads and writes: finding its state and keying its programs.

``hookgrad.compile`` lifts the Tensors, Modules and optimizers a step can reach (closure,
the globals its code names, bound ``self``, ``functools.partial`` arguments, followed
into helper functions) into the compiled program; the cache key of a program is built
here from their shapes, dtypes, hooks and flags.
"""
import functools
import sys
import types

import jax
import numpy as np

from ._tensor import Tensor

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
