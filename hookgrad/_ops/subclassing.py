"""``Tensor.as_subclass(cls)``: the same tensor, seen as an instance of a ``Tensor``
subclass."""
from __future__ import annotations

from .._tensor import Tensor
from . import shape, views
from .registry import export


@export(function=False)
def as_subclass(self, cls) -> Tensor:
    """``as_subclass(cls)``: an alias of this tensor (the same elements and history, an
    ``AliasBackward0`` node when it requires grad) whose type is ``cls``, a subclass of
    ``Tensor``. ``cls.__init__`` is not called."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    out = views.view_apply(shape.ALIAS, self)
    if cls is not Tensor:
        object.__setattr__(out, "__class__", cls)  # a Tensor just made: nothing to count
    return out


def _make_subclass(cls, data, require_grad=False, dispatch_sizes_strides_policy=None,
                   dispatch_device=False, dispatch_layout=False, _extra_dispatch_keys=None,
                   storage_size=None):
    """``Tensor._make_subclass(cls, data, require_grad=False)``: a ``cls`` instance that
    shares ``data``'s elements (and version counter), outside any graph, whose
    ``requires_grad`` is ``require_grad``. ``cls.__init__`` is not called."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"cls must be a type (got {type(cls).__name__})")
    if not isinstance(data, Tensor):
        raise TypeError(f"_make_subclass(): argument 'data' (position 2) must be Tensor, "
                        f"not {type(data).__name__}")
    out = data.detach()
    if cls is not Tensor:
        object.__setattr__(out, "__class__", cls)  # a Tensor just made: nothing to count
    out.requires_grad_(require_grad)
    return out


Tensor._make_subclass = staticmethod(_make_subclass)
