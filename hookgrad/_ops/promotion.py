"""PyTorch's type promotion among an op's Tensor operands, on NumPy dtypes (``bfloat16``
included), for both paths an elementwise op takes: the host stage's result dtypes
(``host_forms.promoted``) and the XLA path's programs (``tensor_operands``).

The rule: dimensioned Tensors decide the dtype within a kind (``pair``); 0-d Tensors, and
then Python numbers, count only where they lift the kind (``lift``), and a complex 0-d
Tensor lifts a floating one to complex at the floating one's width. JAX's own promotion
has no notion of a 0-d Tensor: a float64 0-d Tensor beside a float32 one would widen it.
Its weak types are Python numbers' rule, so numbers are left to JAX.

Also the refusals that depend on the operands' dtypes alone (``refuses_complex``): they
are made where a program is traced, once per signature, so no op pays for them per call.
"""
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor

__all__ = ["clamping", "lift", "ordered", "pair", "real_input", "real_only", "refuses_complex",
           "rounding", "subtraction", "tensor_operands"]



def _kind(d):
    """NumPy's kind letter of ``d``, with ``bfloat16`` and the float8 types (ml_dtypes': a
    void kind to NumPy, but ``float8_e5m2``) floating."""
    k = d.kind
    return "f" if k == "V" else k


def pair(a, b):
    """The dtype of two operands of one priority (both dimensioned, or both 0-d)."""
    if a is b or a == b:
        return a
    ka, kb = _kind(a), _kind(b)
    if ka == "c" or kb == "c":  # complex, as wide as its widest float part
        return _complex(max(_part(d) for d in (a, b) if _kind(d) in "fc"))
    if ka == "f" and kb == "f":
        if a.itemsize == b.itemsize:  # float16 with bfloat16: neither holds the other
            return np.dtype(np.float32)
        return max(a, b, key=_itemsize)
    if ka == "f" or kb == "f":
        return a if ka == "f" else b
    return np.promote_types(a, b)


def lift(higher, lower, pairing=pair):
    """The dtype of a higher-priority group (``higher``) with a lower one (``lower``;
    either may be None: no operand of that priority); ``pairing`` gives the dtype where
    both count (``result_type`` passes one with ``promote_types``' refusals)."""
    if higher is None or lower is None:
        return lower if higher is None else higher
    kh, kl = _kind(higher), _kind(lower)
    if kh == "c":
        return higher
    if kl == "c":  # a complex 0-d tensor lifts a float one to its own width
        return _complex(higher.itemsize) if kh == "f" else lower
    if kh == "f":
        return higher
    return pairing(higher, lower) if kh == "b" or kl == "f" else higher


def _itemsize(d):
    return d.itemsize


def _part(d):
    """The width in bytes of a float dtype, or of a complex dtype's parts."""
    return d.itemsize // 2 if _kind(d) == "c" else d.itemsize


def _complex(width):
    """The complex dtype whose parts are ``width`` bytes wide. Half-width (and float8)
    parts give ``complex64``: hookgrad has no ``complex32`` (docs/differences.md), and PyTorch's
    ``bfloat16`` lifts to ``complex64`` too."""
    return _COMPLEX[width]


_COMPLEX = {1: np.dtype(np.complex64), 2: np.dtype(np.complex64), 4: np.dtype(np.complex64),
            8: np.dtype(np.complex128)}


def _tensor_like(a):
    """Whether the operand ``a`` (an array or tracer) is a Tensor's value, not a Python
    number (JAX holds those weakly typed)."""
    return hasattr(a, "dtype") and hasattr(a, "ndim") and not getattr(a, "weak_type", False)


def tensor_operands(fwd, among=None):
    """``fwd``, an elementwise op's JAX forward, with its 0-d Tensor operands cast where
    PyTorch's rule gives another dtype than JAX's (a float64 0-d Tensor beside a float32
    one computes in float32); ``among``: the positions of the operands promoted together
    (``where``'s condition is not one), all by default. NOTE: runs where a program is
    traced, once per signature."""
    def promoting(*args, **statics):
        dims = zero = None
        for i, a in enumerate(args):
            if _tensor_like(a) and (among is None or i in among):
                d = np.dtype(a.dtype)
                if a.ndim:
                    dims = d if dims is None else pair(dims, d)
                else:
                    zero = d if zero is None else pair(zero, d)
        if dims is not None and zero is not None and (want := lift(dims, zero)) != zero:
            args = tuple(a.astype(want) if _tensor_like(a) and not a.ndim and (
                among is None or i in among) else a for i, a in enumerate(args))
        return fwd(*args, **statics)
    promoting.__wrapped__ = fwd
    return promoting


def refuses_complex(fwd, error, message):
    """``fwd`` raising ``error(message)`` for complex operands, as PyTorch's kernels
    without a complex form do; ``{kernel}`` in ``message`` is the computation dtype's
    PyTorch name (``ComplexFloat``). NOTE: runs where a program is traced."""
    def refusing(*args, **statics):
        dtypes = [a.dtype for a in args if hasattr(a, "dtype")]
        if any(jnp.issubdtype(d, jnp.complexfloating) for d in dtypes):
            raise error(message.format(kind=_dtype.torch_kind(jnp.result_type(*args))))
        return fwd(*args, **statics)
    refusing.__wrapped__ = fwd
    return refusing


def real_input(input, error, message):
    """Raise ``error(message)`` for a complex ``input``, where one op row serves several
    public functions whose refusals PyTorch words differently (``sort``, ``topk``)."""
    if input.dtype.is_complex:
        raise error(message.format(kind=_dtype.TORCH_KINDS[input.dtype.name]))


REFUSED = "\"{}\" not implemented for '{{kind}}'"  # a PyTorch kernel's refusal of a dtype
KERNEL = REFUSED.replace("{}", "{}_cpu", 1)  # the same, named by its CPU kernel (``lt_cpu``)
NOT_FOR_COMPLEX = "{} not implemented for complex tensors."  # maximum's and its kin's


def real_only(name, fwd, message=REFUSED, error=NotImplementedError):
    """``fwd`` refusing complex input as PyTorch's kernel ``name`` does (its whole name,
    ``max_values_cpu``, in ``message``): the ops that order values."""
    return refuses_complex(fwd, error, message.format(name))


def integers_only(name, fwd):
    """``fwd`` refusing operands whose common dtype is not an integer one (float, complex,
    bool), as PyTorch's kernel ``name`` does (``gcd_cpu``). NOTE: runs where a program is
    traced."""
    message = REFUSED.format(name)

    def refusing(*args, **statics):
        d = jnp.result_type(*args)
        if d == jnp.bool_ or not jnp.issubdtype(d, jnp.integer):
            raise NotImplementedError(message.format(kind=_dtype.torch_kind(d)))
        return fwd(*args, **statics)
    refusing.__wrapped__ = fwd
    return refusing


def floats_only(kernel, fwd, complex_ok=False):
    """``fwd`` refusing integer and bool input (and complex, unless ``complex_ok``) as
    PyTorch's kernel ``kernel`` does (``"elu_cpu" not implemented for 'Long'``): the
    activations. NOTE: runs where a program is traced."""
    message = REFUSED.format(kernel)

    def refusing(x, *args, **statics):
        d = jnp.asarray(x).dtype if not hasattr(x, "dtype") else x.dtype
        if not (jnp.issubdtype(d, jnp.floating) or complex_ok and
                jnp.issubdtype(d, jnp.complexfloating)):
            raise NotImplementedError(message.format(kind=_dtype.torch_kind(d)))
        return fwd(x, *args, **statics)
    refusing.__wrapped__ = fwd
    return refusing


def ordered(fwd, name, message=KERNEL, error=NotImplementedError):
    """An elementwise op (``fwd``, PyTorch's kernel ``name``) that orders its operands, or
    rounds them: promoting as PyTorch does, with no complex form."""
    return tensor_operands(real_only(name, fwd, message, error))


def clamping(fwd):
    """A clamp's forward (``relu`` too: PyTorch's is a clamp), refusing complex input."""
    return refuses_complex(fwd, NotImplementedError, "clamp is not supported for complex types")


def rounding(fwd, name):
    """``floor``/``ceil``/``trunc``: PyTorch has no complex form."""
    return refuses_complex(fwd, NotImplementedError,
                           f"{name} is not supported for complex inputs")


def subtraction(fwd):
    """A subtraction's forward (``sub``, ``rsub`` and their ``alpha`` forms), refusing a
    bool operand as PyTorch does (before a 0-d one is cast), then promoting. NOTE: checked
    where the program is traced."""
    fwd = tensor_operands(fwd)

    def f(a, b, **statics):
        bools = (getattr(a, "dtype", None) == np.bool_) + (getattr(b, "dtype", None) == np.bool_)
        if bools == 2:
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                               "supported. Use the `^` or `logical_xor()` operator instead.")
        if bools:
            raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                               "supported. If you are trying to invert a mask, use the `~` or "
                               "`logical_not()` operator instead.")
        return fwd(a, b, **statics)
    return f


# --------------------------------------------------------------------------- no promotion
# The ops writing a source into a Tensor (index_add_, index_copy_, index_put_, the scatters)
# and the fused products take one dtype: PyTorch casts nothing there and says so.


def same_dtypes(input, source, message):
    """Raise ``RuntimeError(message)``, ``{}`` filled with the two dtypes' PyTorch names
    (``Float``), where the Tensor ``source`` has another dtype than ``input``."""
    if isinstance(source, Tensor) and source._arr.dtype != input._arr.dtype:
        raise RuntimeError(message.format(_dtype.torch_kind(input._arr.dtype),
                                          _dtype.torch_kind(source._arr.dtype)))


def bad_inplace_dtype(input_dtype, output_dtype):
    """PyTorch's error for an in-place op whose result would have another dtype than the
    tensor it writes (its structured kernels' check of the output they are given)."""
    return RuntimeError(f"Bad in-place call: input tensor dtype {_dtype.c_type_name(input_dtype)}"
                        f" and output tensor dtype {_dtype.c_type_name(output_dtype)} should match")


def same_source_dtype(name, input, source):
    """``index_add_``'s and ``index_reduce_``'s check of ``source``."""
    same_dtypes(input, source, name + "(): self ({}) and source ({}) must have the same "
                "scalar type")


def index_put_dtype_error(input, values):
    """PyTorch's error for ``index_put_`` (and a write through a Tensor index) of values of
    another dtype than ``input``'s."""
    return RuntimeError(f"Index put requires the source and destination dtypes match, got "
                        f"{_dtype.torch_kind(input._arr.dtype)} for the destination and "
                        f"{_dtype.torch_kind(values._arr.dtype)} for the source.")
