"""Decorators of DataPipe classes: registering a step by name, and marking steps that
cannot guarantee a deterministic order."""
from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterator

from .... import _missing
from .datapipe import IterDataPipe, MapDataPipe

__all__ = ["argument_validation", "functional_datapipe", "guaranteed_datapipes_determinism",
           "non_deterministic", "runtime_validation", "runtime_validation_disabled"]


class functional_datapipe:
    """functional_datapipe(name, enable_df_api_tracing=False)

    Class decorator registering a DataPipe class as the method ``name`` of its family
    (``IterDataPipe`` or ``MapDataPipe``): ``source.name(*args)`` builds
    ``cls(source, *args)``."""

    def __init__(self, name: str, enable_df_api_tracing=False) -> None:
        self.name = name
        self.enable_df_api_tracing = enable_df_api_tracing

    def __call__(self, cls):
        if isinstance(cls, non_deterministic) or isinstance(
                getattr(cls, "__self__", None), non_deterministic):
            IterDataPipe.register_datapipe_as_function(self.name, cls,
                                                       self.enable_df_api_tracing)
        elif issubclass(cls, IterDataPipe):
            IterDataPipe.register_datapipe_as_function(self.name, cls,
                                                       self.enable_df_api_tracing)
        elif issubclass(cls, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        return cls


_determinism = False


class guaranteed_datapipes_determinism:
    """Context manager (in effect from construction) making non-deterministic DataPipes
    (``@non_deterministic``) raise ``TypeError`` when built."""

    def __init__(self) -> None:
        global _determinism
        self.prev = _determinism
        _determinism = True

    def __enter__(self) -> None:
        pass

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        global _determinism
        _determinism = self.prev


class non_deterministic:
    """non_deterministic(cls_or_fn)

    Marks an IterDataPipe class as non-deterministic, or, given ``deterministic_fn``, as
    non-deterministic when ``deterministic_fn(*args, **kwargs)`` says so: building it under
    :class:`guaranteed_datapipes_determinism` then raises ``TypeError``."""
    cls = None

    def __init__(self, arg) -> None:
        if isinstance(arg, type):
            if not issubclass(arg, IterDataPipe):
                raise TypeError("Only `IterDataPipe` can be decorated with `non_deterministic`"
                                f", but {arg.__name__} is found")
            self.cls = arg
        elif callable(arg):
            self.deterministic_fn = arg
        else:
            raise TypeError(f"{arg} can not be decorated by non_deterministic")

    def __call__(self, *args, **kwargs):
        if self.cls is not None:
            if _determinism:
                raise TypeError(
                    f"{self.cls.__name__} is non-deterministic, but you set "
                    "'guaranteed_datapipes_determinism'. You can turn off determinism for "
                    "this DataPipe if that is acceptable for your application")
            return self.cls(*args, **kwargs)
        if not (inspect.isclass(args[0]) and issubclass(args[0], IterDataPipe)):
            raise TypeError(f"Only `IterDataPipe` can be decorated, but {args[0].__name__} "
                            "is found")
        self.cls = args[0]
        return self.deterministic_wrapper_fn

    def deterministic_wrapper_fn(self, *args, **kwargs) -> IterDataPipe:
        res = self.deterministic_fn(*args, **kwargs)
        if not isinstance(res, bool):
            raise TypeError("deterministic_fn of `non_deterministic` decorator is required to "
                            f"return a boolean value, but {type(res)} is found")
        if _determinism and res:
            raise TypeError(
                f"{self.cls.__name__} is non-deterministic with the inputs, but you set "
                "'guaranteed_datapipes_determinism'. You can turn off determinism for this "
                "DataPipe if that is acceptable for your application")
        return self.cls(*args, **kwargs)


# PyTorch checks these against its DataPipe type system (``IterDataPipe[int]``), which
# hookgrad's DataPipes do not have
argument_validation = _missing.not_implemented("torch.utils.data.argument_validation")
runtime_validation = _missing.not_implemented("torch.utils.data.runtime_validation")

_runtime_validation_enabled = True


@contextlib.contextmanager
def runtime_validation_disabled() -> Iterator[None]:
    """Turn off ``runtime_validation``'s checks inside the block."""
    global _runtime_validation_enabled
    prev, _runtime_validation_enabled = _runtime_validation_enabled, False
    try:
        yield
    finally:
        _runtime_validation_enabled = prev
