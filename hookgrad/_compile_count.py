"""``hookgrad.compile_count()``: how many programs JAX has built in this process.

A loop whose constants change (a slice position, a row number, a Python float) must reuse
its programs: a new one per iteration costs a trace (milliseconds) and, when it repeats, an
XLA compile (tens of milliseconds). Each new program JAX builds is traced first, so the
count of traces (JAX's ``/jax/core/compile/jaxpr_trace_duration`` events, which count
hookgrad's own programs, its first tier's included, and any the user's code builds) is
the number to watch: it stays flat in a loop that reuses its programs.
"""
import threading

import jax

_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
_count = [0]
_lock = threading.Lock()  # the background compiler traces too


def _listen(event, duration, **kwargs):
    if event == _TRACE_EVENT:
        with _lock:
            _count[0] += 1


jax.monitoring.register_event_duration_secs_listener(_listen)


def compile_count() -> int:
    """The number of programs traced for compilation in this process so far (hookgrad's
    ops, fused chains and compiled steps, and any other ``jax.jit`` program): a loop that
    reuses its programs leaves it unchanged::

        >>> before = hookgrad.compile_count()
        >>> for i in range(10):
        ...     out[i] = base * i
        >>> hookgrad.compile_count() - before   # after the first few iterations: 0
    """
    return _count[0]
