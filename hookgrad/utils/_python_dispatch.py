"""``torch.utils._python_dispatch``: ``TorchDispatchMode`` and the dispatch-mode stack.

A mode entered with ``with`` receives every op call of the op table as
``__torch_dispatch__(func, types, args, kwargs)``, ``func`` the row's ATen overload
(``hookgrad.ops.aten.mm.default``); modes stack. A node's backward runs PyTorch's ops
(``_ops/derivatives.py``), factories and the gradient seed are ops; where hookgrad has no
PyTorch formula a node's backward is one op, ``<op>_backward.default``
(docs/differences.md). Inside ``hookgrad.compile`` and ``hookgrad.func`` a mode sees the
traced ops once per trace.
"""
import contextlib

from .. import _missing
from .._ops.stages import modes as _modes
from .._tensor import Tensor

__all__ = ["TorchDispatchMode", "BaseTorchDispatchMode", "is_in_torch_dispatch_mode",
           "is_traceable_wrapper_subclass", "is_traceable_wrapper_subclass_type",
           "any_torch_dispatch_mode_on_stack", "return_and_correct_aliasing",
           "transform_subclass"]


class TorchDispatchMode(_modes.StackedMode):
    """A mode intercepting every op: subclasses override ``__torch_dispatch__(func, types,
    args=(), kwargs=None)`` and enter the mode with ``with``. While it runs, the mode is
    not active (the ops it calls reach the modes entered before it)."""

    def __init__(self, _dispatch_key=None):
        self._dispatch_key = _dispatch_key

    _push, _pop = staticmethod(_modes.push), staticmethod(_modes.pop)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError()

    @classmethod
    def is_infra_mode(cls) -> bool:
        return False


class BaseTorchDispatchMode(TorchDispatchMode):
    """A mode whose ``__torch_dispatch__`` calls the op unchanged."""

    __torch_dispatch__ = _modes.calls_unchanged


def _get_current_dispatch_mode():
    """The innermost active dispatch mode, or None."""
    return _modes.innermost(_modes.MODES)


def _get_current_dispatch_mode_stack() -> list:
    return list(_modes.MODES)


def _len_torch_dispatch_stack() -> int:
    return len(_modes.MODES)


def is_in_torch_dispatch_mode(include_infra_modes: bool = True) -> bool:
    return bool(_modes.MODES)


_is_in_torch_dispatch_mode = is_in_torch_dispatch_mode


def any_torch_dispatch_mode_on_stack(*, include_infra_modes=True, respect_mode_ignore=False):
    return bool(_modes.MODES)


@contextlib.contextmanager
def _disable_current_modes():
    """Pop the active dispatch modes for the block; yields them, innermost last."""
    popped = list(_modes.MODES)
    for mode in reversed(popped):
        _modes.pop(mode)
    try:
        yield popped
    finally:
        for mode in popped:
            _modes.push(mode)


def is_traceable_wrapper_subclass_type(t) -> bool:
    """Whether the Tensor subclass ``t`` implements ``__tensor_flatten__`` and
    ``__tensor_unflatten__``."""
    return (isinstance(t, type) and issubclass(t, Tensor) and t is not Tensor
            and hasattr(t, "__tensor_flatten__") and hasattr(t, "__tensor_unflatten__"))


def is_traceable_wrapper_subclass(t) -> bool:
    return is_traceable_wrapper_subclass_type(type(t))


return_and_correct_aliasing = _missing.not_implemented(
    "torch.utils._python_dispatch.return_and_correct_aliasing")
transform_subclass = _missing.not_implemented("torch.utils._python_dispatch.transform_subclass")

__getattr__ = _missing.module_getattr(__name__)
