"""``torch.signal``: signal processing (``torch.signal.windows``)."""
from .. import _missing
from . import windows  # noqa: F401

__all__ = ["windows"]

__getattr__ = _missing.module_getattr(__name__)
