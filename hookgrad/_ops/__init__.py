"""The op table. Importing it attaches every op to ``Tensor`` as a method."""
import numpy as np

from .._tensor import Tensor
from . import linalg, nn, pointwise, reduction, shape  # noqa: F401 - fill the registry
from . import clamp, fills  # noqa: F401 - beside pointwise: clamp; zero_, fill_, copy_
from . import gather, indexing, layout, repeat_interleave  # noqa: F401 - after shape: its helpers
from . import pieces  # noqa: F401 - split, chunk, unbind (after shape)
from . import nn_conv, nn_layers, nn_loss, nn_pad_fold  # noqa: F401
from . import compare, nn_pool, nn_resample, nn_rnn, nn_sparse, sorting  # noqa: F401
from . import nn_pdist, nn_shuffle  # noqa: F401
from . import foreach  # noqa: F401 - after pointwise: its in-place forms use Tensor methods
from . import linalg_norms, linalg_products  # noqa: F401 - torch.linalg (and det, ...)
# after the ops they alias and build on
from . import pointwise_math, products, sampling, set_ops, stacking  # noqa: F401
from . import remainders  # noqa: F401 - fmod, remainder
from . import matrix_transposes, placement, statistics, type_queries  # noqa: F401
from . import triangle_indices, view_copies, view_scatters  # noqa: F401 - after the views
from . import device_memory, inplace_views, legacy_new, python_callbacks  # noqa: F401
from . import hashing, nonzero_forms, strided_factories, subclassing  # noqa: F401
from . import dense_only, fake_quantize, positional_index, tensor_name  # noqa: F401
# ATen's functional kernels at top level, after the nn ops they run
from . import aten_layers, aten_losses, aten_noise, aten_norms, aten_rnn, rnn_cells  # noqa: F401
from . import complex_numbers, spectral, stft  # noqa: F401
from . import bessel, special, special_polynomials  # noqa: F401 - torch.special, igamma
from . import linalg_legacy, nextafter, removed_linalg, selection  # noqa: F401
from . import calculus, index_reduce, vander  # noqa: F401
from . import linalg_householder  # noqa: F401 - after special: geqrf has no derivative
from . import binomial, histogramdd, lowrank  # noqa: F401
from . import derivatives  # noqa: F401 - a node's backward under dispatch modes
from . import overloads  # noqa: F401 - after every row: the rows as ATen overloads
from . import binary_operands
from .dispatch import apply
from .registry import FUNCTIONS, METHODS, OPS

_F = FUNCTIONS


def _contains(self, element) -> bool:
    """``element in self``: whether any entry of ``self`` equals ``element``."""
    if not isinstance(element, (Tensor, int, float, bool, complex)):
        raise RuntimeError("Tensor.__contains__ only supports Tensor or scalar, but you "
                           f"passed in a {type(element)}.")
    return bool((self == element).any().item())


def invert_operator(input) -> Tensor:
    """``~input``: ``logical_not`` of a bool Tensor, ``bitwise_not`` of an integer one;
    PyTorch's operator refuses a floating or complex one before any kernel."""
    if input.dtype.name == "bool":
        return _F["logical_not"](input)
    if input.dtype.is_floating_point or input.dtype.is_complex:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return _F["bitwise_not"](input)


def _operator(name):
    """The Tensor method ``name`` where there is one, else the function: an operator, as a
    method, takes no ``out=``; an operator's own function where it has one."""
    return pointwise.OPERATORS.get(name) or METHODS.get(name) or _F[name]


def _attach():
    for name, fn in METHODS.items():
        setattr(Tensor, name, fn)
    for name, fn in shape.TENSOR_PROPERTIES.items():
        setattr(Tensor, name, fn if isinstance(fn, property) else property(fn))
    dunders = {
        "__add__": pointwise.add_operator,
        "__radd__": pointwise.radd_operator,
        "__sub__": pointwise.sub_operator,
        "__rsub__": pointwise.rsub_operator,
        "__mul__": _operator("mul"),
        "__rmul__": pointwise.REFLECTED["mul"],
        "__truediv__": pointwise.div_operator,
        "__rtruediv__": lambda a, b: pointwise.rdiv(a, b),
        "__floordiv__": _operator("floor_divide"),
        "__rfloordiv__": lambda a, b: _F["floor_divide"](_number(b), a),
        "__mod__": _operator("remainder"),
        "__rmod__": lambda a, b: _F["remainder"](_number(b), a),
        "__pow__": _operator("pow"),
        "__rpow__": lambda a, b: _F["pow"](_number(b), a),
        "__matmul__": _operator("matmul"),
        "__rmatmul__": lambda a, b: _F["matmul"](b, a),
        "__neg__": _operator("neg"),
        "__pos__": lambda a: a,
        "__abs__": _operator("abs"),
        "__invert__": invert_operator,
        "__eq__": _operator("eq"),
        "__ne__": _operator("ne"),
        "__lt__": _operator("lt"),
        "__le__": _operator("le"),
        "__gt__": _operator("gt"),
        "__ge__": _operator("ge"),
        "__and__": _operator("bitwise_and"),
        "__or__": _operator("bitwise_or"),
        "__xor__": _operator("bitwise_xor"),
        "__rand__": pointwise.REFLECTED["bitwise_and"],
        "__ror__": pointwise.REFLECTED["bitwise_or"],
        # an array: PyTorch's ``+=`` leaves it to ``+`` (NumPy's sum, a new Tensor)
        "__iadd__": lambda a, b, **kw: a.add_(b, **kw),
        "__isub__": lambda a, b, **kw: a.sub_(b, **kw),
        "__imul__": lambda a, b: a.mul_(b),
        "__itruediv__": lambda a, b, **kw: a.div_(b, **kw),
        # in place, as PyTorch's: without these Python would rebind the name to a new Tensor
        "__ifloordiv__": lambda a, b: a.floor_divide_(b),
        "__imod__": lambda a, b: a.remainder_(b),
        "__ipow__": lambda a, b: a.pow_(b),
        "__iand__": lambda a, b: a.bitwise_and_(b),
        "__ior__": lambda a, b: a.bitwise_or_(b),
        "__ixor__": lambda a, b: a.bitwise_xor_(b),
        "__rxor__": pointwise.REFLECTED["bitwise_xor"],
        "__contains__": _contains,
        "__reversed__": lambda a: a if a.ndim == 0 else a.flip(0),
    }
    for name, fn in dunders.items():
        if name in _GATED:  # (the others check their operand themselves)
            fn = binary_operands.operator_of(fn, name in _IN_PLACE or name in _REFLECTED,
                                             _BY_NUMPY.get(name))
        if fn.__name__ == "<lambda>":
            fn.__name__ = name
            fn.__annotations__["return"] = "Tensor"
        setattr(Tensor, name, fn)


def _number(other):
    """A reflected operator's left operand: a NumPy scalar as the Python number PyTorch's
    operator reads it as (``np.float32(3) ** x``: pow's ``Number self``)."""
    return other.item() if isinstance(other, np.generic) else other


# the operators of two operands built on a method or function, whose parser would raise
# where PyTorch's operator returns NotImplemented (``binary_operands.operator_of``); ``+``, ``-``
# (both ways), ``/`` and the binary rows' operators (``*``, ``==``, ``&``) return it themselves
_GATED = frozenset(("__rtruediv__", "__rfloordiv__", "__mod__", "__rmod__",
                    "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__iadd__",
                    "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__",
                    "__ipow__", "__iand__", "__ior__", "__ixor__"))
_IN_PLACE = frozenset(n for n in _GATED if n.startswith("__i"))
# reflected ones refuse a NumPy array on the left (``array ** x`` raises, as PyTorch's; but
# ``array / x`` is ``x.reciprocal() * array``, NumPy's product)
_REFLECTED = frozenset(n for n in _GATED if n.startswith("__r") and n != "__rtruediv__")
# operators PyTorch leaves to NumPy for an array on the right (``x % array``: NumPy's
# promotion, float64 for float32 and an int64 array)
_BY_NUMPY = {"__mod__": "remainder", "__pow__": "pow", "__matmul__": "matmul"}


_attach()
