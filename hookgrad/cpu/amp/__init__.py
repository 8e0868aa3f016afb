"""``torch.cpu.amp`` (deprecated in PyTorch for :mod:`hookgrad.amp`): ``autocast`` and
``GradScaler`` fixed to ``"cpu"``, each warning as PyTorch's do."""

from ... import _dtype
from ... import amp as _amp
from ... import _errors

__all__ = ["autocast", "GradScaler"]


def _deprecated(name):
    _errors.warn(f"`torch.cpu.amp.{name}(args...)` is deprecated. Please use "
                 f"`torch.amp.{name}('cpu', args...)` instead.", FutureWarning)


class autocast(_amp.autocast):
    """``torch.cpu.amp.autocast(args...)``: ``torch.amp.autocast("cpu", args...)``."""

    def __init__(self, enabled: bool = True, dtype=_dtype.bfloat16,
                 cache_enabled: bool = True):
        _deprecated("autocast")
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """``torch.cpu.amp.GradScaler(args...)``: ``torch.amp.GradScaler("cpu", args...)``."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        _deprecated("GradScaler")
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


from ... import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
