"""dtypes and devices with PyTorch's names, backed by NumPy/JAX dtypes and JAX devices."""
import builtins

import jax
import jax.numpy as jnp
import numpy as np

from ._device import device, device_of, from_host, jax_device  # noqa: F401 - re-exported


class dtype:
    """A tensor element type, named as in PyTorch (``hookgrad.float32`` ...)."""

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize")

    def __init__(self, name, np_dtype):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_floating_point = jnp.issubdtype(self.np, jnp.floating)
        self.is_complex = jnp.issubdtype(self.np, jnp.complexfloating)
        # float8_e8m0fnu is an exponent only: no sign bit
        self.is_signed = not jnp.issubdtype(self.np, jnp.unsignedinteger) and \
            self.np != np.bool_ and name != "float8_e8m0fnu"
        self.itemsize = self.np.itemsize

    def __repr__(self):
        return "hookgrad." + self.name

    def __reduce__(self):
        return (_lookup_name, (self.name,))

    def to_real(self):
        return {"complex64": float32, "complex128": float64}.get(self.name, self)


def _lookup_name(name):
    return complex32 if name == "complex32" else _BY_NAME[name]


float32 = float = dtype("float32", np.float32)
float64 = double = dtype("float64", np.float64)
float16 = half = dtype("float16", np.float16)
bfloat16 = dtype("bfloat16", jnp.bfloat16)
complex64 = cfloat = dtype("complex64", np.complex64)
complex128 = cdouble = dtype("complex128", np.complex128)
int8 = dtype("int8", np.int8)
int16 = short = dtype("int16", np.int16)
int32 = int = dtype("int32", np.int32)
int64 = long = dtype("int64", np.int64)
uint8 = dtype("uint8", np.uint8)
bool = dtype("bool", np.bool_)  # noqa: A001 - torch.bool
uint16 = dtype("uint16", np.uint16)
uint32 = dtype("uint32", np.uint32)
uint64 = dtype("uint64", np.uint64)
# the 8-bit floats, as ml_dtypes (JAX's) defines them: storage and casts, little arithmetic
float8_e4m3fn = dtype("float8_e4m3fn", jnp.float8_e4m3fn)
float8_e5m2 = dtype("float8_e5m2", jnp.float8_e5m2)
float8_e4m3fnuz = dtype("float8_e4m3fnuz", jnp.float8_e4m3fnuz)
float8_e5m2fnuz = dtype("float8_e5m2fnuz", jnp.float8_e5m2fnuz)
float8_e8m0fnu = dtype("float8_e8m0fnu", jnp.float8_e8m0fnu)


class _Unheld(dtype):
    """A PyTorch dtype JAX has no array type for (``complex32``): it exists, to be named
    and compared; making a tensor of it raises hookgrad's "does not implement" error."""

    __slots__ = ()

    def __init__(self, name, itemsize):
        self.name, self.np, self.itemsize = name, None, itemsize
        self.is_floating_point, self.is_complex, self.is_signed = False, True, True

    def to_real(self):
        return float16


complex32 = chalf = _Unheld("complex32", 4)

_ALL = (float32, float64, float16, bfloat16, complex64, complex128, int8, int16, int32, int64,
        uint8, bool, uint16, uint32, uint64, float8_e4m3fn, float8_e5m2, float8_e4m3fnuz,
        float8_e5m2fnuz, float8_e8m0fnu)
_BY_NAME = {d.name: d for d in _ALL}
_BY_NP = {d.np: d for d in _ALL}
_default_dtype = [float32]


def x64_enabled():
    return jax.config.read("jax_enable_x64")


def as_dtype(d):
    """hookgrad dtype from a hookgrad dtype, NumPy/JAX dtype, Python type or name."""
    if isinstance(d, dtype):
        return d
    if d is builtins.float:
        return _default_dtype[0]
    if d is builtins.int:
        return int64
    if d is builtins.bool:
        return bool
    try:
        return _BY_NP[np.dtype(d)]
    except (TypeError, KeyError):
        raise TypeError(f"cannot interpret {d!r} as a hookgrad dtype") from None




def to_jax(d):
    """The JAX dtype for hookgrad dtype ``d``.

    64-bit types need JAX's x64 mode: float64/complex128 without it are an error (they
    would silently be 32-bit); int64 falls back to int32, as JAX does (see docs/differences.md).
    """
    d = as_dtype(d)
    if d.np is None:  # complex32, hookgrad/_dtype_lowbit.py's: a name without tensors
        raise NotImplementedError(f"hookgrad does not implement tensors of dtype torch.{d.name} "
                                  "yet: JAX has no such arrays (see docs/api_coverage.md)")
    if d.itemsize == 8 and d.np.kind == "f" or d is complex128:  # complex64 is 8 bytes
        if not x64_enabled():
            raise RuntimeError(
                f"{d} needs JAX's 64-bit mode, which is off. Enable it before creating "
                "tensors: jax.config.update('jax_enable_x64', True)")
    if d in (int64, uint64) and not x64_enabled():
        return np.dtype(np.int32 if d is int64 else np.uint32)
    return d.np


# dtype -> its JAX dtype, for those whose JAX dtype x64 mode does not change (``to_jax``
# without its tests: a model casts per op)
FIXED_JAX = {d: d.np for d in _ALL if d.np is not None and d not in (int64, uint64, complex128)
             and not (d.itemsize == 8 and d.np.kind == "f")}


def from_jax(np_dtype):
    return _BY_NP[np.dtype(np_dtype)]


def get_default_dtype():
    """The dtype of floating tensors created from Python floats (``float32`` at start)."""
    return _default_dtype[0]


def set_default_dtype(d):
    d = as_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    to_jax(d)
    if d is not _default_dtype[0]:
        _default_dtype[0] = d
        for forget in ON_DEFAULT_CHANGE:  # programs traced with the old default
            forget()


ON_DEFAULT_CHANGE = []  # callbacks: the op table forgets its traced programs


# PyTorch's scalar-type names, as its messages (``Float``) and legacy tensor types
# (``FloatTensor``) spell them: the one table every message and ``Tensor.type()`` reads
TORCH_KINDS = {"float32": "Float", "float64": "Double", "float16": "Half",
               "bfloat16": "BFloat16", "int64": "Long", "int32": "Int", "int16": "Short",
               "int8": "Char", "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
               "complex128": "ComplexDouble", "uint16": "UInt16", "uint32": "UInt32",
               "uint64": "UInt64", "float8_e4m3fn": "Float8_e4m3fn",
               "float8_e5m2": "Float8_e5m2", "float8_e4m3fnuz": "Float8_e4m3fnuz",
               "float8_e5m2fnuz": "Float8_e5m2fnuz", "float8_e8m0fnu": "Float8_e8m0fnu"}


def torch_kind(np_dtype):
    """PyTorch's scalar-type name of a NumPy/JAX dtype (``Float`` for float32)."""
    name = np.dtype(np_dtype).name
    return TORCH_KINDS.get(name, name)


# the C++ type names some of PyTorch's dtype messages print (``long int`` for int64)
_C_TYPES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "float32": "float", "float64": "double", "bool": "bool",
            "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def c_type_name(dtype):
    """The C++ type name PyTorch's messages print for ``dtype`` (``float`` for float32)."""
    return _C_TYPES.get(dtype.name, dtype.name)


def legacy_type_name(np_dtype, prefix="torch"):
    """``'torch.FloatTensor'``-style name of a dtype, as ``x.type()`` and messages give it."""
    return f"{prefix}.{torch_kind(np_dtype)}Tensor"


# --------------------------------------------------------------------------- result types

_WIDE = (np.dtype(np.float64), np.dtype(np.complex128))


def _is_wide_array(a):
    if isinstance(a, (tuple, list)):
        return any(_is_wide_array(x) for x in a)
    # NOTE: a Python number traced by jit is a weakly typed float64: a scalar, not a
    # 64-bit tensor
    return (isinstance(a, (jax.Array, np.ndarray)) and a.dtype in _WIDE
            and not getattr(getattr(a, "aval", None), "weak_type", False))


def _asks_wide(v):
    """Whether a static argument is an explicit 64-bit floating dtype (``dtype=float64``)."""
    d = v.np if isinstance(v, dtype) else v if isinstance(v, np.dtype) else \
        getattr(v, "dtype", None) if isinstance(v, type) else None
    return isinstance(d, np.dtype) and d in _WIDE


def _narrow(out):
    if isinstance(out, tuple):
        return tuple(_narrow(o) for o in out)
    if isinstance(out, list):
        return [_narrow(o) for o in out]
    if isinstance(out, jax.Array) and out.dtype in _WIDE:
        d = _default_dtype[0].np
        return out.astype(d if out.dtype.kind == "f" else np.result_type(d, np.complex64))
    return out


def pytorch_result_dtype(fwd):
    """``fwd`` with PyTorch's floating result type where JAX's differs: with x64 on, JAX
    promotes integers to ``float64`` (``int_t * 1.5``, ``int_t / 2``, ``int_t.sqrt()``) and
    PyTorch to the default dtype. An output is narrowed when it is 64-bit although no
    argument was a 64-bit array and no static asked for a 64-bit dtype."""
    def f(*args, **statics):
        out = fwd(*args, **statics)
        # NOTE: runs when an op's program is traced (once per signature), not per call
        if any(_is_wide_array(a) for a in args) or any(_asks_wide(v) for v in statics.values()):
            return out
        return _narrow(out)
    f.__wrapped__ = fwd
    return f
