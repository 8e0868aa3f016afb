"""PyTorch's checked conversion of a Python number to a tensor's dtype (``masked_fill``'s
value): what it takes, and its error for what it does not."""
import functools

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
    """Raise PyTorch's error where the Python number ``value`` does not convert to
    ``input``'s dtype: a complex into a real dtype; past a float dtype's largest finite
    value (inf and nan convert); outside an integer dtype's range. An int outside
    [-2**63, 2**64) is the parser's OverflowError, whatever the dtype. Other values (bools,
    Tensors) pass."""
    cls = value.__class__
    dtype = input._arr.dtype
    if cls is complex:
        if dtype.kind != "c":
            raise overflows(input)
        return
    if cls is not int and cls is not float:
        return
    if cls is int and not -2 ** 63 <= value < 2 ** 64:
        raise OverflowError("int too big to convert")
    limits = _limits(dtype)
    if limits is None or limits[0] <= value <= limits[1]:
        return
    if limits[2]:
        if value == value and value != _INF and value != -_INF:
            raise overflows(input)
        return
    name = _FIXED_WIDTH.get(dtype.name) or _dtype.c_type_name(input.dtype)
    raise RuntimeError(f"value cannot be converted to type {name} without overflow")


def overflows(input):
    """PyTorch's error for a value ``input``'s dtype cannot hold."""
    return RuntimeError(f"value cannot be converted to type {_dtype.c_type_name(input.dtype)} "
                        "without overflow")
