"""``torch.cuda`` streams and events: XLA schedules a device's work itself and hookgrad
exposes no stream. The classes exist for annotations and ``isinstance``; making one
raises ``NotImplementedError``. ``StreamContext(None)`` (and ``stream(None)``) is PyTorch's
no-op context and works."""
import contextlib

from .. import _missing

__all__ = ["Stream", "ExternalStream", "Event", "StreamContext", "stream", "current_stream",
           "default_stream", "set_stream"]

Stream = _missing.not_implemented_class("torch.cuda.Stream")
ExternalStream = _missing.not_implemented_class("torch.cuda.ExternalStream", (Stream,))
Event = _missing.not_implemented_class("torch.cuda.Event")
current_stream = _missing.not_implemented("torch.cuda.current_stream")
default_stream = _missing.not_implemented("torch.cuda.default_stream")
set_stream = _missing.not_implemented("torch.cuda.set_stream")


class StreamContext(contextlib.AbstractContextManager):
    """Run the block on ``stream``. Only ``None`` (keep the current stream, a no-op in
    PyTorch too) is accepted: hookgrad has no stream to switch to."""

    def __init__(self, stream):
        if stream is not None:
            raise NotImplementedError("hookgrad does not implement torch.cuda.StreamContext "
                                      "for a stream yet (only StreamContext(None))")
        self.stream = None

    def __exit__(self, *exc):
        return None


def stream(stream):
    """``StreamContext(stream)``."""
    return StreamContext(stream)


from .. import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
