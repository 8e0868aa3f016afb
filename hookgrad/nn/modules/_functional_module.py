"""Bases for the layers that are one ``nn.functional`` call: the class names the function
(``_fn``) and, where it has one, the argument it stores; forward and ``extra_repr`` are here.

NOTE: each PyTorch layer stays a class of its own, subclassing ``Module`` through these
private bases only, so ``isinstance(SiLU(), ReLU)`` is False as in PyTorch."""
from .module import Module


class _Inplace(Module):
    """``_fn(input, inplace=self.inplace)``: ``ReLU``, ``SiLU``, ``Mish``, ..."""
    _fn = None

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class _Argument(Module):
    """``_fn(input, value)`` for the one argument named ``_arg``, set by the subclass's
    ``__init__`` through ``super().__init__(value)``: ``GLU``, ``PixelShuffle``, ..."""
    _fn = _arg = None

    def __init__(self, value) -> None:
        super().__init__()
        setattr(self, self._arg, value)

    def forward(self, input):
        return type(self)._fn(input, getattr(self, self._arg))

    def extra_repr(self):
        return f"{self._arg}={getattr(self, self._arg)}"
