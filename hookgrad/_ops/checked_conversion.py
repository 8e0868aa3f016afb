"""PyTorch's checked conversion of a Python number to a tensor's dtype (``masked_fill``'s
value): what it takes, and its error for what it does not."""
import functools

import jax
import jax.numpy as jnp

from .. import _dtype

# NOTE: this check names an integer dtype by its fixed-width name where other messages
# print the C type (int32 stays "int", as PyTorch's checked conversion prints it)
_FIXED_WIDTH = {"int64": "int64_t", "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t"}
_INF = float("inf")


@functools.lru_cache(maxsize=None)
def _limits(dtype):
    """``(lowest, largest, whether a float dtype)`` a number converts to ``dtype`` within
    (an unsigned dtype takes down to minus its largest: the value wraps; a complex dtype
    its parts' float's), or None (bool: any number)."""
    kind = dtype.kind
    if kind == "f" or kind == "c" or kind == "V":  # V: ml_dtypes' bfloat16, float8
        top = float(jnp.finfo(dtype).max)
        return -top, top, True
    if kind == "i" or kind == "u":
        info = jnp.iinfo(dtype)
        return (-int(info.max) if kind == "u" else int(info.min)), int(info.max), False
    return None


def check_fits(input, value):
    """``value``, a Python number, as it fills ``input``'s dtype, or PyTorch's error where
    it does not convert: a complex with a nonzero imaginary part into a real dtype (one
    whose imaginary part is 0 converts as its real part; into bool, any converts by its
    truth); past a float dtype's largest finite value (inf and nan convert); outside an
    integer dtype's range. An int outside [-2**63, 2**64) is the parser's OverflowError,
    whatever the dtype. Other values (bools, Tensors) pass as they are."""
    cls = value.__class__
    dtype = input._arr.dtype
    if cls is complex:
        if dtype.kind == "c":  # each part within the parts' float
            if _within(dtype, value.real) and _within(dtype, value.imag):
                return value
            raise overflows(input)
        if dtype.kind == "b":
            return bool(value)
        if value.imag != 0:  # (a nan imaginary part too)
            raise overflows(input)
        value, cls = value.real, float
    if cls is not int and cls is not float:
        return value
    if cls is int and not -2 ** 63 <= value < 2 ** 64:
        # the parser reads a negative int as int64, a positive one as uint64 past int64's
        raise OverflowError("can't convert negative int to unsigned" if value < 0
                            else "int too big to convert")
    if _within(dtype, value):
        return value
    raise overflows(input)


def _within(dtype, value):
    """Whether the real number ``value`` converts to ``dtype`` (a complex one: to one part)."""
    limits = _limits(dtype)
    if limits is None or limits[0] <= value <= limits[1]:
        return True
    return limits[2] and (value != value or value == _INF or value == -_INF)


def check_value_tensor(input, value):
    """``value``, a 0-d Tensor, as it fills ``input``: a complex one into a real dtype is
    read (as PyTorch's ``item()``) and converts by ``check_fits``, to its real part; where
    it cannot be read (traced), PyTorch's error."""
    if value._arr.dtype.kind != "c" or input._arr.dtype.kind == "c":
        return value
    if isinstance(value._data, jax.core.Tracer):
        raise overflows(input)
    check_fits(input, complex(value.item()))
    return value.real


def overflows(input):
    """PyTorch's error for a value ``input``'s dtype cannot hold."""
    dtype = input._arr.dtype
    name = _FIXED_WIDTH.get(dtype.name) or _dtype.c_type_name(input.dtype)
    return RuntimeError(f"value cannot be converted to type {name} without overflow")
