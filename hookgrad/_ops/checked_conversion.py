"""PyTorch's checked conversion of a Python number to a tensor's dtype (``masked_fill``'s
value): what it takes, and its error for what it does not."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

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
        if cls is float and value >= _TWO_63 and dtype.name == "int64":
            # NOTE: PyTorch compares a float with int64's largest as a double, 2**63, so
            # 2.0**63 passes; its conversion then gives int64's lowest (the CPU's answer
            # for a float past the range, where XLA's saturates to the largest)
            return -2 ** 63
        return value
    raise overflows(input)


_TWO_63 = 2.0 ** 63


def _within(dtype, value):
    """Whether the real number ``value`` converts to ``dtype`` (a complex one: to one part).
    A float is compared with the limits as floats, as PyTorch compares them as doubles."""
    limits = _limits(dtype)
    if limits is None:
        return True
    lo, hi, floating = limits
    if value.__class__ is float and not floating:
        lo, hi = float(lo), float(hi)
    if lo <= value <= hi:
        return True
    return floating and (value != value or value == _INF or value == -_INF)


def check_value_tensor(input, value):
    """``value``, a 0-d Tensor, as it fills ``input``: PyTorch reads it (``item()``) and
    converts it by ``check_fits``. Read here only where its dtype may hold a number that
    ``input``'s does not (a float into an int, a wider into a narrower; a dtype that casts
    safely needs no look); a complex one into a real dtype is filled by its real part.
    Where it cannot be read (traced), a complex one into a real dtype is PyTorch's error
    and others pass unchecked."""
    src, dst = value._arr.dtype, input._arr.dtype
    if _casts_safely(src, dst):
        return value
    if isinstance(value._data, jax.core.Tracer):
        if src.kind == "c" and dst.kind != "c":
            raise overflows(input)
        return value
    number = value.item()
    fits = check_fits(input, number)
    if src.kind == "c" and dst.kind != "c":
        return value.real
    if fits is not number and fits.__class__ is int:  # 2.0**63 into int64: int64's lowest
        return value.new_full((), fits, dtype=input.dtype)
    return value


@functools.lru_cache(maxsize=None)
def _casts_safely(src, dst):
    """Whether every value of dtype ``src`` converts to ``dtype`` ``dst`` (NumPy's safe
    casting; bool takes anything)."""
    if dst.kind == "b":
        return True
    try:
        return bool(np.can_cast(src, dst, casting="safe"))
    except TypeError:  # (a dtype NumPy does not know: read the value)
        return False


def overflows(input):
    """PyTorch's error for a value ``input``'s dtype cannot hold."""
    dtype = input._arr.dtype
    name = _FIXED_WIDTH.get(dtype.name) or _dtype.c_type_name(input.dtype)
    return RuntimeError(f"value cannot be converted to type {name} without overflow")
