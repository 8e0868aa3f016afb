"""Utilities: hook handles (``hookgrad.utils.hooks``) and ``ModTracker``."""
from . import hooks

__all__ = ["hooks"]


def __getattr__(name):
    if name == "mod_tracker":
        import importlib
        return importlib.import_module(__name__ + ".mod_tracker")
    from .. import _missing
    raise _missing.missing("module 'hookgrad.utils'", "torch.utils", name)
