"""``torch.mps.profiler``: Metal's profiler and capture, which need the MPS backend."""
import contextlib

from .. import _missing
from .._absent_backend import no_binding
from ._backend import MPS

__all__ = ["start", "stop", "profile", "is_metal_capture_enabled", "is_capturing_metal",
           "metal_capture"]


def start(mode="interval", wait_until_completed=False):
    """Start Metal's OS Signpost tracing (raises: no MPS backend)."""
    mode.lower().replace(" ", "")
    raise MPS.without("profilerStartTrace")


def stop():
    """Stop Metal's OS Signpost tracing (raises: no MPS backend)."""
    raise MPS.without("profilerStopTrace")


@contextlib.contextmanager
def profile(mode="interval", wait_until_completed=False):
    """Trace the block with Metal's OS Signposts (raises on entry: no MPS backend)."""
    try:
        start(mode, wait_until_completed)
        yield
    finally:
        stop()


def is_metal_capture_enabled():
    """Whether Metal capture is enabled (needs the MPS binding)."""
    raise no_binding("_mps_isCaptureEnabled")


def is_capturing_metal():
    """Whether Metal is capturing (needs the MPS binding)."""
    raise no_binding("_mps_isCapturing")


@contextlib.contextmanager
def metal_capture(fname):
    """Capture the block's Metal work to ``fname`` (needs the MPS binding)."""
    try:
        raise no_binding("_mps_startCapture")
        yield  # noqa - unreachable: keeps this a generator, as PyTorch's
    finally:
        raise no_binding("_mps_stopCapture")


__getattr__ = _missing.module_getattr(__name__)
