"""``torch.utils._python_dispatch``: ``TorchDispatchMode`` and the dispatch-mode stack.

hookgrad does not dispatch to Python modes yet: the mode stack is always empty (and the
queries say so), subclasses of :class:`TorchDispatchMode` can be defined, and entering one
or calling the helpers that would rewrite dispatch raises ``NotImplementedError``.
"""
import contextlib

from .. import _missing
from .._tensor import Tensor

__all__ = ["TorchDispatchMode", "BaseTorchDispatchMode", "is_in_torch_dispatch_mode",
           "is_traceable_wrapper_subclass", "is_traceable_wrapper_subclass_type",
           "any_torch_dispatch_mode_on_stack", "return_and_correct_aliasing",
           "transform_subclass"]


class TorchDispatchMode:
    """A mode intercepting every ATen op. hookgrad does not dispatch to modes yet:
    subclasses can be defined, and entering one raises ``NotImplementedError``."""

    def __init__(self, _dispatch_key=None):
        self._dispatch_key = _dispatch_key

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError()

    def __enter__(self):
        _missing.not_implemented("torch.utils._python_dispatch.TorchDispatchMode")()

    def __exit__(self, exc_type, exc_value, traceback):
        return None

    @classmethod
    def push(cls, *args, **kwargs):
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls) -> bool:
        return False


class BaseTorchDispatchMode(TorchDispatchMode):
    """A mode whose ``__torch_dispatch__`` calls the op unchanged."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _get_current_dispatch_mode():
    """The innermost active dispatch mode: None (hookgrad has none)."""
    return None


def _get_current_dispatch_mode_stack() -> list:
    return []


def _len_torch_dispatch_stack() -> int:
    return 0


def is_in_torch_dispatch_mode(include_infra_modes: bool = True) -> bool:
    return False


_is_in_torch_dispatch_mode = is_in_torch_dispatch_mode


def any_torch_dispatch_mode_on_stack(*, include_infra_modes=True, respect_mode_ignore=False):
    return False


@contextlib.contextmanager
def _disable_current_modes():
    """Pop the active dispatch modes for the block: there are none, so it yields ()."""
    yield ()


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
