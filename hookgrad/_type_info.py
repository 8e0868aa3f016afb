"""``finfo`` and ``iinfo``: the numerical limits of the floating and integer dtypes."""
import math

import jax.numpy as jnp

from . import _dtype


def _dtype_arg(fn, type):
    if type is None:
        return _dtype.get_default_dtype() if fn == "finfo" else None
    if not isinstance(type, _dtype.dtype):
        raise TypeError(f"{fn}(): argument 'type' (position 1) must be torch.dtype, not "
                        f"{_type_name(type)}")
    return type


def _type_name(obj):
    return obj.__name__ if isinstance(obj, type) else type(obj).__name__


# where PyTorch's limits differ from ml_dtypes' (JAX's): c10's Float8_e5m2fnuz epsilon is
# 2 ** -3, though its mantissa has two bits
_TORCH_EPS = {"float8_e5m2fnuz": 0.125}


def _g(v):
    return format(v, ".6g")


class finfo:
    """``finfo(type=None)``: the limits of a floating dtype (the default dtype without one;
    a complex dtype gives its real part's): ``bits``, ``eps``, ``max``, ``min``, ``tiny``
    (= ``smallest_normal``), ``resolution`` and ``dtype`` (its name), as Python numbers."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                 "dtype")

    def __init__(self, type=None):
        d = _dtype_arg("finfo", type)
        if not (d.is_floating_point or d.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        if d.np is None:  # a packed pair of 4-bit floats: PyTorch has no finfo for it
            raise TypeError("bad argument type for built-in operation")
        d = d.to_real()
        info = jnp.finfo(d.np)
        self.bits = d.itemsize * 8
        self.eps = _TORCH_EPS.get(d.name, float(info.eps))
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        # PyTorch's: 10 ** -floor(-log10(eps)), the decimal digits eps resolves
        self.resolution = 10.0 ** -math.floor(-math.log10(self.eps))
        self.dtype = d.name

    def __repr__(self):
        return (f"finfo(resolution={_g(self.resolution)}, min={_g(self.min)}, "
                f"max={_g(self.max)}, eps={_g(self.eps)}, "
                f"smallest_normal={_g(self.smallest_normal)}, tiny={_g(self.tiny)}, "
                f"dtype={self.dtype})")

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    __hash__ = None  # PyTorch's finfo is unhashable


class iinfo:
    """``iinfo(type)``: the limits of an integer dtype: ``bits``, ``max``, ``min`` (Python
    ints) and ``dtype`` (its name)."""

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type):
        d = _dtype_arg("iinfo", type)
        if d is _dtype.bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if d.is_floating_point or d.is_complex or d.np is None:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        info = jnp.iinfo(d.np)
        self.bits, self.max, self.min, self.dtype = info.bits, int(info.max), int(info.min), \
            d.name

    def __repr__(self):
        return f"iinfo(min={_g(float(self.min))}, max={_g(float(self.max))}, dtype={self.dtype})"

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    __hash__ = None
