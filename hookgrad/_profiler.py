"""What both profilers stand on: ``record_function`` ranges and a JAX trace.

``torch.profiler`` and ``torch.autograd.profiler`` collect Kineto events; hookgrad's record
a JAX profiler trace (``jax.profiler.start_trace``), whose Chrome-trace JSON is what
``export_chrome_trace`` writes, and whose XPlane files TensorBoard's profile plugin reads.
Per-op event lists (``key_averages()``, ``events()``) need Kineto's events: not
implemented.
"""
from __future__ import annotations

import contextlib
import enum
import glob
import gzip
import os
import shutil
import tempfile

import jax

from . import _missing

__all__ = ["ProfilerActivity", "kineto_available", "record_function", "supported_activities"]


class ProfilerActivity(enum.Enum):
    """The kinds of activity a profiler can record (hookgrad records what JAX's profiler
    records on its backend, whichever are asked for)."""
    CPU = 0
    XPU = 1
    MTIA = 4
    CUDA = 2
    HPU = 3
    PrivateUse1 = 5


def kineto_available() -> bool:
    """Whether PyTorch's Kineto profiler library is there: never in hookgrad, whose
    profilers record JAX traces."""
    return False


def supported_activities():
    """The activities the profilers can record: CPU, and CUDA when JAX has a GPU."""
    kinds = {ProfilerActivity.CPU}
    if any(d.platform == "gpu" for d in jax.devices()):
        kinds.add(ProfilerActivity.CUDA)
    return kinds


class record_function(contextlib.ContextDecorator):
    """record_function(name, args=None)

    A context manager or decorator labelling a block of code (a range named ``name``) in
    profiler traces: a ``jax.profiler.TraceAnnotation`` in the trace, and a
    ``jax.named_scope`` on the operations ``hookgrad.compile`` traces inside it. Example::

        >>> with hookgrad.profiler.record_function("attention"):
        ...     y = model.attn(x)
    """

    def __init__(self, name: str, args: str | None = None):
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self._ranges = None

    def __enter__(self):
        self._ranges = contextlib.ExitStack()
        meta = {} if self.args is None else {"args": self.args}
        self._ranges.enter_context(jax.profiler.TraceAnnotation(self.name, **meta))
        self._ranges.enter_context(jax.named_scope(self.name))
        return self

    def __exit__(self, *exc):
        ranges, self._ranges = self._ranges, None
        if ranges is not None:
            ranges.__exit__(*exc)
        return False


class _JaxTrace:
    """One JAX profiler trace into a private directory, exported as a Chrome trace."""

    def __init__(self):
        self._dir = None
        self.running = False

    def start(self):
        if self._dir is not None:
            self._dir.cleanup()
        self._dir = tempfile.TemporaryDirectory(prefix="hookgrad-trace-")
        try:
            jax.profiler.start_trace(self._dir.name)
        except RuntimeError as e:  # JAX records one trace at a time per process
            raise RuntimeError("Profiler is already enabled: hookgrad's profilers record a "
                               "JAX trace, and JAX runs one at a time; stop the other "
                               f"profiler first ({e})") from None
        self.running = True

    def stop(self):
        if self.running:
            self.running = False
            jax.profiler.stop_trace()

    def export_chrome_trace(self, path):
        """Write the trace's Chrome-trace JSON to ``path`` (gzipped when it ends in
        ``.gz``), as ``chrome://tracing`` and Perfetto read it."""
        found = [] if self._dir is None else sorted(glob.glob(
            os.path.join(self._dir.name, "plugins", "profile", "*", "*.trace.json.gz")))
        if not found or self.running:
            raise RuntimeError("No trace to export: export_chrome_trace needs a finished "
                               "profiling run (after the profiler stops or a schedule saves)")
        if path.endswith(".gz"):
            shutil.copyfile(found[-1], path)
            return
        with gzip.open(found[-1], "rb") as src, open(path, "wb") as dst:
            shutil.copyfileobj(src, dst)


class _NoEvents:
    """The methods reading Kineto's per-op events, which a JAX trace does not give:
    calling one raises hookgrad's "does not implement" error."""
    _torch_name = "torch.profiler.profile"

    def _lacks(self, name):
        _missing.not_implemented(f"{self._torch_name}.{name}")()

    def key_averages(self, *args, **kwargs):
        self._lacks("key_averages")

    def events(self):
        self._lacks("events")

    def table(self, *args, **kwargs):
        self._lacks("table")

    def total_average(self):
        self._lacks("total_average")

    def export_stacks(self, *args, **kwargs):
        self._lacks("export_stacks")
