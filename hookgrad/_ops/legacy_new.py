"""The legacy constructor: ``Tensor.new(...)`` and ``torch.FloatTensor(...)``.

``new(*sizes)`` is uninitialised (hookgrad: zeros), ``new(data)`` copies a sequence (a
tuple is data, only a ``Size`` is a shape), ``new(tensor)`` aliases a tensor of the same
dtype, ``new()`` is empty; the dtype is the type's and no ``dtype=`` is accepted.
"""
from __future__ import annotations

from .. import _dtype
from .._tensor import Size, Tensor
from .registry import export

_SIGNATURES = (" * (*, torch.device device = None)\n      didn't match because some of the "
               "keywords were incorrect: {kw}\n * (torch.Storage storage)\n * (Tensor other)\n"
               " * (tuple of ints size, *, torch.device device = None)\n"
               " * (object data, *, torch.device device = None)\n")


def legacy_new(dtype, device, args, kwargs, cpu_only) -> Tensor:
    """A Tensor of ``dtype`` on ``device`` from the legacy constructor's ``args``;
    ``cpu_only``: the legacy types' rule (``torch.FloatTensor`` makes CPU tensors)."""
    from .._factory import empty, tensor
    from . import shape, views
    bad = [k for k in kwargs if k != "device"]
    if bad:
        got = ", ".join([type(a).__name__ for a in args] +
                        [f"{k}={type(kwargs[k]).__module__.replace('hookgrad._dtype', 'torch')}"
                         f".{type(kwargs[k]).__name__}" for k in bad])
        raise TypeError(f"new() received an invalid combination of arguments - got ({got}), "
                        "but expected one of:\n" + _SIGNATURES.format(kw=", ".join(bad)))
    if kwargs.get("device") is not None:
        asked = _dtype.device(kwargs["device"])
        if cpu_only and asked.type != "cpu" or not cpu_only and asked.type != device.type:
            raise RuntimeError(f"legacy constructor expects device type: {device.type} but "
                               f"device type: {asked.type} was passed")
    if not args:
        return empty(0, dtype=dtype, device=device)
    first = args[0]
    if len(args) == 1 and isinstance(first, Tensor):
        if first.dtype is not dtype:
            raise TypeError(f"expected {dtype} (got {first.dtype})")
        return views.view_apply(shape.ALIAS, first)
    if len(args) == 1 and isinstance(first, Size):
        return empty(first, dtype=dtype, device=device)
    if len(args) == 1 and not isinstance(first, int):
        if isinstance(first, str):
            raise TypeError("new(): invalid data type 'str'")
        return tensor(first, dtype=dtype, device=device)
    for i, a in enumerate(args):
        if not isinstance(a, int) or isinstance(a, bool):
            raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {i + 1} "
                            f"with error \"type must be tuple of ints,but got "
                            f"{type(a).__name__}\"")
    return empty(*args, dtype=dtype, device=device)


@export(function=False)
def new(self, *args, **kwargs) -> Tensor:
    """``new(*sizes)``, ``new(data)``, ``new(tensor)``, ``new()``: the legacy constructor,
    making a tensor of this tensor's dtype and device (``new_empty``/``new_tensor`` are the
    current forms). New elements of ``new(*sizes)`` are zeros (PyTorch leaves them
    uninitialised)."""
    return legacy_new(self.dtype, self.device, args, kwargs, cpu_only=False)
