"""Utilities: hook handles (``hookgrad.utils.hooks``), ``ModTracker``, activation
checkpointing (``hookgrad.utils.checkpoint``) and ``data`` (datasets, DataLoader)."""
from . import hooks

__all__ = ["hooks"]


def __getattr__(name):
    if name in ("mod_tracker", "checkpoint", "data", "_pytree", "_python_dispatch",
                "model_zoo"):
        import importlib
        return importlib.import_module(__name__ + "." + name)
    from .. import _missing
    raise _missing.missing("module 'hookgrad.utils'", "torch.utils", name)
