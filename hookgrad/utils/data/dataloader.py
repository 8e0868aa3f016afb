"""DataLoader: batches of a dataset, in the sampler's order.

``num_workers > 0`` runs workers as threads that prefetch batches; batch ``i`` is fetched
by worker ``i % num_workers`` and batches are returned in order, so the batches equal
those of ``num_workers=0``.
"""
from __future__ import annotations

import collections
import concurrent.futures
import math
import queue
import threading
from typing import Any

from ._utils import collate as _collate
from ._utils.fetch import _IterableDatasetFetcher, _MapDatasetFetcher
from ._utils.worker import _set_worker_info, get_worker_info
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, _host_rng
from ... import _errors
from ..._arguments import keep

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

default_collate = _collate.default_collate
default_convert = _collate.default_convert


class _DatasetKind:
    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind: int, dataset, auto_collation: bool, collate_fn,
                       drop_last: bool) -> _MapDatasetFetcher | _IterableDatasetFetcher:
        cls = _MapDatasetFetcher if kind == _DatasetKind.Map else _IterableDatasetFetcher
        return cls(dataset, auto_collation, collate_fn, drop_last)


class _InfiniteConstantSampler(Sampler):
    """``None`` forever: the index sampler of an IterableDataset."""

    def __iter__(self):
        while True:
            yield None


def _check_worker_args(num_workers, timeout, prefetch_factor, persistent_workers):
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                         "disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                         "let num_workers > 0 to enable multiprocessing, otherwise set "
                         "prefetch_factor to None.")
    if num_workers > 0 and prefetch_factor is None:
        prefetch_factor = 2
    elif prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    return prefetch_factor


def _check_iterable_args(shuffle, sampler, batch_sampler):
    if shuffle not in {False, None}:
        raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                         f"option, but got shuffle={shuffle}")
    if sampler is not None:
        raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                         f"option, but got sampler={sampler}")
    if batch_sampler is not None:
        raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler "
                         f"option, but got batch_sampler={batch_sampler}")


class DataLoader:
    """DataLoader(dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None, multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False, pin_memory_device='', in_order=True)

    Iterate over ``dataset`` in batches. Each batch is stacked on the host with NumPy and
    put on the device once per field. ``shuffle=True`` draws each epoch's order from
    ``generator`` or hookgrad's global seed (``hookgrad.manual_seed``). Workers are
    threads; they return the same batches in the same order as ``num_workers=0``.

    Example::

        >>> ds = TensorDataset(hookgrad.randn(10, 3), hookgrad.arange(10))
        >>> for x, y in DataLoader(ds, batch_size=4, shuffle=True):
        ...     print(x.shape, y.shape)
        hookgrad.Size([4, 3]) hookgrad.Size([4])
        hookgrad.Size([4, 3]) hookgrad.Size([4])
        hookgrad.Size([2, 3]) hookgrad.Size([2])
    """

    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        prefetch_factor = _check_worker_args(num_workers, timeout, prefetch_factor,
                                             persistent_workers)
        keep(self, locals(), "dataset", "num_workers", "prefetch_factor", "pin_memory",
             "pin_memory_device", "timeout", "worker_init_fn", "multiprocessing_context",
             "in_order")
        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            _check_iterable_args(shuffle, sampler, batch_sampler)
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map
        batch_size, drop_last, sampler, batch_sampler = self._samplers(
            batch_size, shuffle, sampler, batch_sampler, drop_last, generator)
        keep(self, locals(), "batch_size", "drop_last", "sampler", "batch_sampler", "generator")
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called = None
        self._iterator = None
        self.__initialized = True

    def _samplers(self, batch_size, shuffle, sampler, batch_sampler, drop_last, generator):
        """Check the batching options; the defaults PyTorch fills in for those left out."""
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(self.dataset, generator=generator)
            else:
                sampler = SequentialSampler(self.dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        return batch_size, drop_last, sampler, batch_sampler

    @property
    def multiprocessing_context(self) -> Any:
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context) -> None:
        if context is not None and self.num_workers == 0:
            raise ValueError("multiprocessing_context can only be used with multi-process "
                             "loading (num_workers > 0), but got "
                             f"num_workers={self.num_workers}")
        self.__multiprocessing_context = context  # accepted: workers are threads

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler",
                                           "drop_last", "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _ThreadedDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last \
                    else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)


def _shared_seed(generator):
    """A 63-bit seed drawn from ``generator`` or the global key (PyTorch's ``_base_seed``)."""
    return int(_host_rng(generator).integers(0, 2 ** 63 - 1))


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _shared_seed(loader.generator)
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        if not first_iter:
            # NOTE: a persistent iterator's new epoch draws from the key as a new iterator
            # does, so its shuffles equal those of num_workers=0
            self._base_seed = _shared_seed(loader.generator)
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if self._dataset_kind == _DatasetKind.Iterable and \
                self._IterableDataset_len_called is not None and \
                self._num_yielded > self._IterableDataset_len_called:
            msg = (f"Length of IterableDataset {self._dataset} was reported to be "
                   f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                   f"{self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly "
                        "configuring the IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data."
                        "IterableDataset for examples.")
            _errors.warn(msg)
        return data

    def __len__(self):
        return len(self._index_sampler)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = _DatasetKind.create_fetcher(self._dataset_kind, self._dataset,
                                                    self._auto_collation, self._collate_fn,
                                                    self._drop_last)

    def _next_data(self):
        return self._fetcher.fetch(self._next_index())


class _WorkerDone:
    """A worker's IterableDataset is exhausted."""


def _worker_loop(worker_id, loader, base_seed, tasks):
    _set_worker_info(id=worker_id, num_workers=loader.num_workers, seed=base_seed + worker_id,
                     dataset=loader.dataset)

    def new_fetcher():  # an IterableDataset's iterator starts over with each one
        return _DatasetKind.create_fetcher(loader._dataset_kind, loader.dataset,
                                           loader._auto_collation, loader.collate_fn,
                                           loader.drop_last)

    init_error = None
    try:
        if loader.worker_init_fn is not None:
            loader.worker_init_fn(worker_id)
        fetcher = new_fetcher()
    except BaseException as e:  # reported with the first batch this worker is asked for
        init_error = e
    while True:
        task = tasks.get()
        if task is None:
            return
        future, index = task
        if future == "reset":  # a persistent worker starts a new epoch
            fetcher = new_fetcher() if init_error is None else None
            continue
        if not future.set_running_or_notify_cancel():
            continue
        try:
            if init_error is not None:
                raise init_error
            future.set_result(fetcher.fetch(index))
        except StopIteration:
            future.set_result(_WorkerDone)
        except BaseException as e:
            future.set_exception(e)


class _ThreadedDataLoaderIter(_BaseDataLoaderIter):
    """Workers as daemon threads, each with its own task queue; results in order."""

    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch = loader.prefetch_factor * self._num_workers
        self._persistent = loader.persistent_workers
        self._queues = [queue.SimpleQueue() for _ in range(self._num_workers)]
        self._threads = [threading.Thread(target=_worker_loop, daemon=True,
                                          name=f"hookgrad-dataloader-worker-{i}",
                                          args=(i, loader, self._base_seed, q))
                         for i, q in enumerate(self._queues)]
        for t in self._threads:
            t.start()
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        if not first_iter:
            for _, future in self._pending:
                future.cancel()  # batches of an epoch left unfinished
            for q in self._queues:
                q.put(("reset", None))
        self._pending = collections.deque()  # (worker id, future), in batch order
        self._active = [True] * self._num_workers
        self._next_worker = 0
        self._sampler_done = False
        for _ in range(self._prefetch):
            self._try_put_index()

    def _try_put_index(self):
        if self._sampler_done or not any(self._active):
            return
        try:
            index = self._next_index()
        except StopIteration:
            self._sampler_done = True
            return
        while not self._active[self._next_worker]:
            self._next_worker = (self._next_worker + 1) % self._num_workers
        wid = self._next_worker
        self._next_worker = (wid + 1) % self._num_workers
        future = concurrent.futures.Future()
        self._queues[wid].put((future, index))
        self._pending.append((wid, future))

    def _get(self, future):
        timeout = self._timeout if self._timeout > 0 else None
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds") from None

    def _next_data(self):
        while self._pending:
            wid, future = self._pending.popleft()
            data = self._get(future)
            self._try_put_index()
            if data is _WorkerDone:
                self._active[wid] = False
                continue
            return data
        if not self._persistent:
            self._shutdown_workers()
        raise StopIteration

    def _shutdown_workers(self):
        for _, future in getattr(self, "_pending", ()):
            future.cancel()
        for q in getattr(self, "_queues", ()):
            q.put(None)
        self._queues = []

    def __del__(self):
        self._shutdown_workers()


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
