"""The ``__torch_function__`` protocol: Tensor subclasses and ``TorchFunctionMode`` s
intercept hookgrad's public functions and Tensor methods, as PyTorch's do.

Until the first Tensor subclass that does not disable the protocol is defined, or the
first ``TorchFunctionMode`` is entered, nothing is wrapped: eager ops pay nothing. Then
every op-table function and factory bound in a public namespace imported by then
(``hookgrad.<name>``, its aliases, ``hookgrad.nn.functional.<name>``) and every public
Tensor method (with the operators, ``__add__``, ...) is replaced, once, by a wrapper that runs the
function directly when no argument overrides the protocol and no mode is active, and
otherwise calls the innermost mode's ``__torch_function__`` (the mode popped meanwhile),
then each overriding argument type's, subclasses before their bases, until one returns
something other than ``NotImplemented`` (PyTorch's ``handle_torch_function``).
The functions of the namespaces PyTorch writes in Python and intercepts too
(``torch.nn.functional``, ``torch.linalg``, ``torch.fft``, ``torch.special``,
``torch.functional``, ``torch.autograd.grad``/``backward``, ``torch.nn.init``'s
distribution fills) are imported and wrapped at the same time. So are the Tensor properties
PyTorch intercepts (``Tensor.shape``, ``.grad``, ``.requires_grad``, ...): their getters
are seen as ``Tensor.<name>.__get__``, their setters as ``Tensor.<name>.__set__``.
"""
import functools
import importlib
import sys

from ._ops.registry import FUNCTIONS
from ._ops.stages.modes import pop_innermost
from ._tensor import Tensor, SUBCLASSED

__all__ = ["DisableTorchFunction", "DisableTorchFunctionSubclass",
           "_disabled_torch_function_impl", "handle_torch_function", "has_torch_function",
           "push_mode", "pop_mode"]

MODES = []  # entered TorchFunctionModes, innermost last
_state = {"subclass_off": 0, "all_off": 0, "active": False}
_overrides_cache = {}


def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """A ``__torch_function__`` that opts out: ``func`` runs with the protocol off and its
    results are not converted (Parameter's)."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


def _overrides(cls):
    found = _overrides_cache.get(cls)
    if found is None:
        impl = getattr(cls, "__torch_function__", None)
        impl = getattr(impl, "__func__", impl)
        found = _overrides_cache[cls] = cls is not Tensor and impl is not None and \
            impl is not _disabled_torch_function_impl
    return found


def _relevant(args, kwargs):
    """The arguments that override the protocol, in order, each type once, a subclass
    before its base (PyTorch's ``_get_overloaded_args``)."""
    found, types = [], []
    for a in (*args, *kwargs.values()):
        for x in (a if isinstance(a, (list, tuple)) else (a,)):
            c = type(x)
            if c is Tensor or c in types or not _overrides(c):
                continue
            at = len(found)
            for i, t in enumerate(types):  # before the first of its bases already seen
                if issubclass(c, t):
                    at = i
                    break
            found.insert(at, x)
            types.insert(at, c)
    return found


def has_torch_function(relevant_args) -> bool:
    """Whether any of ``relevant_args`` overrides ``__torch_function__`` (and the
    protocol is on), or a ``TorchFunctionMode`` is active."""
    if _state["all_off"]:
        return False
    return bool(MODES) or (not _state["subclass_off"] and any(
        type(a) is not Tensor and _overrides(type(a)) for a in relevant_args))


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call ``public_api`` through the active mode and the ``__torch_function__`` of
    ``relevant_args`` that override it."""
    overloaded = [] if _state["subclass_off"] else _relevant(relevant_args, {})
    types = tuple(type(a) for a in overloaded)
    tried = []
    if MODES and not _state["all_off"]:
        mode = MODES.pop()
        try:
            res = mode.__torch_function__(public_api, types, args, kwargs)
        finally:
            MODES.append(mode)
        if res is not NotImplemented:
            return res
        tried.append(f"mode object {mode!r}")
    for a in overloaded:
        res = type(a).__torch_function__(public_api, types, args, kwargs)
        if res is not NotImplemented:
            return res
        tried.append(f"tensor subclass {type(a)!r}")
    if not tried:
        with DisableTorchFunction():
            return public_api(*args, **kwargs)
    name = getattr(public_api, "_hg_public_name", None) or \
        getattr(public_api, "__qualname__", repr(public_api))
    listed = "".join(f"  - {t}\n" for t in tried)
    raise TypeError(f"Multiple dispatch failed for '{name}'; all __torch_function__ handlers "
                    f"returned NotImplemented:\n\n{listed}\nFor more information, try "
                    "re-running with TORCH_LOGS=not_implemented")


def _wrap(fn, name, qualname, operator=False):
    """``fn`` through this protocol. ``operator``: a binary operator (``__eq__``), which
    returns NotImplemented where its handlers end in a TypeError, as PyTorch's do (so
    ``x == None`` is False and ``x % 'a'`` Python's TypeError on a subclass too)."""
    @functools.wraps(fn)
    def public(*args, **kwargs):
        if _state["all_off"] or not MODES and (
                _state["subclass_off"] or not _relevant_any(args, kwargs)):
            return fn(*args, **kwargs)
        if not operator:
            return handle_torch_function(public, (*args, *kwargs.values()), *args, **kwargs)
        try:
            return handle_torch_function(public, (*args, *kwargs.values()), *args, **kwargs)
        except TypeError:
            return NotImplemented
    public.__name__ = name
    public._hg_public_name = qualname  # as PyTorch's errors name it: torch.add
    return public


def unwrapped(obj):
    """``obj`` without this protocol's wrapper (what the registry holds)."""
    return obj.__wrapped__ if hasattr(obj, "_hg_public_name") else obj


def _relevant_any(args, kwargs):
    for a in args:
        c = a.__class__
        if c is Tensor or c is int or c is float or c is bool:
            continue
        if c is list or c is tuple:
            if _relevant_any(a, {}):
                return True
        elif _overrides(c):
            return True
    return bool(kwargs) and _relevant_any(tuple(kwargs.values()), {})


def _plain(t):
    """Whether a property of ``t`` is read as it is: nothing intercepts it now."""
    return _state["all_off"] or not MODES and (
        _state["subclass_off"] or not _overrides(t.__class__))


def _wrap_property(prop):
    """``prop`` as a property whose getter and setter go through the protocol, seen by
    handlers as the new property's own ``__get__``/``__set__`` (PyTorch's
    ``Tensor.grad.__get__``)."""
    @functools.wraps(prop.fget)
    def get(self):
        if _plain(self):
            return prop.fget(self)
        return handle_torch_function(wrapped.__get__, (self,), self)

    @functools.wraps(prop.fset or prop.fget)
    def put(self, value):
        if _plain(self):
            return prop.fset(self, value)
        return handle_torch_function(wrapped.__set__, (self,), self, value)
    wrapped = property(get, put if prop.fset is not None else None, prop.fdel, prop.__doc__)
    return wrapped


def _namespace_functions(modname):
    """The public Python functions of ``modname`` that PyTorch intercepts."""
    mod = importlib.import_module(modname)
    names = _NAMESPACES[modname]
    if names is None:
        names = [n for n, v in vars(mod).items() if not n.startswith("_") and
                 v.__class__ is _FUNCTION and v.__module__.startswith("hookgrad")]
    return mod, [n for n in names if hasattr(mod, n)]


def activate():
    """Wrap the public functions, Tensor methods and properties (once)."""
    if _state["active"]:
        return
    _state["active"] = True
    for name in _PROPERTIES:
        prop = getattr(Tensor, name, None)
        if isinstance(prop, property):
            setattr(Tensor, name, _wrap_property(prop))
    namespaces = dict(_namespace_functions(m) for m in _NAMESPACES)
    for klass in reversed(Tensor.__mro__[:-1]):  # the methods Tensor has from its bases too
        for name, attr in list(vars(klass).items()):
            if attr.__class__ is _FUNCTION and name not in _IGNORED and (
                    not name.startswith("_") or name in _OPERATORS):
                # an operator is its function's alias (``__mul__`` is ``mul``), as PyTorch's
                shown = _SHOWN.get(name) or (
                    attr.__name__ if name in _OPERATORS and attr.__name__ != "<lambda>"
                    else name)
                setattr(Tensor, name, _wrap(attr, shown, f"torch.Tensor.{shown}",
                                            name in _BINARY_OPERATORS))
    public = {id(fn) for fn in FUNCTIONS.values()}
    made = {}  # (function, name) -> its wrapper, one per name: torch.functional.einsum is
    # torch.einsum
    modules = sorted((m for m in list(sys.modules) if m == "hookgrad" or
                      m.startswith("hookgrad.") and "._" not in m), key=len)
    for modname in modules:  # the public namespaces that bind them, ``hookgrad`` first
        mod = sys.modules[modname]
        extra = namespaces.get(mod, ())
        for attr, val in list(vars(mod).items()):
            if id(val) in public or attr in extra or \
                    getattr(val, "__module__", None) in _FACTORIES and \
                    callable(val) and not isinstance(val, type) and not attr.startswith("_"):
                key = (id(val), attr)
                if key not in made:
                    made[key] = _wrap(val, _PREFIX.get(modname, "") + attr,
                                      f"torch{modname[8:]}.{attr}")
                setattr(mod, attr, made[key])
    _rebind_class_functions(modules, made)


def _rebind_class_functions(modules, made):
    """Classes that hold a wrapped function as a ``staticmethod`` (``Conv2d._fn`` is
    ``F.conv2d``, bound when the class was made) call its wrapper."""
    wrapper = {}
    for (fid, _), w in made.items():
        wrapper.setdefault(fid, w)
    for modname in modules:
        for cls in list(vars(sys.modules[modname]).values()):
            if isinstance(cls, type) and cls.__module__ == modname:
                for attr, val in list(vars(cls).items()):
                    if isinstance(val, staticmethod) and id(val.__func__) in wrapper:
                        setattr(cls, attr, staticmethod(wrapper[id(val.__func__)]))


_FACTORIES = ("hookgrad._factory", "hookgrad.random")
# Python namespaces whose functions PyTorch intercepts: None for every public function
_NAMESPACES = {
    "hookgrad.nn.functional": None, "hookgrad.linalg": None, "hookgrad.fft": None,
    "hookgrad.special": None, "hookgrad.functional": None,
    "hookgrad.autograd": ("grad", "backward"),
    "hookgrad.nn.init": ("uniform_", "normal_", "trunc_normal_", "constant_"),
}
# PyTorch's builtins of these namespaces are named ``linalg_vector_norm``, ``fft_fft``
_PREFIX = {"hookgrad.linalg": "linalg_", "hookgrad.special": "special_", "hookgrad.fft": "fft_"}
# the Tensor properties PyTorch's getters and setters intercept (``get_testing_overrides``)
_PROPERTIES = (
    "H", "T", "mH", "mT", "_base", "data", "device", "dtype", "grad", "grad_fn", "imag",
    "real", "is_cpu", "is_cuda", "is_ipu", "is_leaf", "is_maia", "is_meta", "is_mkldnn",
    "is_mps", "is_mtia", "is_nested", "is_quantized", "is_sparse", "is_sparse_csr",
    "is_vulkan", "is_xla", "is_xpu", "itemsize", "layout", "name", "nbytes", "ndim",
    "output_nr", "requires_grad", "retains_grad", "shape", "volatile", "_version")
_FUNCTION = type(activate)
# Tensor methods PyTorch does not intercept (``get_ignored_functions``)
_IGNORED = frozenset({"as_subclass", "stride"})


_OPERATORS = frozenset({
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__",
    "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__abs__", "__invert__", "__eq__",
    "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__and__", "__or__", "__xor__",
    "__rand__", "__ror__", "__rxor__", "__iadd__", "__isub__", "__imul__", "__itruediv__",
    "__iand__", "__ior__", "__ixor__", "__getitem__", "__setitem__", "__len__", "__bool__",
    "__repr__", "__format__", "__deepcopy__"})
# the name a handler sees for an operator where PyTorch's is not its function's: its own
# (``__eq__``, bound in C++ under that name) or an in-place method's (``+=`` is ``add_``)
_SHOWN = {"__eq__": "__eq__", "__rsub__": "__rsub__", "__rtruediv__": "__rdiv__",
          "__floordiv__": "__floordiv__", "__invert__": "__invert__", "__and__": "__and__",
          "__or__": "__or__", "__xor__": "__xor__", "__iadd__": "add_", "__isub__": "sub_",
          "__imul__": "mul_", "__itruediv__": "div_", "__iand__": "__iand__",
          "__ior__": "__ior__", "__ixor__": "__ixor__"}
# the operators of two operands: a TypeError in their handlers is NotImplemented
_BINARY_OPERATORS = _OPERATORS - {"__neg__", "__abs__", "__invert__", "__getitem__",
                                  "__setitem__", "__len__", "__bool__", "__repr__",
                                  "__format__", "__deepcopy__"}


class DisableTorchFunctionSubclass:
    """Inside the block, Tensor subclasses' ``__torch_function__`` is not called (modes
    still are)."""

    def __enter__(self):
        _state["subclass_off"] += 1
        return self

    def __exit__(self, *exc):
        _state["subclass_off"] -= 1


class DisableTorchFunction:
    """Inside the block, neither subclasses nor modes intercept functions."""

    def __enter__(self):
        _state["all_off"] += 1
        return self

    def __exit__(self, *exc):
        _state["all_off"] -= 1


def _convert(ret, cls):
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        return type(ret)(_convert(r, cls) for r in ret)
    return ret


def _default_torch_function(cls, func, types, args=(), kwargs=None):
    """Tensor's ``__torch_function__``: ``func`` run with subclasses' overrides off, its
    Tensor results made instances of ``cls``; ``NotImplemented`` when some type in
    ``types`` is not a base of ``cls``."""
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        ret = func(*args, **(kwargs or {}))
        if func in nowrap():
            return ret
        return _convert(ret, cls)


def nowrap():
    """The functions whose results Tensor's ``__torch_function__`` returns as they are (not
    converted to the subclass): the getters of ``Tensor._base`` and ``Tensor.grad``, as
    the properties are now (wrapped once the protocol is on)."""
    return {Tensor._base.__get__, Tensor.grad.__get__}


def push_mode(mode):
    activate()
    MODES.append(mode)


def pop_mode(mode):
    pop_innermost(MODES, mode, "torch function mode")


def _on_subclass(cls):
    if _overrides(cls):
        activate()


Tensor.__torch_function__ = classmethod(_default_torch_function)
SUBCLASSED[0] = _on_subclass
