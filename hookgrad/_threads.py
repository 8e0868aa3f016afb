"""``set_num_threads`` / ``get_num_threads`` and the inter-op pair: the counts are recorded
and read back; XLA sizes its own thread pools when the backend starts (docs/differences.md)."""
import os

_counts = {"intra": None, "inter": None}


def _positive(name, n):
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return n


def set_num_threads(int):  # noqa: A002 - PyTorch's parameter name
    """``set_num_threads(int)``: record the number of intra-op threads (XLA keeps its own
    pool: the value is only read back by :func:`get_num_threads`)."""
    _counts["intra"] = _positive("set_num_threads", int)


def get_num_threads():
    """``get_num_threads()``: the count given to :func:`set_num_threads`, else the number
    of CPUs."""
    return _counts["intra"] or os.cpu_count() or 1


def set_num_interop_threads(int):  # noqa: A002
    """``set_num_interop_threads(int)``: record the number of inter-op threads (read back
    by :func:`get_num_interop_threads`)."""
    _counts["inter"] = _positive("set_num_interop_threads", int)


def get_num_interop_threads():
    """``get_num_interop_threads()``: the count given to :func:`set_num_interop_threads`,
    else the number of CPUs."""
    return _counts["inter"] or os.cpu_count() or 1


def init_num_threads():
    """``init_num_threads()``: set up the calling thread's intra-op thread count; nothing to
    do, as XLA keeps its own thread pools (docs/differences.md)."""
