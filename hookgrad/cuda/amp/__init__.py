"""``torch.cuda.amp`` (deprecated in PyTorch for :mod:`hookgrad.amp`): ``autocast`` and
``GradScaler`` fixed to ``"cuda"``, each warning as PyTorch's do."""

from ... import amp as _amp
from ...amp.autocast_mode import custom_bwd as _custom_bwd, custom_fwd as _custom_fwd
from ... import _errors

__all__ = ["autocast", "custom_fwd", "custom_bwd", "GradScaler"]


def _deprecated(name, new):
    _errors.warn(f"`torch.cuda.amp.{name}(args...)` is deprecated. Please use "
                 f"`torch.amp.{new}('cuda', args...)` instead.", FutureWarning)


class autocast(_amp.autocast):
    """``torch.cuda.amp.autocast(args...)``: ``torch.amp.autocast("cuda", args...)``."""

    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
        _deprecated("autocast", "autocast")
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """``torch.cuda.amp.GradScaler(args...)``: ``torch.amp.GradScaler("cuda", args...)``."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        _deprecated("GradScaler", "GradScaler")
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """``torch.amp.custom_fwd(device_type="cuda", ...)``."""
    _errors.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                 "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.",
                 FutureWarning)
    return _custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    """``torch.amp.custom_bwd(device_type="cuda")``."""
    _errors.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                 "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.",
                 FutureWarning)
    return _custom_bwd(bwd, device_type="cuda")



from ... import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
