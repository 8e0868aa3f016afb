"""``torch.overrides``: the ``__torch_function__`` protocol's helpers.

Tensor subclasses that define ``__torch_function__``, and the modes entered with
:class:`TorchFunctionMode`, intercept the op table's functions and the Tensor methods
(``hookgrad._torch_function`` says how). The helpers that list overridable functions
raise ``NotImplementedError`` when called.
"""
from . import _missing, _torch_function as _tf
from ._ops.stages.modes import StackedMode, calls_unchanged, innermost
from ._tensor import Tensor
from ._torch_function import handle_torch_function, has_torch_function

__all__ = ["get_ignored_functions", "get_overridable_functions", "get_testing_overrides",
           "handle_torch_function", "has_torch_function", "resolve_name", "is_tensor_like",
           "is_tensor_method_or_property", "wrap_torch_function", "enable_reentrant_dispatch",
           "TorchFunctionMode", "BaseTorchFunctionMode", "has_torch_function_unary",
           "has_torch_function_variadic", "get_default_nowrap_functions"]


def has_torch_function_unary(a) -> bool:
    return has_torch_function((a,))


def has_torch_function_variadic(*args) -> bool:
    return has_torch_function(args)


def is_tensor_like(inp) -> bool:
    """Whether ``inp`` is a Tensor (or a Tensor subclass) or its type defines
    ``__torch_function__``."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def get_default_nowrap_functions() -> set:
    """The functions whose results Tensor's ``__torch_function__`` returns as they are
    (not converted to the subclass): the getters of ``Tensor._base`` and ``Tensor.grad``."""
    return _tf.nowrap()


class TorchFunctionMode(StackedMode):
    """A mode intercepting every public function and Tensor method called inside its
    ``with`` block: subclasses override ``__torch_function__(func, types, args=(),
    kwargs=None)``. While it runs, the mode is not active (its calls reach the modes
    entered before it). Modes stack."""

    def __init__(self):
        pass

    _push, _pop = staticmethod(_tf.push_mode), staticmethod(_tf.pop_mode)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError()


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode whose ``__torch_function__`` calls the function unchanged."""

    __torch_function__ = calls_unchanged


def _get_current_function_mode():
    return innermost(_tf.MODES)


def _get_current_function_mode_stack() -> list:
    return list(_tf.MODES)


_NAMES = ["get_ignored_functions", "get_overridable_functions",
          "get_testing_overrides", "resolve_name", "is_tensor_method_or_property",
          "wrap_torch_function", "enable_reentrant_dispatch"]
globals().update({n: _missing.not_implemented(f"torch.overrides.{n}") for n in _NAMES})

__getattr__ = _missing.module_getattr(__name__)
