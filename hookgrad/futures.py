"""``torch.futures``: a thread-safe ``Future`` with PyTorch's semantics, and
``collect_all`` / ``wait_all``.

A Future completes once, with a value (``set_result``) or an exception
(``set_exception``). Callbacks run in the thread that completes it, or at once when they
are added to a completed Future.

Example::

    >>> fut = hookgrad.futures.Future()
    >>> doubled = fut.then(lambda f: f.wait() * 2)
    >>> fut.set_result(21)
    >>> doubled.wait()
    42
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["Future", "collect_all", "wait_all"]

_log = logging.getLogger(__name__)
_COMPLETED_TWICE = ("Attempting to mark a completed Future as complete again. Note that a "
                    "Future can only be marked completed once.")


T = TypeVar("T")  # Future[Tensor] in annotations, as libraries write it
S = TypeVar("S")  # the value type of the Future that ``then`` returns


class Future(Generic[T]):
    """The result of an asynchronous computation: ``Future(*, devices=None)``.

    ``devices`` is accepted for PyTorch's signature (CUDA stream synchronization); JAX
    orders device work itself, so it has no effect.
    """

    def __init__(self, *, devices=None):
        from ._device import device
        self._devices = [device("cuda", d) if isinstance(d, int) else device(d)
                         for d in (devices or [])]
        bad = [d for d in self._devices if d.index is None]
        if bad:
            raise ValueError(f"Expected devices to have indices, got {bad[0]}")
        self._cond = threading.Condition()
        self._done = False
        self._result = None
        self._exception = None
        self._callbacks = []

    def done(self) -> bool:
        """Whether the Future has a value or an exception."""
        return self._done

    def wait(self) -> T:
        """Block until the Future completes; return its value or raise its exception."""
        with self._cond:
            self._cond.wait_for(lambda: self._done)
        return self.value()

    def value(self) -> T:
        """The value of a completed Future (its exception is raised)."""
        if not self._done:
            raise RuntimeError("Future.value() was called before the Future completed; "
                               "call wait() to block until it does")
        if self._exception is not None:
            raise self._exception
        return self._result

    def then(self, callback: Callable[[Future[T]], S]) -> Future[S]:
        """A new Future holding ``callback(self)`` once this one completes. An exception in
        ``callback`` completes the new Future with a ``RuntimeError`` naming it."""
        if not callable(callback):
            raise TypeError(f"then(): callback must be callable, got {type(callback).__name__}")
        child = Future()

        def run(fut):
            try:
                result = callback(fut)
            except Exception as e:  # noqa: BLE001 - handed to the child, as PyTorch does
                err = RuntimeError("Got the following error when running the callback: "
                                   f"{type(e).__name__}: {e}")
                err.__cause__ = e
                child.set_exception(err)
            else:
                child.set_result(result)

        self.add_done_callback(run)
        return child

    def add_done_callback(self, callback: Callable[[Future[T]], None]) -> None:
        """Run ``callback(self)`` when the Future completes (now, if it has). Its return
        value is dropped; an exception in it is logged and ignored."""
        if not callable(callback):
            raise TypeError("add_done_callback(): callback must be callable, got "
                            f"{type(callback).__name__}")
        with self._cond:
            if not self._done:
                self._callbacks.append(callback)
                return
        self._run(callback)

    def set_result(self, result: T) -> None:
        """Complete the Future with ``result``, waking waiters and running callbacks."""
        self._complete(result, None)

    def set_exception(self, result: BaseException) -> None:
        """Complete the Future with the exception ``result``: ``wait()`` and ``value()``
        raise it."""
        if not isinstance(result, BaseException):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def _complete(self, result, exception):
        with self._cond:
            if self._done:
                raise RuntimeError(_COMPLETED_TWICE)
            self._result, self._exception, self._done = result, exception, True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for callback in callbacks:
            self._run(callback)

    def _run(self, callback):
        try:
            callback(self)
        except Exception:  # noqa: BLE001 - PyTorch logs a failing done-callback
            _log.exception("Got the following error when running the callback")


def collect_all(futures: list[Future]) -> Future[list[Future]]:
    """A Future completing, with the list of ``futures``, when all of them have; it holds
    the first exception among them if any failed."""
    futures = list(futures)
    bad = [f for f in futures if not isinstance(f, Future)]
    if bad:
        raise TypeError(f"collect_all(): expected a list of Futures, got {type(bad[0]).__name__}")
    combined = Future()
    if not futures:
        combined.set_result([])
        return combined
    remaining = [len(futures)]
    lock = threading.Lock()

    def one_done(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            failed = next((f._exception for f in futures if f._exception is not None), None)
            if failed is None:
                combined.set_result(futures)
            else:
                combined.set_exception(failed)

    for f in futures:
        f.add_done_callback(one_done)
    return combined


def wait_all(futures: list[Future]) -> list[Any]:
    """Wait for all ``futures``; their values as a list (the first exception is raised)."""
    return [f.wait() for f in collect_all(futures).wait()]


from . import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
