"""``torch.overrides``: the ``__torch_function__`` protocol's helpers.

hookgrad does not dispatch through ``__torch_function__`` yet: the queries here answer
truthfully (which arguments would override), and the helpers that would dispatch or list
overridable functions raise ``NotImplementedError`` when called.
"""
from . import _missing
from ._tensor import Tensor
from .nn.parameter import Parameter

__all__ = ["get_ignored_functions", "get_overridable_functions", "get_testing_overrides",
           "handle_torch_function", "has_torch_function", "resolve_name", "is_tensor_like",
           "is_tensor_method_or_property", "wrap_torch_function", "enable_reentrant_dispatch",
           "TorchFunctionMode", "BaseTorchFunctionMode", "has_torch_function_unary",
           "has_torch_function_variadic"]


def _plain(t):
    # Tensor and Parameter use the default __torch_function__, which overrides nothing
    return t is Tensor or t is Parameter


def _overrides(a):
    t = type(a)
    if isinstance(a, Tensor):
        return not _plain(t)
    return hasattr(t, "__torch_function__")


def has_torch_function(relevant_args) -> bool:
    """Whether any of ``relevant_args`` overrides ``__torch_function__``: a Tensor subclass
    (other than Parameter), or a non-Tensor whose type defines it."""
    return any(_overrides(a) for a in relevant_args)


def has_torch_function_unary(a) -> bool:
    return _overrides(a)


def has_torch_function_variadic(*args) -> bool:
    return has_torch_function(args)


def is_tensor_like(inp) -> bool:
    """Whether ``inp`` is a Tensor (or a Tensor subclass) or defines ``__torch_function__``."""
    if isinstance(inp, Tensor) or (isinstance(inp, type) and issubclass(inp, Tensor)):
        return True
    return hasattr(inp, "__torch_function__")


class TorchFunctionMode:
    """A mode intercepting every torch function call. hookgrad does not dispatch to modes
    yet: subclasses can be defined, and entering one raises ``NotImplementedError``."""

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError()

    def __enter__(self):
        _missing.not_implemented("torch.overrides.TorchFunctionMode")()

    def __exit__(self, exc_type, exc_value, traceback):
        return None


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode whose ``__torch_function__`` calls the function unchanged."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


_NAMES = ["handle_torch_function", "get_ignored_functions", "get_overridable_functions",
          "get_testing_overrides", "resolve_name", "is_tensor_method_or_property",
          "wrap_torch_function", "enable_reentrant_dispatch"]
globals().update({n: _missing.not_implemented(f"torch.overrides.{n}") for n in _NAMES})

__getattr__ = _missing.module_getattr(__name__)
