"""Profiling (``torch.profiler``): :class:`profile` records a JAX profiler trace over the
steps its ``schedule`` picks; :class:`record_function` names ranges in it. Traces open in
TensorBoard's profile plugin, Perfetto or ``chrome://tracing``.

Example::

    >>> with hookgrad.profiler.profile() as prof:
    ...     with hookgrad.profiler.record_function("forward"):
    ...         y = model(x)
    >>> prof.export_chrome_trace("trace.json")
"""
from .._profiler import (ProfilerActivity, kineto_available, record_function,
                         supported_activities)
from . import itt, profiler
from .profiler import ProfilerAction, profile, schedule, tensorboard_trace_handler

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler",
           "ProfilerAction", "ProfilerActivity", "kineto_available", "record_function"]

from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
