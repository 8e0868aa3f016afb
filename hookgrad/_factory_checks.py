"""PyTorch's errors for bad arguments to the factories (``zeros(-1)``, ``full(s, None)``,
``tensor('a')``, a ragged ``tensor``), in its types and words.

NOTE: nothing here runs on a valid call: the factories (``_factory``) call in only once
NumPy or JAX has refused the arguments (a ``try`` costs nothing until it raises), or after
an inline class test has failed, and raise what is built here in NumPy's or JAX's stead.
"""
from ._errors import type_name


class Unnamed(TypeError):
    """A parser TypeError whose words begin with the public name called (PyTorch's
    ``empty()`` where hookgrad's ``empty`` runs ``zeros``'s code, ``new_zeros()``): the
    public function names it (:func:`public`)."""


def public(op, error):
    """``error`` (an :class:`Unnamed` or a :class:`NegativeSize`) as the public factory
    ``op`` raises it: a plain TypeError or RuntimeError, in ``op``'s words."""
    if error.__class__ is Unnamed:
        return TypeError(f"{op}(): {error}")
    if op == "zeros":
        return RuntimeError("zeros: Dimension size must be non-negative.")
    return RuntimeError(*error.args)


def not_a_dtype(dtype):
    return Unnamed(f"argument 'dtype' must be torch.dtype, not {type_name(dtype)}")


_ARANGE_TAIL = ("torch.dtype dtype = None, torch.layout layout = None, torch.device device = "
                "None, bool pin_memory = False, bool requires_grad = False)\n")


def arange_dtype(args, dtype):
    """PyTorch's TypeError for ``arange`` given a ``dtype`` that is no dtype (a str):
    none of its three signatures takes it (``args``: the positional arguments given)."""
    got = ", ".join(type_name(a) for a in args)
    return TypeError(
        f"arange() received an invalid combination of arguments - got ({got}, dtype="
        f"{type_name(dtype)}), but expected one of:\n"
        f" * (Number end, *, Tensor out = None, {_ARANGE_TAIL}"
        f" * (Number start, Number end, *, {_ARANGE_TAIL}"
        f" * (Number start, Number end, Number step = 1, *, Tensor out = None, {_ARANGE_TAIL}")


def check_fill(value):
    """PyTorch's refusal of a ``fill_value`` that is not a Number (None, a str, a sequence,
    an array, a Tensor of more than one element)."""
    if value is None or isinstance(value, (str, bytes, list, tuple, dict)) or \
            type_name(value) == "numpy.ndarray" or \
            type_name(value) == "Tensor" and value.ndim:
        raise Unnamed(f"argument 'fill_value' (position 2) must be Number, not "
                      f"{type_name(value)}") from None


class NegativeSize(RuntimeError):
    """PyTorch's error for a negative size, which its ``zeros`` (not on the meta device)
    words its own way: the public function rewords it (:func:`public`)."""


def negative_size(shape, meta=False):
    """PyTorch's RuntimeError for a negative size in ``shape``, else None."""
    for s in shape:
        if s.__class__ is int and s < 0:
            return (RuntimeError if meta else NegativeSize)(
                f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    return None


def check_meta_draw(shape, normal):
    """PyTorch's error for a negative size of ``rand``/``randn`` on the meta device (no
    array is made there to refuse it): ``randn``'s meta kernel words it as a failed check."""
    error = negative_size(shape, True)
    if error is not None:
        raise RuntimeError("Expected cond to be True, but got False. (Could this error message "
                           "be improved? If so, please report an enhancement request to "
                           "PyTorch.)") if normal else error


def reword_like(op, args, error):
    """PyTorch's TypeError where a ``*_like`` factory (``op``) was given no Tensor as
    ``input`` (``error``: the AttributeError that reading its shape or dtype raised)."""
    if op.endswith("_like") and args and type_name(args[0]) != "Tensor" and \
            isinstance(error, AttributeError):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type_name(args[0])}") from None


def check_eye(n, m):
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}") from None


def check_randint(low, high, size):
    error = negative_size(size)
    if error is not None:
        raise error from None
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={low} >= to={high}") from None


def refuse_data(data, int_leaves):
    """PyTorch's error for ``tensor(data)`` that NumPy refused or would misread: a str, None
    or another object as an element, a ragged nesting. PyTorch reads the sizes down the
    first elements, then checks each sequence's length against them (``int_leaves``: the
    dtype is an integer one, which words a sequence where a number belongs its own way)."""
    sizes, first = [], data
    while isinstance(first, (list, tuple)):
        if first and isinstance(first[0], str):  # a str is a sequence to PyTorch
            raise ValueError("too many dimensions 'str'") from None
        sizes.append(len(first))
        if not first:
            break
        first = first[0]
    if int_leaves is None:  # inferred: PyTorch's reads an int as int64
        int_leaves = isinstance(first, int) and not isinstance(first, bool)
    _check_nested(data, sizes, 0, int_leaves)


def refuse_none(data, dtype):
    """PyTorch's TypeError for a None in ``tensor(data, dtype=dtype)`` (NumPy would read it
    as NaN): its reader converts each element to the dtype's kind, and words None as
    Python's ``int()``/``float()`` would."""
    if data is None or isinstance(data, (list, tuple)) and _holds_none(data):
        raise TypeError("must be real number, not NoneType"
                        if dtype.is_floating_point or dtype.is_complex else
                        "'NoneType' object cannot be interpreted as an integer") from None


def _holds_none(seq):
    return any(v is None or isinstance(v, (list, tuple)) and _holds_none(v) for v in seq)


def _check_nested(obj, sizes, dim, int_leaves):
    if dim == len(sizes):
        if isinstance(obj, str):
            raise TypeError("new(): invalid data type 'str'") from None
        if obj is None or not isinstance(obj, (list, tuple)) and \
                not hasattr(obj, "__float__") and not hasattr(obj, "__index__"):
            raise RuntimeError(f"Could not infer dtype of {type(obj).__name__}") from None
        if isinstance(obj, (list, tuple)):
            raise TypeError(f"'{type(obj).__name__}' object cannot be interpreted as an "
                            "integer" if int_leaves else
                            f"must be real number, not {type(obj).__name__}") from None
        return
    if not isinstance(obj, (list, tuple)):
        raise TypeError("not a sequence") from None
    if len(obj) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} "
                         f"(got {len(obj)})") from None
    for v in obj:
        _check_nested(v, sizes, dim + 1, int_leaves)


REWORDED = (Unnamed, NegativeSize)  # what the public factories reword (:func:`public`)
