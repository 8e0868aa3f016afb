"""Automatic differentiation: ``backward``, ``grad``, grad modes, the graph and Functions."""
from collections.abc import Mapping, Sequence  # noqa: F401  (PyTorch's module has them)
from typing import cast, overload  # noqa: F401

from . import anomaly_mode, grad_mode, graph  # public paths: aliases of hookgrad._autograd's
from .._autograd.grad_mode import (_force_original_view_tracking,
                                   _is_multithreading_enabled as is_multithreading_enabled,
                                   _is_view_replay_enabled as is_view_replay_enabled,
                                   _unsafe_preserve_version_counter, enable_grad,
                                   enforce_grad_layout_policy,
                                   inference_mode, is_grad_enabled, is_inference_mode_enabled,
                                   no_grad, set_grad_enabled, set_multithreading_enabled)
from .._engine.backward import backward, grad
from .._ops.saved_names import SavedTensor
from .._profiler import ProfilerActivity, kineto_available
from .variable import Variable  # the module first: the ``variable`` function shadows it
from .._autograd.anomaly_mode import (detect_anomaly, is_anomaly_check_nan_enabled,
                                      is_anomaly_enabled, set_detect_anomaly)

__all__ = ["backward", "grad", "Variable", "Function", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "graph", "grad_mode"]
__all__ += ["detect_anomaly", "set_detect_anomaly", "set_multithreading_enabled",
            "enforce_grad_layout_policy"]


def variable(*args, **kwargs):
    """Removed: raises ``RuntimeError``; use ``hookgrad.tensor(...)``."""
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) "
                       "instead")


variable.Variable = Variable  # PyTorch's attribute (FX names Variable through it)


def __getattr__(name):
    if name in ("Function", "function", "once_differentiable", "FunctionCtx",
                "NestedIOFunction"):
        import importlib  # not `from . import function`: that re-enters this __getattr__
        function = importlib.import_module(__name__ + ".function")
        return function if name == "function" else getattr(function, name)
    if name in ("gradcheck", "gradgradcheck"):  # the functions, as torch.autograd has them
        import importlib
        mod = importlib.import_module(__name__ + ".gradcheck")
        globals()[name] = fn = getattr(mod, name)
        return fn
    if name in ("functional", "forward_ad", "profiler", "profiler_util",
                "profiler_legacy"):  # submodules, importable as torch.autograd's
        import importlib
        globals()[name] = mod = importlib.import_module(__name__ + "." + name)
        return mod
    if name in ("set_backward_fusion", "is_backward_fusion_enabled"):  # hookgrad's own
        from .._engine import fusion
        return getattr(fusion, name)
    if name in ("set_lazy_forward", "is_lazy_forward_enabled"):
        from .._ops import lazy
        return getattr(lazy, name)
    if name in ("set_tiered_execution", "is_tiered_execution_enabled"):
        from .._ops import tiered
        return getattr(tiered, name)
    from .. import _missing
    raise _missing.missing("module 'hookgrad.autograd'", "torch.autograd", name)
