"""The op table. Importing it attaches every op to ``Tensor`` as a method."""
from .._tensor import Tensor
from . import linalg, nn, pointwise, reduction, shape  # noqa: F401 - fill the registry
from . import gather, indexing, layout  # noqa: F401 - after shape: they use its helpers
from . import nn_conv, nn_layers, nn_loss  # noqa: F401
from . import compare, nn_pool, nn_resample, nn_rnn, nn_sparse, sorting  # noqa: F401
from . import foreach  # noqa: F401 - after pointwise: its in-place forms use Tensor methods
from .dispatch import apply
from .registry import FUNCTIONS, METHODS, OPS

_F = FUNCTIONS


def _attach():
    for name, fn in METHODS.items():
        setattr(Tensor, name, fn)
    for name, fn in shape.TENSOR_PROPERTIES.items():
        setattr(Tensor, name, property(fn))
    dunders = {
        "__add__": _F["add"],
        "__radd__": _F["add"],
        "__sub__": _F["sub"],
        "__rsub__": _F["rsub"],
        "__mul__": _F["mul"],
        "__rmul__": _F["mul"],
        "__truediv__": _F["div"],
        "__rtruediv__": lambda a, b: pointwise.rdiv(a, b),
        "__floordiv__": _F["floor_divide"],
        "__rfloordiv__": lambda a, b: _F["floor_divide"](b, a),
        "__mod__": _F["remainder"],
        "__rmod__": lambda a, b: _F["remainder"](b, a),
        "__pow__": _F["pow"],
        "__rpow__": lambda a, b: _F["pow"](b, a),
        "__matmul__": _F["matmul"],
        "__rmatmul__": lambda a, b: _F["matmul"](b, a),
        "__neg__": _F["neg"],
        "__pos__": lambda a: a,
        "__abs__": _F["abs"],
        "__invert__": lambda a: _F["logical_not"](a) if a.dtype.name == "bool"
        else _F["bitwise_not"](a),
        "__eq__": _F["eq"],
        "__ne__": _F["ne"],
        "__lt__": _F["lt"],
        "__le__": _F["le"],
        "__gt__": _F["gt"],
        "__ge__": _F["ge"],
        "__and__": _F["bitwise_and"],
        "__or__": _F["bitwise_or"],
        "__xor__": _F["bitwise_xor"],
        "__rand__": _F["bitwise_and"],
        "__ror__": _F["bitwise_or"],
        "__iadd__": lambda a, b: a.add_(b),
        "__isub__": lambda a, b: a.sub_(b),
        "__imul__": lambda a, b: a.mul_(b),
        "__itruediv__": lambda a, b: a.div_(b),
    }
    for name, fn in dunders.items():
        if fn.__name__ == "<lambda>":
            fn.__name__ = name
            fn.__annotations__["return"] = "Tensor"
        setattr(Tensor, name, fn)


_attach()
