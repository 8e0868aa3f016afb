"""PyTorch's dtypes that hookgrad names but stores no tensors of: the sub-byte integers
(``int1``..``int7``, ``uint1``..``uint7``), the raw bit types (``bits8``, ...), the packed
``float4_e2m1fn_x2`` and the quantized types (``qint8``, ``quint8``, ...).

Each is a ``hookgrad.dtype`` with PyTorch's ``itemsize``, ``is_floating_point``,
``is_complex``, ``is_signed`` (the bit and quantized types raise PyTorch's error for it)
and name, so code that lists or compares dtypes works; making a tensor of one raises
"hookgrad does not implement" (``_dtype.to_jax``), as JAX has no such arrays (docs/differences.md).
"""
from . import _dtype


class _NoTensorDtype(_dtype.dtype):
    """A dtype without tensors: its fields are PyTorch's; ``np`` is None."""

    __slots__ = ("_signed_error",)

    def __init__(self, name, itemsize, floating=False, signed=True, signed_error=None):
        self.name, self.np, self.itemsize = name, None, itemsize
        self.is_floating_point, self.is_complex = floating, False
        self._signed_error = signed_error
        if signed_error is None:
            self.is_signed = signed

    def __getattribute__(self, name):
        # PyTorch cannot say whether bit and quantized types are signed
        if name == "is_signed":
            error = object.__getattribute__(self, "_signed_error")
            if error is not None:
                raise RuntimeError(error)
        return object.__getattribute__(self, name)


_BITS = "Bits types are undefined"
_QUANTIZED = "isSignedType not supported for quantized types"

int1, int2, int3, int4, int5, int6, int7 = (_NoTensorDtype(f"int{n}", 1) for n in range(1, 8))
uint1, uint2, uint3, uint4, uint5, uint6, uint7 = (
    _NoTensorDtype(f"uint{n}", 1, signed=False) for n in range(1, 8))
bits1x8, bits2x4, bits4x2, bits8 = (_NoTensorDtype(n, 1, signed_error=_BITS)
                                    for n in ("bits1x8", "bits2x4", "bits4x2", "bits8"))
bits16 = _NoTensorDtype("bits16", 2, signed_error=_BITS)
float4_e2m1fn_x2 = _NoTensorDtype("float4_e2m1fn_x2", 1, floating=True)
qint8, quint8, quint4x2, quint2x4 = (_NoTensorDtype(n, 1, signed_error=_QUANTIZED)
                                     for n in ("qint8", "quint8", "quint4x2", "quint2x4"))
qint32 = _NoTensorDtype("qint32", 4, signed_error=_QUANTIZED)

ALL = (int1, int2, int3, int4, int5, int6, int7, uint1, uint2, uint3, uint4, uint5, uint6,
       uint7, bits1x8, bits2x4, bits4x2, bits8, bits16, float4_e2m1fn_x2, qint8, quint8,
       qint32, quint4x2, quint2x4)
_dtype._BY_NAME.update({d.name: d for d in ALL})  # so that they pickle by name
