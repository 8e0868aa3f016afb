"""Hook handles: ``RemovableHandle``, ``unserializable_hook``, ``warn_if_has_hooks``.

A leaf (imports nothing of hookgrad) so that every layer that registers hooks can hand out
handles; ``hookgrad.utils.hooks`` is their public path.
"""
import itertools
import weakref
from . import _errors

class RemovableHandle:
    """A handle that removes a hook from the dict it was registered in.

    Args:
        hooks_dict: the ordered dict that holds the hook under ``handle.id``.
        extra_dict: a dict, or a list of dicts, from which ``remove()`` also deletes
            ``handle.id`` (e.g. the dict of hooks flagged ``always_call``).

    The handle holds its dicts weakly: removing after the owner is gone does nothing.
    It is also a context manager that removes the hook on exit::

        >>> with y.register_hook(lambda g: g * 10):
        ...     y.sum().backward()   # the hook runs here only
    """

    _ids = itertools.count()
    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._ids)
        RemovableHandle.next_id = self.id + 1
        if extra_dict is None:
            extras = ()
        elif isinstance(extra_dict, (list, tuple)):
            extras = extra_dict
        else:
            extras = (extra_dict,)
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def remove(self):
        """Remove the hook; calling it again, or after the dicts are gone, does nothing."""
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    def __getstate__(self):
        if not self.extra_dict_ref:
            return (self.hooks_dict_ref(), self.id)
        return (self.hooks_dict_ref(), self.id, tuple(r() for r in self.extra_dict_ref))

    def __setstate__(self, state):
        hooks = state[0]
        self.hooks_dict_ref = _dead_ref if hooks is None else weakref.ref(hooks)
        self.id = state[1]
        # ids issued after an unpickle must not collide with restored ones
        if self.id >= RemovableHandle.next_id:
            RemovableHandle._ids = itertools.count(self.id + 1)
            RemovableHandle.next_id = self.id + 1
        extras = state[2] if len(state) > 2 else ()
        self.extra_dict_ref = tuple(_dead_ref if d is None else weakref.ref(d) for d in extras)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _dead_ref():
    return None


def unserializable_hook(f):
    """Mark a hook as one that is not serialized with its tensor, which silences the
    warning of ``warn_if_has_hooks``::

        @unserializable_hook
        def log_grad(grad):
            print(grad.norm())
    """
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor):
    """Warn for each backward hook of ``tensor`` not marked ``unserializable_hook``: hooks
    are not saved when a tensor is pickled."""
    hooks = getattr(tensor, "_backward_hooks", None)
    if not hooks:
        return
    for hook in hooks.values():
        if not getattr(hook, "__torch_unserializable__", False):
            _errors.warn(
                f"backward hook {hook!r} on tensor will not be serialized.  If this is "
                "expected, you can decorate the function with @hookgrad.utils.hooks."
                "unserializable_hook to suppress this warning")


for _obj in (RemovableHandle, unserializable_hook, warn_if_has_hooks):
    _obj.__module__ = "hookgrad.utils.hooks"  # the public path: pickles and reprs name it
