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
