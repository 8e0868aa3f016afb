"""``torch.fx.symbolic_trace`` and :class:`Tracer`: run a Module's forward (or a function)
on :class:`Proxy` inputs and record what it does as a :class:`Graph`.

hookgrad's Tensor has no ``__torch_function__``, so while tracing, the functions of
``torch`` and ``torch.nn.functional`` (and ``math``, and names given to :func:`wrap`) are
replaced by recorders that add a ``call_function`` node when a Proxy is among their
arguments; the traced code's own globals that hold those functions (``from torch import
relu``) are replaced too. Calls to built-in layers become ``call_module`` nodes; Parameters
and buffers read in a traced ``forward`` become ``get_attr`` nodes.
"""
import builtins
import functools
import inspect
import math
import sys
import types

from .. import _missing
from .._torch_function import unwrapped
from .._tensor import Tensor
from ..nn.modules.container import Sequential
from ..nn.modules.module import Module
from ._codegen import WRAPPED
from .graph import Graph
from .graph_module import GraphModule
from .node import QUALNAMES, map_aggregate, qualified_name
from .proxy import Proxy

__all__ = ["Tracer", "symbolic_trace", "wrap"]

_WRAPPED = []  # (globals dict, name) that wrap() registered
_ALIASES = {}  # (function, printed name) -> a function of its own printing so


def wrap(fn_or_name):
    """Record calls to this module-level function as ``call_function`` nodes when traced
    (call it at module scope: ``torch.fx.wrap("len")`` or ``torch.fx.wrap(my_fn)``)."""
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    caller = sys._getframe(1)
    if caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _WRAPPED.append((caller.f_globals, name))
    return fn_or_name


def _has_proxy(args, kwargs):
    found = []
    map_aggregate((args, kwargs), lambda a: found.append(a) if isinstance(a, Proxy) else None)
    return found[0] if found else None


def _target(fn, printed):
    """``fn``, or a function of its own that prints as ``printed`` when ``fn`` already
    prints as another name (``torch.relu`` and ``torch.nn.functional.relu`` are one)."""
    if QUALNAMES.setdefault(id(fn), printed) == printed:
        return fn
    key = (fn, printed)
    if key not in _ALIASES:
        alias = functools.wraps(fn)(lambda *a, **k: fn(*a, **k))
        QUALNAMES[id(alias)] = printed
        _ALIASES[key] = alias
    return _ALIASES[key]


def _recorder(fn, target):
    @functools.wraps(fn)
    def record(*args, **kwargs):
        proxy = _has_proxy(args, kwargs)
        if proxy is None:
            return fn(*args, **kwargs)
        return proxy.tracer.create_proxy("call_function", target, args, kwargs)
    return record


_ABSENT = object()


class _Patcher:
    """Replaces names in modules, globals dicts and classes for the trace, and puts them
    back (deleting the ones that were not there)."""

    def __init__(self):
        self._undo, self._by_fn, self._globals = [], {}, set()

    def patch(self, owner, name, printed=None, fn=_ABSENT, wrapped=False):
        """Make ``owner.name`` (a module's, or a dict's item) a recorder of ``fn`` (its
        value there by default), printed as ``printed`` (its qualified name); ``wrapped``:
        generated code names it in a ``wrap`` line (autowrap and :func:`wrap`)."""
        d = owner if isinstance(owner, dict) else vars(owner)
        fn = d.get(name) if fn is _ABSENT else fn
        if not callable(fn) or isinstance(fn, (type, types.ModuleType, Module)):
            return
        if wrapped:
            WRAPPED.add(id(fn))
        rec = _recorder(fn, _target(fn, printed or qualified_name(fn)))
        self._by_fn.setdefault(id(fn), rec)
        # NOTE: code that bound the function before ``__torch_function__`` switched on
        # (``from torch import tanh``) holds it without the protocol's wrapper
        self._by_fn.setdefault(id(unwrapped(fn)), rec)
        self._set(d, name, rec)

    def patch_globals(self, glb):
        """Replace the functions already patched elsewhere where ``glb`` holds them."""
        if id(glb) in self._globals:
            return
        self._globals.add(id(glb))
        for name, value in list(glb.items()):
            rec = self._by_fn.get(id(value))
            if rec is not None:
                self._set(glb, name, rec)

    def patch_class(self, cls, name, value):
        self._undo.append((cls, name, cls.__dict__.get(name, _ABSENT)))
        setattr(cls, name, value)

    def _set(self, d, name, value):
        self._undo.append((d, name, d.get(name, _ABSENT)))
        d[name] = value

    def restore(self):
        for owner, name, value in reversed(self._undo):
            if isinstance(owner, dict):
                if value is _ABSENT:
                    del owner[name]
                else:
                    owner[name] = value
            elif value is _ABSENT:
                delattr(owner, name)
            else:
                setattr(owner, name, value)
        self._undo.clear()


def _namespaces(autowrap_modules):
    from .. import nn
    import hookgrad
    out = [(hookgrad, "torch"), (nn.functional, "torch.nn.functional")]
    return out + [(m, m.__name__) for m in autowrap_modules]


class Tracer:
    """Traces a Module or function into a :class:`Graph` (:meth:`trace`). Subclasses steer
    it through :meth:`is_leaf_module`, :meth:`call_module` and :meth:`create_arg`."""

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(),
                 param_shapes_constant=False):
        self._autowrap_modules = tuple(autowrap_modules)
        self._autowrap_functions = tuple(autowrap_functions)
        self.param_shapes_constant = param_shapes_constant

    # ---- what becomes a node
    def is_leaf_module(self, m, module_qualified_name) -> bool:
        """Built-in layers (``torch.nn``'s, but not ``Sequential``) are recorded as one
        ``call_module`` node; other Modules are traced through."""
        return type(m).__module__.startswith("hookgrad.nn") and not isinstance(m, Sequential)

    def path_of_module(self, mod) -> str:
        path = self._paths.get(id(mod))
        if path is None:
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m, forward, args, kwargs):
        path = self.path_of_module(m)
        if not self.is_leaf_module(m, path):
            # its source's module-level names for torch functions are recorded too
            self._patcher.patch_globals(getattr(type(m).forward, "__globals__", {}))
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", path, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """A Parameter or buffer of the root read in ``forward``: a ``get_attr`` Proxy (one
        per attribute)."""
        if isinstance(attr_val, Tensor) and id(attr_val) in self._tensor_paths:
            path = self._tensor_paths[id(attr_val)]
            if path not in parameter_proxy_cache:
                parameter_proxy_cache[path] = self.create_proxy("get_attr", path, (), {})
            return parameter_proxy_cache[path]
        return attr_val

    # ---- making nodes
    def create_arg(self, a):
        def one(x):
            if isinstance(x, Proxy):
                return x.node
            if isinstance(x, Tensor):
                return self._tensor_arg(x)
            if isinstance(x, Module):
                raise NotImplementedError(f"argument of type: {type(x)}")
            return x
        return map_aggregate(a, one)

    def _tensor_arg(self, t):
        path = self._tensor_paths.get(id(t))
        if path is None:  # a constant made outside the Parameters: kept on the root
            i = sum(1 for n in vars(self.root) if n.startswith("_tensor_constant"))
            path = f"_tensor_constant{i}"
            setattr(self.root, path, t)
            self._tensor_paths[id(t)] = path
        return self.create_proxy("get_attr", path, (), {}).node

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        return self.graph.create_node(kind, target, args, kwargs, name)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        node = self.create_node(kind, target, self.create_arg(args), self.create_arg(kwargs),
                                name)
        return Proxy(node, self)

    # ---- the trace
    def trace(self, root, concrete_args=None) -> Graph:
        """Run ``root`` (a Module's ``forward``, or a function) on Proxies and return the
        recorded Graph (also ``self.graph``)."""
        if concrete_args:
            _missing.not_implemented("torch.fx.Tracer.trace with concrete_args")()
        fn = root.forward if isinstance(root, Module) else root
        self.root = root if isinstance(root, Module) else Module()
        self.graph = Graph()
        self._paths = {id(m): n for n, m in self.root.named_modules()}
        self._tensor_paths = {id(t): n for n, t in self.root.named_parameters()}
        self._tensor_paths.update({id(t): n for n, t in self.root.named_buffers()})
        args = self._placeholders(fn)
        patcher = self._patcher = self._patch(fn)
        try:
            result = fn(*args)
        finally:
            patcher.restore()
        self.create_node("output", "output", (self.create_arg(result),), {})
        return self.graph

    def _placeholders(self, fn):
        params = list(inspect.signature(fn).parameters.values())
        out = []
        for p in params:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY):
                _missing.not_implemented("torch.fx.symbolic_trace of a function with *args, "
                                         "**kwargs or keyword-only parameters")()
            has_default = p.default is not p.empty
            node = self.graph.placeholder(p.name, default_value=p.default,
                                          has_default=has_default)
            out.append(Proxy(node, self))
        return out

    def _patch(self, fn):
        patcher, tracer = _Patcher(), self
        try:
            for mod, printed in _namespaces(self._autowrap_modules):
                for name in [n for n in vars(mod) if not n.startswith("_")]:
                    patcher.patch(mod, name, f"{printed}.{name}",
                                  wrapped=mod in self._autowrap_modules)
            for glb, name in _WRAPPED + [(getattr(f, "__globals__", {}), f.__name__)
                                         for f in self._autowrap_functions]:
                # a builtin (``wrap("len")``) is shadowed in that module's globals
                patcher.patch(glb, name, fn=glb.get(name, getattr(builtins, name, None)),
                              wrapped=True)
            patcher.patch_globals(getattr(fn, "__globals__", {}))
            orig_call, orig_getattr, cache = Module.__call__, Module.__getattr__, {}

            def module_call(mod, *args, **kwargs):
                return tracer.call_module(mod, lambda *a, **k: orig_call(mod, *a, **k),
                                          args, kwargs)

            def module_getattr(mod, name):
                return tracer.getattr(name, orig_getattr(mod, name), cache)
            patcher.patch_class(Module, "__call__", module_call)
            patcher.patch_class(Module, "__getattr__", module_getattr)
        except BaseException:
            patcher.restore()
            raise
        return patcher


def symbolic_trace(root, concrete_args=None):
    """Trace ``root`` (a Module or a function) into a :class:`GraphModule` whose ``graph``
    lists the calls it made and whose ``forward`` runs them."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)


__getattr__ = _missing.module_getattr(__name__)
