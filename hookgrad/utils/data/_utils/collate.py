"""``default_collate`` and ``default_convert``: PyTorch's structure rules, NumPy stacking.

Every field of a batch is stacked on the host with NumPy and put on the device once
(``_host_to_tensor``), whatever its samples were: hookgrad Tensors, NumPy arrays or
Python numbers. Tensors in an autograd graph (or traced) are stacked with
``hookgrad.stack`` instead, so the batch keeps their graph, as PyTorch's does.
"""
from __future__ import annotations

import collections.abc
import copy
import re
from typing import Any

import jax
import numpy as np

from .... import _device, _dtype, _factory
from ...._host_value import readable
from ...._ops.stacking import stack
from ...._tensor import Tensor

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, "
                                  "numbers, dicts or lists; found {}")


def _canonical(arr):
    want = jax.dtypes.canonicalize_dtype(arr.dtype)
    # float64/int64 become float32/int32 without x64, as jnp.asarray makes them
    return arr if arr.dtype == want else arr.astype(want)


def _host_to_tensor(arr):
    """One NumPy array -> one Tensor: a single host-to-device transfer."""
    return Tensor._wrap(_device.from_host(_canonical(arr)))


def _host_to_tensors(arrays):
    """NumPy arrays -> Tensors: one transfer each, issued in one ``device_put`` call."""
    host = [_canonical(a) for a in arrays]
    out = jax.device_put(host)
    for h, a in zip(host, out):  # labels and token ids: their bounds for index checks
        _device.record_bounds(a, h)
    return [Tensor._wrap(a) for a in out]


def _as_tensor(data):
    """``torch.as_tensor`` for NumPy arrays and scalars, through ``_host_to_tensor``."""
    arr = np.asarray(data)
    if arr.dtype == np.float64 and not _dtype.x64_enabled():
        arr = arr.astype(np.float32)
    return _host_to_tensor(arr)


def _is_numpy(data):
    tp = type(data)
    return tp.__module__ == "numpy" and tp.__name__ not in ("str_", "string_")


def _rebuild(data, items, convert):
    """``data``'s container type around ``convert``-ed ``items``, as PyTorch rebuilds it."""
    try:
        if isinstance(data, collections.abc.MutableSequence):
            clone = copy.copy(data)
            for i, v in enumerate(items):
                clone[i] = convert(v)
            return clone
        return type(data)([convert(v) for v in items])
    except TypeError:  # a sequence type that cannot be built from a list
        return [convert(v) for v in items]


def _rebuild_mapping(elem, keys, value_of):
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)
            clone.update({k: value_of(k) for k in keys})
            return clone
        return type(elem)({k: value_of(k) for k in keys})
    except TypeError:
        return {k: value_of(k) for k in keys}


def default_convert(data: Any) -> Any:
    """default_convert(data)

    NumPy arrays and scalars (also inside Mappings, namedtuples and Sequences) become
    Tensors; everything else is returned unchanged. Used when the DataLoader does not
    batch (``batch_size=None``).

    Example::

        >>> default_convert([np.array([0, 1]), 2])
        [tensor([0, 1]), 2]
    """
    if isinstance(data, Tensor):
        return data
    if _is_numpy(data):
        if isinstance(data, np.ndarray) and np_str_obj_array_pattern.search(data.dtype.str):
            return data
        return _as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, data, lambda k: default_convert(data[k]))
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # a list, as PyTorch returns
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild(data, data, default_convert)
    return data


def _check_same_shape(shapes):
    first = shapes[0]
    for i, s in enumerate(shapes):
        if s != first:
            raise RuntimeError("stack expects each tensor to be equal size, but got "
                               f"{list(first)} at entry 0 and {list(s)} at entry {i}")


def collate_tensor_fn(batch, *, collate_fn_map=None) -> Tensor:
    _check_same_shape([tuple(t.shape) for t in batch])
    # NOTE: a value held on the host is read where it is: sending each sample to the device
    # first would cost one transfer per sample instead of one per field
    arrays = [readable(t) for t in batch]
    if any(t.requires_grad for t in batch) or \
            any(isinstance(a, jax.core.Tracer) for a in arrays):
        return stack(list(batch), 0)
    return _host_to_tensor(np.stack([np.asarray(a) for a in arrays]))


def collate_numpy_array_fn(batch, *, collate_fn_map=None) -> Tensor:
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    _check_same_shape([b.shape for b in batch])
    return _as_tensor(np.stack(batch))


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None) -> Tensor:
    return _as_tensor(np.asarray(batch))


def collate_float_fn(batch, *, collate_fn_map=None) -> Tensor:
    return _factory.tensor(batch, dtype=_dtype.float64 if _dtype.x64_enabled()
                           else _dtype.float32)


def collate_int_fn(batch, *, collate_fn_map=None) -> Tensor:
    return _factory.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None) -> Any:
    return batch


default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def _collate_sequence(batch, elem, collate_fn_map):
    it = iter(batch)
    size = len(next(it))
    if not all(len(e) == size for e in it):
        raise RuntimeError("each element in list of batch should be of equal size")
    columns = list(zip(*batch))
    if isinstance(elem, tuple):
        return [collate(c, collate_fn_map=collate_fn_map) for c in columns]
    return _rebuild(elem, columns, lambda c: collate(c, collate_fn_map=collate_fn_map))


def collate(batch, *, collate_fn_map=None) -> Any:
    """collate(batch, *, collate_fn_map=None)

    Collate ``batch`` (a list of samples) by the type of its first element: the function
    ``collate_fn_map`` gives for that type (exact type first, then ``isinstance`` in
    insertion order), else Mappings, namedtuples and Sequences field by field.
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for tp, fn in collate_fn_map.items():
            if isinstance(elem, tp):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, elem, lambda k: collate([d[k] for d in batch],
                                                              collate_fn_map=collate_fn_map))
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        return _collate_sequence(batch, elem, collate_fn_map)
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def default_collate(batch: Any) -> Any:
    """default_collate(batch)

    Stack a list of samples into a batch with a new leading dimension: Tensors, NumPy
    arrays and numbers become one Tensor per field (stacked on the host, one transfer to
    the device); str/bytes stay lists; Mappings, namedtuples and Sequences are collated
    field by field (a tuple sample gives a list, as in PyTorch).

    Example::

        >>> default_collate([(0, 1.0), (1, 2.0)])
        [tensor([0, 1]), tensor([1., 2.])]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
