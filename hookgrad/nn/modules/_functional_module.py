"""The base of the layers that are one ``nn.functional`` call over arguments they store:
the class names the function (``_fn``) and the arguments (``_args``); ``__init__``, forward
and ``extra_repr`` are here.

NOTE: each PyTorch layer stays a class of its own that keeps its ``__init__`` signature and
subclasses ``Module`` through these private bases only, so ``isinstance(SiLU(), ReLU)`` is
False as in PyTorch."""
from .module import Module


class _Stored(Module):
    """``_fn(input, *values)`` for the arguments named in ``_args``, which the subclass's
    ``__init__`` passes, in that order, to ``super().__init__``. ``extra_repr`` is PyTorch's
    ``name=value, ...``, with ``inplace=True`` shown only when set."""
    _fn = None
    _args = ()

    def __init__(self, *values) -> None:
        super().__init__()
        for name, value in zip(self._args, values):
            setattr(self, name, value)

    def forward(self, input):
        return type(self)._fn(input, *[getattr(self, a) for a in self._args])

    def extra_repr(self):
        return ", ".join(f"{a}={getattr(self, a)}" for a in self._args
                         if a != "inplace" or self.inplace)


class _Inplace(_Stored):
    """``_fn(input, inplace)``: ``ReLU``, ``SiLU``, ``Mish``, ..."""
    _args = ("inplace",)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(inplace)
