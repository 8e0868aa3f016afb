"""``skip_init``: a Module made without initializing its parameters and buffers (built on
the meta device, then given empty arrays where it is to live)."""
from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs) -> Module:
    """Instantiate ``module_cls(*args, **kwargs)`` without initializing its parameters and
    buffers: they are created on the meta device (nothing drawn or filled), then given
    arrays on ``device`` (``kwargs["device"]``, default ``'cpu'``) whose values are
    unspecified, as ``hookgrad.empty``'s.

    The module must take a ``device`` argument that it passes to the tensors it creates,
    and do no computation on them in its constructor beyond ``nn.init`` functions.

    Example::

        >>> m = nn.utils.skip_init(nn.Linear, 5, 1)
        >>> m.weight.shape
        hookgrad.Size([1, 5])
    """
    # NOTE: a Module class is known by its to_empty (nn.modules imports nn.utils: no import
    # of Module here)
    if not (isinstance(module_cls, type) and callable(getattr(module_cls, "to_empty", None))):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)


from ... import _missing as _m  # noqa: E402

__getattr__ = _m.module_getattr(__name__)
del _m
