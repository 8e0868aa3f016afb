"""Worker information for DataLoader workers (threads in hookgrad)."""
from __future__ import annotations

import threading

__all__ = ["WorkerInfo", "get_worker_info"]

_local = threading.local()


class WorkerInfo:
    """What a worker knows about itself: ``id``, ``num_workers``, ``seed``, ``dataset``."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


def get_worker_info() -> WorkerInfo | None:
    """get_worker_info() -> WorkerInfo or None

    In a DataLoader worker: its ``WorkerInfo`` (``id``, ``num_workers``, ``seed``,
    ``dataset``). In the main thread: None.

    Example::

        >>> get_worker_info() is None
        True
    """
    return getattr(_local, "info", None)


def _set_worker_info(**kwargs):
    _local.info = WorkerInfo(**kwargs)
