"""Utilities: hook handles (``hookgrad.utils.hooks``) and ``ModTracker``."""
from . import hooks

__all__ = ["hooks"]


def __getattr__(name):
    if name == "mod_tracker":
        import importlib
        return importlib.import_module(__name__ + ".mod_tracker")
    raise AttributeError(f"module 'hookgrad.utils' has no attribute {name!r}")
