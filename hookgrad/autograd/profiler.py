"""The autograd profiler (``torch.autograd.profiler``): ``profile`` records a JAX profiler
trace while it is entered; ``record_function`` names ranges in it. Per-op event lists
(``key_averages()``, ``EventList``) and NVTX/ITT ranges are not implemented."""
from __future__ import annotations

from .. import _missing
from .._arguments import keep
from .._profiler import (ProfilerActivity, _JaxTrace, _NoEvents, kineto_available,
                         record_function)

__all__ = ["profile", "record_function", "emit_itt", "emit_nvtx", "load_nvprof",
           "EventList", "FunctionEvent", "ProfilerActivity", "kineto_available"]


class profile(_NoEvents):
    """The autograd profiler's context manager.

    .. code-block:: python

        profile(enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                custom_trace_id_callback=None)

    Records a JAX profiler trace of the code it encloses (with ``enabled=False``, nothing,
    and ``with`` binds None); :meth:`export_chrome_trace` writes it. Example::

        >>> with hookgrad.autograd.profiler.profile() as prof:
        ...     loss.backward()
        >>> prof.export_chrome_trace("backward.json")
    """
    _torch_name = "torch.autograd.profiler.profile"

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None,
                 record_shapes=False, with_flops=False, profile_memory=False,
                 with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None):
        self.enabled = enabled
        self.use_device = "cuda" if use_cuda and use_device is None else use_device
        keep(self, locals(), "record_shapes", "with_flops", "profile_memory", "with_stack",
             "with_modules", "use_cpu")
        self.entered = False
        self._trace = _JaxTrace()

    def __enter__(self):
        if not self.enabled:  # as PyTorch's, nothing to bind
            return None
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._trace.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if self.enabled:
            self._trace.stop()
        return False

    def export_chrome_trace(self, path):
        """Write the recorded trace as Chrome-trace JSON (gzipped for a ``.gz`` path)."""
        self._trace.export_chrome_trace(path)


emit_nvtx = _missing.not_implemented_class("torch.autograd.profiler.emit_nvtx")
emit_itt = _missing.not_implemented_class("torch.autograd.profiler.emit_itt")
EventList = _missing.not_implemented_class("torch.autograd.profiler.EventList", (list,))
FunctionEvent = _missing.not_implemented_class("torch.autograd.profiler.FunctionEvent")
load_nvprof = _missing.not_implemented("torch.autograd.profiler.load_nvprof")

__getattr__ = _missing.module_getattr(__name__)
