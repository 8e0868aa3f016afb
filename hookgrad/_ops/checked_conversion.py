"""PyTorch's checked conversion of a Python number to a tensor's dtype (``masked_fill``'s
value): what it takes, and its error for what it does not."""
import jax.numpy as jnp

from .. import _dtype

# NOTE: this check names an integer dtype by its fixed-width name where other messages
# print the C type (int32 stays "int", as PyTorch's checked conversion prints it)
_FIXED_WIDTH = {"int64": "int64_t", "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t"}


def check_fits(input, value):
    """PyTorch's checked conversion of a Python number to ``input``'s dtype: a float dtype
    takes any value up to its largest finite one (and inf, nan); an integer dtype its range,
    where an unsigned one also takes down to minus its largest (the value wraps). An int
    outside [-2**63, 2**64) is the parser's OverflowError, whatever the dtype."""
    if value.__class__ is int and not -2 ** 63 <= value < 2 ** 64:
        raise OverflowError("int too big to convert")
    dtype = input._arr.dtype
    kind = dtype.kind
    if kind == "f" or kind == "c" or kind == "V":  # V: ml_dtypes' bfloat16, float8
        top = float(jnp.finfo(dtype).max)
        if value == value and abs(value) != float("inf") and abs(value) > top:
            raise overflows(input)
    elif kind == "i" or kind == "u":
        info = jnp.iinfo(dtype)
        low = -int(info.max) if kind == "u" else int(info.min)
        if not (value == value and low <= value <= int(info.max)):
            name = _FIXED_WIDTH.get(dtype.name) or _dtype.c_type_name(input.dtype)
            raise RuntimeError(f"value cannot be converted to type {name} without overflow")


def overflows(input):
    """PyTorch's error for a value ``input``'s dtype cannot hold."""
    return RuntimeError(f"value cannot be converted to type {_dtype.c_type_name(input.dtype)} "
                        "without overflow")
