"""The global numerics switches (matmul precision, deterministic algorithms), below the
``backends`` submodules that read them."""

import jax

from .._ops import tiered
from .. import _errors

# NOTE: PyTorch's levels onto JAX's default matmul precision: 'highest' is full float32,
# 'high' is TF32 / three bfloat16 passes (JAX 'high'), 'medium' one bfloat16 pass (JAX
# 'bfloat16', i.e. DEFAULT). XLA on CPU computes float32 matmuls in full precision at
# every level.
_TO_JAX = {"highest": "highest", "high": "high", "medium": "bfloat16"}
_FROM_JAX = {"highest": "highest", "float32": "highest", "F32_F32_F32": "highest",
             "high": "high", "tensorfloat32": "high", "TF32_TF32_F32": "high",
             "BF16_BF16_F32_X3": "high"}
# JAX's DEFAULT precision per platform, as PyTorch would name it
_PLATFORM_DEFAULT = {"cpu": "highest", "gpu": "high", "tpu": "medium"}
_deterministic = {"mode": False, "warn_only": False}


def set_float32_matmul_precision(precision):
    """Set the internal precision of float32 matrix multiplications (and convolutions):
    ``"highest"``, ``"high"`` or ``"medium"``, as JAX's ``jax_default_matmul_precision``.

    Example::

        >>> hookgrad.set_float32_matmul_precision("medium")
    """
    if not isinstance(precision, str):
        raise RuntimeError("set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in _TO_JAX:
        _errors.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                     "setFloat32MatmulPrecision call has no effect.", UserWarning)
        return
    jax.config.update("jax_default_matmul_precision", _TO_JAX[precision])


def get_float32_matmul_precision():
    """The current float32 matmul precision: ``"highest"``, ``"high"`` or ``"medium"``.

    Until it is set, JAX's default precision applies, named as PyTorch would name it for
    the default platform: ``"highest"`` on CPU, ``"high"`` (TF32) on GPU, ``"medium"`` on TPU.
    """
    value = jax.config.jax_default_matmul_precision
    if value is None or value == "default":
        return _PLATFORM_DEFAULT.get(jax.default_backend(), "highest")
    return _FROM_JAX.get(value, "medium")


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Ask for deterministic algorithms. XLA on CPU is deterministic already; hookgrad's
    tiered execution (a program's first calls in NumPy, ``hookgrad/_ops/tiered.py``) is
    off while the mode is on, so a result never depends on when a background compile ends.

    NOTE: on GPU, XLA's determinism is chosen when the backend starts: set
    ``XLA_FLAGS=--xla_gpu_deterministic_ops=true`` before importing JAX. hookgrad records
    the mode (``are_deterministic_algorithms_enabled``) and warns when it cannot honour it.
    """
    if not isinstance(mode, bool):
        raise TypeError("_set_deterministic_algorithms(): argument 'mode' (position 1) must "
                        f"be bool, not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError("_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    if mode and jax.default_backend() == "gpu" and not _gpu_deterministic():
        _errors.warn("use_deterministic_algorithms(True): XLA's GPU kernels are not "
                     "deterministic in this process; restart with XLA_FLAGS="
                     "--xla_gpu_deterministic_ops=true", UserWarning)
    _deterministic.update(mode=mode, warn_only=warn_only)
    tiered._state["deterministic"] = mode


def _gpu_deterministic():
    import os
    return "--xla_gpu_deterministic_ops=true" in os.environ.get("XLA_FLAGS", "")


def are_deterministic_algorithms_enabled():
    """Whether ``use_deterministic_algorithms(True)`` is in effect."""
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled():
    """Whether ``use_deterministic_algorithms`` was called with ``warn_only=True``."""
    return _deterministic["warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode) -> None:
    """``set_deterministic_debug_mode(debug_mode)``: :func:`use_deterministic_algorithms`
    by level: ``"default"``/0 off, ``"warn"``/1 warn only, ``"error"``/2 on."""
    if not isinstance(debug_mode, (int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    """The level :func:`set_deterministic_debug_mode` sets: 0 off, 1 warn only, 2 on."""
    if not _deterministic["mode"]:
        return 0
    return 1 if _deterministic["warn_only"] else 2


def set_flush_denormal(mode) -> bool:
    """``set_flush_denormal(mode)``: whether denormal floats flush to zero on the CPU.
    Returns whether the request holds: XLA's CPU programs always flush denormals, so
    ``True`` holds and ``False`` cannot be honoured (docs/differences.md)."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return mode
