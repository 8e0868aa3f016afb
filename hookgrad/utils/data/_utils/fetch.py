"""Fetchers: read one batch (or one sample) of a dataset for a DataLoader iterator."""
from ...._arguments import keep
from .collate import _host_to_tensors, default_collate


class _BaseDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        keep(self, locals(), "dataset", "auto_collation", "collate_fn", "drop_last")


class _IterableDatasetFetcher(_BaseDatasetFetcher):
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in possibly_batched_index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
            raise StopIteration
        return self.collate_fn(data)


class _MapDatasetFetcher(_BaseDatasetFetcher):
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        # NOTE: with the default collate, a dataset that gathers NumPy batches
        # (TensorDataset, a Subset of one) skips building per-sample Tensors: the result
        # equals default_collate(dataset.__getitems__(indices)), one transfer per field.
        fast = getattr(dataset, "_fast_gather", None)  # hookgrad's Datasets have it
        self._gather = fast() if fast is not None and auto_collation and \
            collate_fn is default_collate else None

    def fetch(self, possibly_batched_index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[possibly_batched_index])
        if self._gather is not None and len(possibly_batched_index):
            return _host_to_tensors(self._gather(possibly_batched_index))
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems:
            data = getitems(possibly_batched_index)
        else:
            data = [self.dataset[i] for i in possibly_batched_index]
        return self.collate_fn(data)
