"""``torch.autocast``: run the ops of autocast's lists in lower precision (``matmul``,
``linear``, convolutions, attention) or in float32 (losses, reductions that need range),
casting their inputs first. The lists and the casts are ``hookgrad._ops.autocast``.
"""
from __future__ import annotations

import functools

from .. import _device, _dtype
from .._ops import autocast as _ac
from .. import _errors

__all__ = ["autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]

_state = _ac.state
_SUPPORTED = (_dtype.bfloat16, _dtype.float16)


def _device_type(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if device_type not in _ac.DEVICES:
        raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
    return device_type


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast can run on ``device_type`` (``"cpu"`` or ``"cuda"`` in hookgrad)."""
    return device_type in _ac.DEVICES


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for ``device_type`` in this thread."""
    return _state.enabled[_device_type(device_type)]


def set_autocast_enabled(device_type, enabled=None) -> None:
    """``set_autocast_enabled(device_type, enabled)`` (or the older ``(enabled)``, CUDA)."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _ac.set_enabled(_device_type(device_type), enabled)


def get_autocast_dtype(device_type: str):
    """The lower-precision dtype autocast uses on ``device_type``."""
    return _state.dtype[_device_type(device_type)]


def set_autocast_dtype(device_type: str, dtype) -> None:
    _state.dtype[_device_type(device_type)] = dtype


def is_autocast_cache_enabled() -> bool:
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Forget the cached lower-precision copies of float32 leaves."""
    _ac.clear_cache()


def autocast_increment_nesting() -> int:
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting() -> int:
    _state.nesting -= 1
    return _state.nesting


# the per-device spellings PyTorch keeps, deprecated there: each warns as PyTorch's does
def _deprecated(old, new, fn):
    def spelled(*args):
        _errors.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                     DeprecationWarning)
        return fn(*args)
    spelled.__name__ = spelled.__qualname__ = old[:old.index("(")]
    spelled.__doc__ = f"``torch.{old}``: deprecated for ``torch.{new}``."
    return spelled


is_autocast_cpu_enabled = _deprecated("is_autocast_cpu_enabled()",
                                      "is_autocast_enabled('cpu')",
                                      functools.partial(is_autocast_enabled, "cpu"))
set_autocast_cpu_enabled = _deprecated("set_autocast_cpu_enabled(enabled)",
                                       "set_autocast_enabled('cpu', enabled)",
                                       functools.partial(set_autocast_enabled, "cpu"))
get_autocast_cpu_dtype = _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')",
                                     functools.partial(get_autocast_dtype, "cpu"))
set_autocast_cpu_dtype = _deprecated("set_autocast_cpu_dtype(dtype)",
                                     "set_autocast_dtype('cpu', dtype)",
                                     functools.partial(set_autocast_dtype, "cpu"))
get_autocast_gpu_dtype = _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')",
                                     functools.partial(get_autocast_dtype, "cuda"))
set_autocast_gpu_dtype = _deprecated("set_autocast_gpu_dtype(dtype)",
                                     "set_autocast_dtype('cuda', dtype)",
                                     functools.partial(set_autocast_dtype, "cuda"))


def _cuda_available():
    return bool(_device.platform_devices("gpu"))


class autocast:
    """``autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``

    A context manager (or decorator) in which the ops of autocast's lists run in
    ``dtype`` (``torch.bfloat16`` on CPU, ``torch.float16`` on CUDA by default) or in
    float32, their inputs cast first. Example::

        >>> with torch.autocast("cpu"):
        ...     y = model(x)          # linear layers in bfloat16
        >>> y.dtype
        torch.bfloat16

    Backward runs outside it: gradients come back in each parameter's own dtype.
    """

    def __init__(self, device_type: str, dtype=None, enabled: bool = True,
                 cache_enabled: bool | None = None):
        self.device = _device_type(device_type)
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = (is_autocast_cache_enabled() if cache_enabled is None
                               else cache_enabled)
        if enabled:
            if self.device == "cuda" and not _cuda_available():
                _errors.warn("CUDA is not available or torch_xla is imported. Disabling "
                             "autocast.")
                enabled = False
            elif self.fast_dtype not in _SUPPORTED:
                name = self.device.upper()
                _errors.warn(
                    f"In {name} autocast, but the target dtype is not supported. Disabling "
                    f"autocast.\n{name} Autocast only supports dtypes of "
                    + ", ".join(map(str, _SUPPORTED)) + " currently.")
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with type(self)(self.device, self.fast_dtype, self._enabled,
                            self._cache_enabled):
                return func(*args, **kwargs)
        return decorate_autocast


def _cast(value, device_type, dtype):
    # custom_fwd's cast_inputs: floating Tensors of device_type, in any container
    from .._tensor import Tensor
    if isinstance(value, Tensor):
        eligible = value.is_floating_point() and value.device.type == device_type \
            and value.dtype is not _dtype.float64
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, dict):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """Decorate an ``autograd.Function``'s ``forward``: it runs with the autocast state of
    its caller (or, with ``cast_inputs``, with autocast off and its floating inputs cast to
    ``cast_inputs``); ``custom_bwd`` makes ``backward`` run with the same state."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs),
                           **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorate an ``autograd.Function``'s ``backward`` (see :func:`custom_fwd`)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
