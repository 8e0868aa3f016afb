"""``torch.Stream`` and ``torch.Event``, device-agnostic, as PyTorch's behave on a device
without streams (the CPU, the meta device): one stream that has always finished, events
that cannot be recorded.

On an accelerator XLA schedules its own streams, so constructing one for ``cuda`` raises
"does not implement" (the ``torch.cuda.Stream`` row of docs/differences.md).
"""
from __future__ import annotations

from typing import Any

from ._dtype import device as _device

_NO_EVENTS = "cpu backend doesn't support events."


def _stream_device(device) -> _device:
    d = _device("cpu") if device is None else device if isinstance(device, _device) \
        else _device(device)
    if d.type not in ("cpu", "meta"):
        from . import _device as devices
        if d.type == "cuda" and devices.platform_devices("gpu"):
            raise NotImplementedError("hookgrad does not implement torch.Stream/torch.Event "
                                      "on cuda yet: XLA schedules its own streams")
        raise RuntimeError(f"PyTorch is not linked with support for {d.type} devices")
    return _device(d.type)


class Stream:
    """``Stream(device=None, *, priority=0)``: an in-order queue of work on ``device``.
    A CPU stream runs everything at once: it has always finished."""

    def __init__(self, device=None, *, priority: int = 0):
        self._device = _stream_device(device)

    @property
    def device(self) -> _device:
        return self._device

    @property
    def device_type(self) -> int:
        return 0 if self._device.type == "cpu" else 14  # c10's DeviceType numbers

    @property
    def device_index(self) -> int:
        return -1

    @property
    def stream_id(self) -> int:
        return 0

    def query(self) -> bool:
        """Whether all work queued on the stream has finished: True."""
        return True

    def synchronize(self) -> None:
        """Wait for the stream's work: nothing is pending."""

    def wait_event(self, event: Event) -> None:
        """Make later work on this stream wait for ``event``: it has completed."""

    def wait_stream(self, stream: Stream) -> None:
        """Make later work wait for ``stream``'s: needs an event, which the CPU lacks."""
        raise RuntimeError(_NO_EVENTS)

    def record_event(self, event: Any = None) -> Event:
        """Record an event on this stream: the CPU has no events."""
        raise RuntimeError(_NO_EVENTS)

    def is_capturing(self) -> bool:
        """Whether a graph capture is under way on this stream: False."""
        return False

    @property
    def native_handle(self) -> int:
        raise RuntimeError("Backend doesn't support getting stream native handle.")

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc) -> None:
        return None

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and other._device == self._device

    def __hash__(self) -> int:
        return hash((Stream, self._device.type))

    def __repr__(self) -> str:
        return (f"torch.Stream device_type={self._device.type}, device_index=-1, "
                "stream_id=0")


class Event:
    """``Event(device=None, *, enable_timing=False, blocking=False, interprocess=False)``:
    a marker in a stream's work. A CPU event is always complete and cannot be recorded."""

    def __init__(self, device=None, *, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False):
        self._device = _stream_device(device)
        self._flags = int(enable_timing)  # c10's EventFlag: BACKEND_DEFAULT when timing
        self._timing = enable_timing

    @property
    def device(self) -> _device:
        return self._device

    @property
    def event_id(self) -> int:
        return 0

    def record(self, stream: Any = None) -> None:
        raise RuntimeError(_NO_EVENTS)

    def query(self) -> bool:
        """Whether the work before the event has finished: True."""
        return True

    def synchronize(self) -> None:
        """Wait for the event: it has completed."""

    def wait(self, stream: Any = None) -> None:
        """Make ``stream``'s later work wait for this event: it has completed."""

    def elapsed_time(self, end_event: Event) -> float:
        if not (self._timing and end_event._timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        # a CPU event can never be recorded
        raise ValueError("Both events must be recorded before calculating elapsed time.")

    def ipc_handle(self) -> Any:
        raise RuntimeError(_NO_EVENTS)

    @classmethod
    def from_ipc_handle(cls, device, ipc_handle) -> Event:
        raise RuntimeError(_NO_EVENTS)

    def __repr__(self) -> str:
        return (f"torch.Event device_type={self._device.type}, device_index=-1, "
                f"event_flag={self._flags}, event_id=0")
