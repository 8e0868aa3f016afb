"""The op table. Importing it attaches every op to ``Tensor`` as a method."""
from .._tensor import Tensor
from . import linalg, nn, pointwise, reduction, shape  # noqa: F401 - fill the registry
from . import nn_conv, nn_layers, nn_loss  # noqa: F401
from .dispatch import apply
from .registry import FUNCTIONS, METHODS, OPS

_F = FUNCTIONS


def _attach():
    for name, fn in METHODS.items():
        setattr(Tensor, name, fn)
    for name, fn in shape.TENSOR_PROPERTIES.items():
        setattr(Tensor, name, property(fn))
    dunders = {
        "__add__": lambda a, b: _F["add"](a, b),
        "__radd__": lambda a, b: _F["add"](a, b),
        "__sub__": lambda a, b: _F["sub"](a, b),
        "__rsub__": lambda a, b: _F["rsub"](a, b),
        "__mul__": lambda a, b: _F["mul"](a, b),
        "__rmul__": lambda a, b: _F["mul"](a, b),
        "__truediv__": lambda a, b: _F["div"](a, b),
        "__rtruediv__": lambda a, b: pointwise.rdiv(a, b),
        "__floordiv__": lambda a, b: _F["floor_divide"](a, b),
        "__rfloordiv__": lambda a, b: _F["floor_divide"](b, a),
        "__mod__": lambda a, b: _F["remainder"](a, b),
        "__pow__": lambda a, b: _F["pow"](a, b),
        "__rpow__": lambda a, b: _F["pow"](b, a),
        "__matmul__": lambda a, b: _F["matmul"](a, b),
        "__rmatmul__": lambda a, b: _F["matmul"](b, a),
        "__neg__": lambda a: _F["neg"](a),
        "__pos__": lambda a: a,
        "__abs__": lambda a: _F["abs"](a),
        "__invert__": lambda a: _F["logical_not"](a) if a.dtype.name == "bool"
        else _F["bitwise_not"](a),
        "__eq__": lambda a, b: _F["eq"](a, b),
        "__ne__": lambda a, b: _F["ne"](a, b),
        "__lt__": lambda a, b: _F["lt"](a, b),
        "__le__": lambda a, b: _F["le"](a, b),
        "__gt__": lambda a, b: _F["gt"](a, b),
        "__ge__": lambda a, b: _F["ge"](a, b),
        "__and__": lambda a, b: _F["bitwise_and"](a, b),
        "__or__": lambda a, b: _F["bitwise_or"](a, b),
        "__xor__": lambda a, b: _F["bitwise_xor"](a, b),
        "__rand__": lambda a, b: _F["bitwise_and"](a, b),
        "__ror__": lambda a, b: _F["bitwise_or"](a, b),
        "__iadd__": lambda a, b: a.add_(b),
        "__isub__": lambda a, b: a.sub_(b),
        "__imul__": lambda a, b: a.mul_(b),
        "__itruediv__": lambda a, b: a.div_(b),
    }
    for name, fn in dunders.items():
        fn.__name__ = name
        setattr(Tensor, name, fn)
    Tensor.__hash__ = object.__hash__


_attach()
