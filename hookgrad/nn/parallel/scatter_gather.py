"""``scatter`` / ``gather``: split inputs over devices along ``dim`` and concatenate outputs
back, as ``torch.nn.parallel.scatter_gather`` does (libraries such as captum import them).

Devices are hookgrad's (``hookgrad.device``): an int is accelerator ``i``, ``-1`` in
``gather`` the CPU. Tensors move with ``Tensor.to``, so a missing device raises the error
moving to it raises.
"""
from __future__ import annotations

from typing import Any

from ..._device import device as _device
from ..._tensor import Tensor

__all__ = ["scatter", "scatter_kwargs", "gather"]


def _target(d):
    if isinstance(d, int):
        return _device("cpu") if d == -1 else _device("cuda", d)
    return _device(d)


def scatter(inputs: Any, target_gpus, dim: int = 0) -> Any:
    """Split every Tensor in ``inputs`` into ``len(target_gpus)`` chunks along ``dim``, one
    per device; other values are repeated. Returns one entry per device (a tuple for a
    tuple of inputs).

    Example::

        >>> scatter((x, 3), ["cpu", "cpu"])   # x of 4 rows
        [(x[:2], 3), (x[2:], 3)]
    """
    targets = [_target(d) for d in target_gpus]

    def split(obj):
        if isinstance(obj, Tensor):
            return [c.to(t) for c, t in zip(obj.chunk(len(targets), dim), targets)]
        if isinstance(obj, tuple) and obj:
            parts = list(zip(*map(split, obj)))
            return [type(obj)(*p) if hasattr(obj, "_fields") else p for p in parts]
        if isinstance(obj, list) and obj:
            return [list(p) for p in zip(*map(split, obj))]
        if isinstance(obj, dict) and obj:
            return [type(obj)(p) for p in zip(*map(split, obj.items()))]
        return [obj] * len(targets)
    if not targets:
        return []
    return split(inputs)


def scatter_kwargs(inputs, kwargs, target_gpus,
                   dim: int = 0) -> tuple[tuple[Any, ...], tuple[dict[str, Any], ...]]:
    """:func:`scatter` of positional and keyword inputs, padded to the same length."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(scattered_inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs: Any, target_device, dim: int = 0) -> Any:
    """Concatenate the per-device ``outputs`` along ``dim`` on ``target_device`` (``-1``:
    the CPU), recursing through tuples, lists and dicts."""
    target = _target(target_device)

    def join(outs):
        first = outs[0]
        if isinstance(first, Tensor):
            from ..._ops.stacking import cat
            return cat([o.to(target) for o in outs], dim)
        if first is None:
            return None
        if isinstance(first, dict):
            if not all(len(first) == len(d) for d in outs):
                raise ValueError("All dicts must have the same number of keys")
            return type(first)((k, join([d[k] for d in outs])) for k in first)
        if isinstance(first, (tuple, list)):
            joined = [join(list(p)) for p in zip(*outs)]
            return type(first)(*joined) if hasattr(first, "_fields") else type(first)(joined)
        return first
    return join(list(outputs))


from ... import _missing as _m  # noqa: E402
__getattr__ = _m.module_getattr(__name__)
