"""``torch.profiler.profile`` over JAX's profiler, its step ``schedule`` and the TensorBoard
trace handler."""
from __future__ import annotations

import enum
import os
import socket
import time

from .._profiler import _JaxTrace, _NoEvents, supported_activities
from .. import _errors
from .._arguments import keep

__all__ = ["ProfilerAction", "profile", "schedule", "tensorboard_trace_handler"]


class ProfilerAction(enum.Enum):
    """What the profiler does at a step: nothing, warm up, record, or record and then hand
    the trace to ``on_trace_ready``."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0):
    """A function from step number to :class:`ProfilerAction`: after ``skip_first`` steps,
    cycles of ``wait`` idle, ``warmup`` warm-up and ``active`` recording steps (the last
    one ``RECORD_AND_SAVE``), ``repeat`` times (0: forever). ``skip_first_wait=1`` skips
    the first cycle's wait."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), "
            f"warmup={warmup} (need >= 0), active={active} (need > 0), repeat={repeat} "
            f"(need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        _errors.warn("Profiler won't be using warmup, this can skew profiler results")
    cycle = wait + warmup + active

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:  # the first cycle starts at its warm-up
            step += wait
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False, use_python_export: bool = False):
    """An ``on_trace_ready`` handler writing each trace to ``dir_name`` as
    ``{worker_name}.{time_ns}.pt.trace.json`` (``.gz`` with ``use_gzip``);
    ``worker_name`` defaults to ``{hostname}_{pid}``."""

    def handler_fn(prof) -> None:
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, file_name))

    return handler_fn


class profile(_NoEvents):
    """Profiler context manager.

    .. code-block:: python

        profile(*, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                experimental_config=None, execution_trace_observer=None, acc_events=False,
                use_cuda=None, custom_trace_id_callback=None, post_processing_timeout_s=None)

    Records a JAX profiler trace while the ``schedule`` (called
    with the step number, advanced by :meth:`step`) says ``RECORD``, and calls
    ``on_trace_ready(prof)`` when a recording ends (a ``RECORD_AND_SAVE`` step, or the
    profiler stops). Without ``schedule`` it records from start to stop. Ranges of
    :class:`record_function` appear in the trace. ``export_chrome_trace`` writes the trace;
    the per-op tables (``key_averages()``, ``events()``) are not implemented. Example::

        >>> with hookgrad.profiler.profile(
        ...         schedule=hookgrad.profiler.schedule(wait=1, warmup=1, active=2),
        ...         on_trace_ready=hookgrad.profiler.tensorboard_trace_handler("./log")) as p:
        ...     for batch in loader:
        ...         train_step(batch)
        ...         p.step()
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None,
                 execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        self.activities = set(activities) if activities else supported_activities()
        self.schedule = schedule if schedule is not None else (lambda _: ProfilerAction.RECORD)
        keep(self, locals(), "on_trace_ready", "record_shapes", "profile_memory", "with_stack",
             "with_flops", "with_modules")
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self._trace = _JaxTrace()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()

    def start(self):
        """Start profiling (recording at once if the schedule's first action records)."""
        if self.current_action in _RECORDING:
            self._trace.start()

    def stop(self):
        """Stop profiling; a recording in progress ends and goes to ``on_trace_ready``."""
        self._save()

    def step(self):
        """Mark the end of a step: the schedule's action for the next step takes over."""
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        if previous == ProfilerAction.RECORD_AND_SAVE or (
                previous in _RECORDING and self.current_action not in _RECORDING):
            self._save()
        if self.current_action in _RECORDING and not self._trace.running:
            self._trace.start()

    def _save(self):
        if self._trace.running:
            self._trace.stop()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)

    def export_chrome_trace(self, path: str):
        """Write the last recording as Chrome-trace JSON (gzipped for a ``.gz`` path)."""
        self._trace.export_chrome_trace(path)



from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
