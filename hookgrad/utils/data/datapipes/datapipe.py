"""The DataPipe base classes (``torch.utils.data.datapipes.datapipe``; deprecated in
PyTorch): iterable and map-style datasets whose pipeline steps are registered by name
(``functional_datapipe``) and chained as methods, ``source.step(...)``.

hookgrad has the bases, the registration and ``DataChunk``; PyTorch's built-in steps
(``map``, ``filter``, ``batch``, ...) are not registered, and an IterDataPipe may be
iterated by several iterators at once (PyTorch invalidates all but the newest).
"""
from __future__ import annotations

import functools
from collections.abc import Iterator

from .... import _missing
from ..dataset import Dataset, IterableDataset

__all__ = ["DataChunk", "DFIterDataPipe", "IterDataPipe", "MapDataPipe"]


class DataChunk(list):
    """DataChunk(items)

    A list of items a batching DataPipe yields; ``raw_iterator()`` iterates the items it was
    made from."""

    def __init__(self, items):
        items = list(items)
        super().__init__(items)
        self.items = items

    def as_str(self, indent: str = "") -> str:
        return indent + "[" + ", ".join(str(i) for i in iter(self)) + "]"

    def __iter__(self):
        yield from super().__iter__()

    def raw_iterator(self) -> Iterator:
        yield from self.items


class _Registry:
    """The named steps of one DataPipe family, looked up as methods of its instances."""
    functions: dict = {}

    def __getattr__(self, name):
        family = self._family
        if name in family.functions:
            step = family.functions[name]
            bound = functools.partial(step, self)
            functools.update_wrapper(bound, step, assigned=("__doc__",))
            return bound
        raise _missing.missing(f"'{type(self).__name__}' object",
                               f"torch.utils.data.{family.__name__}", name)

    @classmethod
    def register_function(cls, function_name, function) -> None:
        """Make ``function(datapipe, *args, **kwargs)`` callable as
        ``datapipe.function_name(*args, **kwargs)``."""
        cls.functions[function_name] = function

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register,
                                      enable_df_api_tracing=False) -> None:
        """Make ``source.function_name(*args)`` build ``cls_to_register(source, *args)``."""
        if function_name in cls.functions:
            raise Exception(f"Unable to add DataPipe function name {function_name} as it is "
                            "already taken")
        if enable_df_api_tracing:
            _missing.not_implemented("torch.utils.data.IterDataPipe (DataFrame tracing)")()

        def build(source_dp, *args, **kwargs):
            return cls_to_register(source_dp, *args, **kwargs)

        functools.update_wrapper(build, cls_to_register, assigned=("__doc__",))
        cls.functions[function_name] = build

    def __repr__(self):
        return self.__class__.__qualname__

    def __str__(self):
        return self.__class__.__qualname__

    def __dir__(self):
        return list(super().__dir__()) + list(self._family.functions)

    def reset(self) -> None:
        """Called before each new iteration; subclasses reset their state here."""


class IterDataPipe(_Registry, IterableDataset):
    """An iterable-style DataPipe: a step of a data pipeline, built on a source DataPipe
    and yielding its (transformed) items. Steps registered with
    ``@functional_datapipe("name")`` chain as methods: ``source.name(...)``. Example::

        >>> @functional_datapipe("double")
        ... class Doubler(IterDataPipe):
        ...     def __init__(self, source):
        ...         self.source = source
        ...     def __iter__(self):
        ...         for x in self.source:
        ...             yield 2 * x
    """
    functions: dict = {}

    def __iter__(self):
        return self


class MapDataPipe(_Registry, Dataset):
    """A map-style DataPipe: ``__getitem__`` and ``__len__`` over a source DataPipe; steps
    registered with ``@functional_datapipe("name")`` chain as methods."""
    functions: dict = {}


class DFIterDataPipe(IterDataPipe):
    """An IterDataPipe of DataFrames (PyTorch's DataFrame tracing is not implemented)."""

    def _is_dfpipe(self):
        return True


IterDataPipe._family = IterDataPipe
MapDataPipe._family = MapDataPipe
DFIterDataPipe._family = IterDataPipe

__getattr__ = _missing.module_getattr(__name__)
