"""``torch.amp``: automatic mixed precision — :class:`autocast` and :class:`GradScaler`."""
from . import autocast_mode, grad_scaler
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["autocast", "custom_bwd", "custom_fwd", "GradScaler", "is_autocast_available"]

from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
