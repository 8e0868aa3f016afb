"""``torch.multiprocessing``: Python's ``multiprocessing`` plus PyTorch's ``spawn`` and
sharing-strategy switches.

hookgrad Tensors cross process boundaries by pickling (their arrays are copied; JAX
arrays are not shared memory), so the sharing strategy is recorded and has no effect.

Example::

    >>> import hookgrad.multiprocessing as mp
    >>> def work(rank, total):
    ...     print(rank, total)
    >>> mp.spawn(work, args=(2,), nprocs=2)  # doctest: +SKIP
"""
import multiprocessing
import multiprocessing.connection
import signal
import sys
import traceback
from multiprocessing import *  # noqa: F401,F403 - torch.multiprocessing re-exports it
from . import _errors

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies",
           "spawn", "start_processes", "ProcessContext", "ProcessException",
           "ProcessRaisedException", "ProcessExitedException"] + multiprocessing.__all__

_ALL_STRATEGIES = {"file_system"} if sys.platform == "darwin" else \
    {"file_descriptor", "file_system"}
_strategy = ["file_system" if sys.platform == "darwin" else "file_descriptor"]


def set_sharing_strategy(new_strategy):
    """Set the strategy for sharing CPU tensors (one of ``get_all_sharing_strategies()``);
    recorded only, see the module's doc."""
    if new_strategy not in _ALL_STRATEGIES:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of "
                             f"{_ALL_STRATEGIES}")
    _strategy[0] = new_strategy


def get_sharing_strategy():
    """The current strategy for sharing CPU tensors."""
    return _strategy[0]


def get_all_sharing_strategies():
    """The strategies this platform supports."""
    return set(_ALL_STRATEGIES)


class ProcessException(Exception):
    """A spawned process failed: ``error_index`` is its rank, ``pid`` its process id."""

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised an exception; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code or was killed by a signal."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _wrap(fn, i, args, errors):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent is stopping us
    except Exception:  # noqa: BLE001 - reported to the parent, which raises it
        errors.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes ``start_processes(..., join=False)`` started; ``join`` them."""

    def __init__(self, processes, error_queues):
        self.processes = processes
        self.error_queues = error_queues

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None, grace_period=None):
        """Wait up to ``timeout`` seconds for a process to end. True when all have ended
        successfully, False while some run; a failure stops the others and raises
        ``ProcessRaisedException`` / ``ProcessExitedException``."""
        running = [p for p in self.processes if p.exitcode is None]
        if running:
            multiprocessing.connection.wait([p.sentinel for p in running], timeout=timeout)
        failed = next((i for i, p in enumerate(self.processes)
                       if p.exitcode not in (None, 0)), None)
        if failed is None:
            return all(p.exitcode == 0 for p in self.processes)
        for p in self.processes:
            if p.is_alive():
                p.terminate()
            p.join(grace_period)
        self._raise(failed)

    def _raise(self, index):
        process, errors = self.processes[index], self.error_queues[index]
        if not errors.empty():
            msg = (f"\n\n-- Process {index:d} terminated with the following error:\n"
                   f"{errors.get()}")
            raise ProcessRaisedException(msg, index, process.pid)
        code = process.exitcode
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"<Unknown signal {-code}>"
            raise ProcessExitedException(f"process {index:d} terminated with signal {name}",
                                         index, process.pid, code, name)
        raise ProcessExitedException(f"process {index:d} terminated with exit code {code:d}",
                                     index, process.pid, code)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run ``fn(i, *args)`` for ``i`` in ``range(nprocs)``, each in a new process started
    by ``start_method``. With ``join`` wait for all (a failure raises); else return a
    ``ProcessContext``."""
    ctx = multiprocessing.get_context(start_method)
    processes, error_queues = [], []
    for i in range(nprocs):
        errors = ctx.SimpleQueue()
        process = ctx.Process(target=_wrap, args=(fn, i, args, errors), daemon=daemon)
        process.start()
        processes.append(process)
        error_queues.append(errors)
    context = ProcessContext(processes, error_queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """``start_processes`` with the ``spawn`` start method (others warn and are replaced)."""
    if start_method != "spawn":
        _errors.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                     "To use a different start_method use:\n\t\t "
                     "torch.multiprocessing.start_processes(...)", FutureWarning)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")


from . import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
