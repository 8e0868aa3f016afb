"""Hooks common to all modules (``hookgrad.nn.modules.module.register_module_*``).

They run before each module's own hooks of the same kind. The dicts are module-level
state, mutated in place (never rebound), so ``module.py`` re-exports them by name.
"""
import functools
import weakref
from ..._watch import WatchedOrderedDict

from ..._handle import RemovableHandle

__all__ = ["register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_backward_hook", "register_module_full_backward_pre_hook",
           "register_module_full_backward_hook", "register_module_buffer_registration_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]

_global_buffer_registration_hooks = WatchedOrderedDict()
_global_module_registration_hooks = WatchedOrderedDict()
_global_parameter_registration_hooks = WatchedOrderedDict()
_global_backward_pre_hooks = WatchedOrderedDict()
_global_backward_hooks = WatchedOrderedDict()
_global_forward_pre_hooks = WatchedOrderedDict()
_global_forward_hooks = WatchedOrderedDict()
_global_forward_hooks_always_called = WatchedOrderedDict()
_global_forward_hooks_with_kwargs = WatchedOrderedDict()
# whether the global backward hooks are full ones (True), old-style ones (False) or unset
_global_flags = {"is_full_backward_hook": None}


def _has_any_global_hook():
    return bool(_global_backward_pre_hooks or _global_backward_hooks or _global_forward_pre_hooks
                or _global_forward_hooks)


class _WrappedHook:
    """A hook that is called with its module (held weakly) as first argument."""

    def __init__(self, hook, module=None):
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = False
        if module is not None:
            self.module = weakref.ref(module)
            self.with_module = True

    def __call__(self, *args, **kwargs):
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)

    def __getstate__(self):
        result = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            result["module"] = self.module()
        return result

    def __setstate__(self, state):
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


def _add(hooks, hook, extra=None):
    handle = RemovableHandle(hooks, extra_dict=extra)
    hooks[handle.id] = hook
    return handle


def register_module_buffer_registration_hook(hook):
    """Register a hook called on every ``register_buffer`` of any module::

        hook(module, name, buffer) -> None or new buffer

    A returned value is registered instead. Returns a handle that removes the hook.
    """
    return _add(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    """Register a hook called whenever any module registers a submodule::

        hook(module, name, submodule) -> None or new submodule
    """
    return _add(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    """Register a hook called on every ``register_parameter`` of any module::

        hook(module, name, param) -> None or new parameter
    """
    return _add(_global_parameter_registration_hooks, hook)


def register_module_forward_pre_hook(hook):
    """Register a forward pre-hook common to all modules (for debugging and profiling).

    ::

        hook(module, args) -> None or modified args

    ``args`` are the positional arguments only; a non-tuple result is wrapped in a
    tuple. It runs before the module's own forward pre-hooks.

    Example::

        >>> h = register_module_forward_pre_hook(lambda m, args: print(type(m).__name__))
        >>> model(x)   # prints the class of every module called
        >>> h.remove()
    """
    return _add(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """Register a forward hook common to all modules (for debugging and profiling).

    ::

        hook(module, args, output) -> None or modified output
        hook(module, args, kwargs, output) -> None or modified output  # with_kwargs=True

    With ``always_call=True`` the hook also runs when ``forward`` raises. It runs
    before the module's own forward hooks.
    """
    handle = _add(_global_forward_hooks, hook,
                  [_global_forward_hooks_always_called, _global_forward_hooks_with_kwargs])
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_backward_hook(hook):
    """Register an old-style (non-full) backward hook common to all modules.

    Deprecated in favour of :func:`register_module_full_backward_hook`; see
    ``Module.register_backward_hook``.
    """
    if _global_flags["is_full_backward_hook"] is True:
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a "
                           "global Module hook. Please use only one of them.")
    _global_flags["is_full_backward_hook"] = False
    return _add(_global_backward_hooks, hook)


def register_module_full_backward_pre_hook(hook):
    """Register a backward pre-hook common to all modules::

        hook(module, grad_output) -> tuple or None

    It behaves as ``Module.register_full_backward_pre_hook`` and runs before the
    module's own backward pre-hooks.
    """
    return _add(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """Register a backward hook common to all modules::

        hook(module, grad_input, grad_output) -> tuple or None

    It behaves as ``Module.register_full_backward_hook`` and runs before the module's
    own backward hooks.
    """
    if _global_flags["is_full_backward_hook"] is False:
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a "
                           "global Module hook. Please use only one of them.")
    _global_flags["is_full_backward_hook"] = True
    return _add(_global_backward_hooks, hook)
