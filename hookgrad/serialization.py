"""``hookgrad.save`` / ``hookgrad.load`` in PyTorch's checkpoint format, and the
``weights_only`` allowlist (``add_safe_globals``, ``safe_globals``).

A file ``hookgrad.save`` writes loads in PyTorch with ``torch.load(f, weights_only=True)``;
a file ``torch.save`` wrote loads in hookgrad without torch installed.
"""
from __future__ import annotations

import contextlib
import os
import pickle
import pickletools
from typing import Any

from ._serialization import _archive, _reader, _safe, _writer
from . import _errors

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "get_unsafe_globals_in_checkpoint"]

DEFAULT_PROTOCOL = 2
_ZIP_MAGIC = b"PK\x03\x04"


def save(obj: object, f, pickle_module=pickle, pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False) -> None:
    """Saves an object to a disk file, in PyTorch's zip checkpoint format.

    ::

        save(obj, f, pickle_module=pickle, pickle_protocol=2,
             _use_new_zipfile_serialization=True)

    Tensors, Parameters, state dicts (with their ``OrderedDict`` and metadata), optimizer
    state dicts and containers of them are written as ``torch.save`` writes them, so
    ``torch.load(f, weights_only=True)`` reads the file. Tensors that hold the same array
    (a Parameter and its ``detach()``) share one storage in the file.

    Args:
        obj: saved object
        f: a file-like object (has to implement write and flush) or a string or
           os.PathLike object containing a file name
        pickle_module: module used for pickling metadata and objects (its ``Pickler``
           must be Python-level, as ``pickle._Pickler`` is)
        pickle_protocol: can be specified to override the default protocol

    Example::

        >>> buffer = io.BytesIO()
        >>> hookgrad.save(model.state_dict(), buffer)
        >>> hookgrad.save(hookgrad.tensor([0, 1, 2, 3, 4]), "tensor.pt")
    """
    if not _is_path(f) and not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a "
                             "'write' attribute")
    if not _use_new_zipfile_serialization:
        raise NotImplementedError(
            "hookgrad.save writes only PyTorch's zip format (the default since PyTorch 1.6); "
            "drop _use_new_zipfile_serialization=False.")
    # pickled first: an unpicklable object leaves the file untouched
    data_pkl, storages = _writer.pickle_obj(obj, pickle_module, pickle_protocol)
    name = _archive.archive_name(f)
    with _opened(f, "wb") as fileobj:
        _writer.write_archive(fileobj, name, data_pkl, storages, not _disable_byteorder_record)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args) -> Any:
    """Loads an object saved with :func:`hookgrad.save` or ``torch.save`` from a file.

    ::

        load(f, map_location=None, pickle_module=pickle, *, weights_only=True, mmap=None,
             **pickle_load_args)

    Tensors come back as hookgrad Tensors and Parameters as ``hookgrad.nn.Parameter``,
    with their values, dtypes, shapes and ``requires_grad``; views into a shared storage
    are rebuilt from their offset and strides (as copies: JAX arrays share no storage).
    Without JAX's x64 mode, ``float64``/``complex128`` tensors load as ``float32``/
    ``complex64`` and ``int64`` as ``int32``, as hookgrad creates them. Torch is not
    needed. Only PyTorch's zip format (``torch.save``'s default since 1.6) is read.

    ``weights_only=True`` (the default unless ``pickle_module`` is given) loads only
    tensors, primitive types, dicts, lists, tuples, ``OrderedDict`` and what
    :func:`add_safe_globals` allows; anything else raises ``pickle.UnpicklingError``
    ("Weights only load failed ..."). ``weights_only=False`` unpickles anything: only for
    files from a trusted source.

    ``map_location`` (a device, a string such as ``'cpu'`` or ``'cuda:0'``, a dict
    remapping location tags, or a callable ``(storage, location) -> storage or None``)
    says which JAX device the tensors go to; without it, tensors saved on the CPU go to
    JAX's default device and ``'cuda:N'`` ones to GPU N. ``mmap=True`` is accepted (``f``
    must then be a path, as in PyTorch); the storages are read into memory either way.

    Example::

        >>> model.load_state_dict(hookgrad.load("model.pt"))
        >>> hookgrad.load("tensors.pt", map_location="cpu")
    """
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                               "specified")
        if pickle_load_args:
            _errors.warn("pickle_load_args only works if `weights_only=False`.")
        pickle_load_args = {"encoding": pickle_load_args.get("encoding", "utf-8")}
    else:
        pickle_load_args.setdefault("encoding", "utf-8")
        if pickle_module is not None and pickle_module is not pickle:
            raise NotImplementedError("hookgrad.load unpickles with the pickle module; "
                                      f"pickle_module={pickle_module!r} is not supported")
    if mmap and not _is_path(f):
        raise ValueError("f must be a file path in order to use the mmap argument")
    with _checkpoint(f) as reader:
        if not weights_only:
            return _reader.load(reader, map_location, False, pickle_load_args)
        try:
            return _reader.load(reader, map_location, True, pickle_load_args)
        except pickle.UnpicklingError as e:
            raise pickle.UnpicklingError(_safe.weights_only_message(str(e))) from None


def _is_path(f):
    return isinstance(f, (str, os.PathLike))


class _opened:
    """``f`` itself, or the file at path ``f`` opened in ``mode`` (closed on exit)."""

    def __init__(self, f, mode):
        self._f, self._mode, self._owned = f, mode, None

    def __enter__(self):
        if _is_path(self._f):
            self._owned = open(os.fspath(self._f), self._mode)
            return self._owned
        return self._f

    def __exit__(self, *exc):
        if self._owned is not None:
            self._owned.close()
        elif "w" in self._mode and hasattr(self._f, "flush"):
            self._f.flush()


def _check_readable(f):
    if _is_path(f):
        return
    for attr in ("read", "seek", "tell"):
        if not hasattr(f, attr):
            raise AttributeError(f"expected 'f' to be string, path, or a file-like object "
                                 f"with a '{attr}' attribute")
    if hasattr(f, "seekable") and not f.seekable():
        raise RuntimeError("You can only torch.load from a file that is seekable. Please "
                           "pre-load the data into a buffer like io.BytesIO and try to load "
                           "from it instead.")


@contextlib.contextmanager
def _checkpoint(f):
    """The archive reader of checkpoint ``f`` (a path or a readable, seekable file)."""
    _check_readable(f)
    with _opened(f, "rb") as fileobj:
        reader = _open_checkpoint(fileobj)
        try:
            yield reader
        finally:
            reader.close()


def _open_checkpoint(fileobj):
    start = fileobj.tell()
    head = fileobj.read(4)
    fileobj.seek(start)
    if head == _ZIP_MAGIC:
        reader = _archive.Reader(fileobj)
        if not reader.has("data.pkl") and reader.has("constants.pkl"):
            reader.close()
            raise RuntimeError("hookgrad.load cannot read TorchScript archives "
                               "(torch.jit.save); save the model's state_dict with torch.save "
                               "instead.")
        return reader
    if not head:
        raise EOFError("Ran out of input: the file is empty")
    if head[:1] == pickle.PROTO:
        raise RuntimeError(
            "hookgrad.load reads PyTorch's zip checkpoint format (torch.save's default since "
            "PyTorch 1.6); this file is in the legacy format, which is not supported. Load it "
            "in PyTorch and save it again: torch.save(torch.load(f), f2).")
    raise RuntimeError("PytorchStreamReader failed reading zip archive: not a ZIP archive. "
                       "The file is neither a torch.save nor a hookgrad.save checkpoint.")


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Marks the given globals as safe for ``weights_only`` load: each a function or class,
    or a ``(function_or_class, "module.qualname")`` tuple naming it as the checkpoint does.

    Example::

        >>> hookgrad.serialization.add_safe_globals([MyClass])
        >>> hookgrad.load("checkpoint.pt", weights_only=True)
    """
    _safe.add(safe_globals)


def get_safe_globals() -> list[Any]:
    """Returns the list of user-added globals that are safe for ``weights_only`` load."""
    return _safe.get()


def clear_safe_globals() -> None:
    """Clears the list of globals that are safe for ``weights_only`` load."""
    _safe.clear()


class safe_globals:
    """Context-manager that adds certain globals as safe for ``weights_only`` load.

    Example::

        >>> with hookgrad.serialization.safe_globals([MyClass]):
        ...     hookgrad.load("checkpoint.pt", weights_only=True)
        >>> hookgrad.serialization.get_safe_globals()
        []
    """

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        _safe.add(self.safe_globals)

    def __exit__(self, *exc):
        _safe.remove(self.safe_globals)


def get_unsafe_globals_in_checkpoint(f) -> list[str]:
    """Returns the ``module.name`` of each function/class in a checkpoint that a
    ``weights_only`` load would refuse."""
    with _checkpoint(f) as reader:
        data = reader.read("data.pkl")
    found = {tuple(arg.split(" ", 1)) for op, arg, _ in pickletools.genops(data)
             if op.name == "GLOBAL"}
    return sorted(f"{m}.{n}" for m, n in found if not _reader.is_safe_global(m, n))


from . import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
