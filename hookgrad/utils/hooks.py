"""Hook handles and helpers: ``RemovableHandle``, ``unserializable_hook``, ``warn_if_has_hooks``.

``BackwardHook`` (the identity op that carries a module's full backward hooks) lives in
``hookgrad._autograd.backward_hook`` and is re-exported here.
"""
from .._handle import RemovableHandle, unserializable_hook, warn_if_has_hooks

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks", "BackwardHook"]


def __getattr__(name):
    if name == "BackwardHook":  # imported lazily: it needs the op table
        from .._autograd.backward_hook import BackwardHook
        return BackwardHook
    from .. import _missing
    raise _missing.missing("module 'hookgrad.utils.hooks'", "torch.utils.hooks", name)
