"""Intel ITT ranges (``torch.profiler.itt``). hookgrad behaves as a PyTorch build without
ITT: ``is_available()`` is False and the range functions raise ``RuntimeError``."""
import contextlib

from .. import _missing

__all__ = ["is_available", "range_push", "range_pop", "mark", "range"]


def _no_itt():
    raise RuntimeError("ITT functions not installed. Are you sure you have a ITT build?")


def is_available() -> bool:
    """Whether ITT ranges can be recorded: never in hookgrad."""
    return False


def range_push(msg):
    """Push an ITT range named ``msg`` (raises: no ITT)."""
    _no_itt()


def range_pop():
    """Pop the innermost ITT range (raises: no ITT)."""
    _no_itt()


def mark(msg):
    """Mark an instant event ``msg`` (raises: no ITT)."""
    _no_itt()


@contextlib.contextmanager
def range(msg, *args, **kwargs):
    """Context manager or decorator pushing the range ``msg.format(*args, **kwargs)`` for
    its scope (raises: no ITT)."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()


__getattr__ = _missing.module_getattr(__name__)
