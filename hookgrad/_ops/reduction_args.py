"""How PyTorch's argument parser refuses a reduction's arguments: a ``dim`` left out
(``ALL_DIMS``) or of the wrong type, a ``keepdim`` that is no bool, a str ``dtype``, in its
words, with each reduction's signatures as it prints them.
"""
from __future__ import annotations

from .parser_errors import arguments_error, invalid_arguments, not_a, type_name


class _Omitted:
    """The default of a ``dim`` that PyTorch's signatures leave out (``x.sum()``), where
    an explicit None is another call: ``sum(keepdim=True)``, ``prod(dim=None)`` and
    ``max(dim=None)`` are its TypeErrors."""
    __slots__ = ()

    def __repr__(self):
        return "<all dims>"


ALL_DIMS = _Omitted()
# PyTorch's signatures (as its argument parser prints them) of the reductions whose dim
# may be omitted
_SUM_FORMS = ("(*, torch.dtype dtype = None)",  # (``?``: None taken, not printed)
              "(tuple of ints? dim, bool keepdim = False, *, torch.dtype dtype = None)")
_PROD_FORMS = ("(*, torch.dtype dtype = None)",
               "(int dim, bool keepdim = False, *, torch.dtype dtype = None)")
_MAX_FORMS = ("()", "(Tensor other)", "(int dim, bool keepdim = False)")
_ALL_FORMS = ("()", "(tuple of ints dim = None, bool keepdim = False)",
              "(int dim, bool keepdim = False)")


NOT_INT = (bool, float, str)  # not a dim to PyTorch's parser: int() would read or refuse them


def not_an_int_dim(name, dim, position=1):
    """PyTorch's TypeError for a ``dim`` of ``name`` (``median``, ``nanmedian``: one
    signature with a dim, an int) that is None, a bool, or left out beside ``keepdim``."""
    if dim is ALL_DIMS:
        return TypeError(f'{name}() missing 1 required positional arguments: "dim"')
    return not_a(name, "dim", dim, "int", position)


def refused(name, forms, dim, keepdim, dtype=None):
    """PyTorch's TypeError for a reduction's ``dim`` none of its signatures (``forms``)
    takes (left out beside ``keepdim`` or a str ``dtype``, a bool, None), a ``keepdim`` that
    is no bool, a str ``dtype``. NOTE: the callers test inline: a call only where one raises."""
    if dim is ALL_DIMS:
        return invalid_arguments(name, forms, **{"dtype": dtype} if dtype.__class__ is str
                                 else {"keepdim": keepdim})
    if dim is None or dim.__class__ in NOT_INT:
        return invalid_arguments(name, forms, dim=dim)
    if dim.__class__ in (list, tuple):  # max/min take one dim: read as the ``other`` slot
        return invalid_arguments(name, forms, dim)
    if keepdim.__class__ is not bool:
        return not_a(name, "keepdim", keepdim, "bool", None)
    return not_a(name, "dtype", dtype, "torch.dtype", None)


def norm_dim_refused(p, dim):
    """PyTorch's TypeError for a ``torch.norm`` ``dim`` that is a bool, float or str, or a
    sequence whose first element is one: its Python ``norm`` takes ``len()`` of a float dim
    for the Frobenius norm, and hands the rest to ``linalg_vector_norm``'s parser (a bool
    as a one-element list)."""
    if p == "fro" and dim.__class__ is float:
        return TypeError("object of type 'float' has no len()")
    if dim.__class__ is bool:
        dim = [dim]
    if dim.__class__ in (tuple, list):
        return TypeError("linalg_vector_norm(): argument 'dim' (position 3) must be tuple of "
                         f"ints, but found element of type {type_name(dim[0])} at pos 0")
    return not_a("linalg_vector_norm", "dim", dim, "tuple of ints", 3)


def with_extra(name, forms, as_method, input, dim, keepdim, extra, dtype, kwargs):
    """PyTorch's TypeError for a reduction called with arguments its parser refuses
    (keywords it does not take, too many arguments: ``extra``, or of a type it does not
    take), for its method (``as_method``) or its function (``forms``: the method's, the
    function's add ``Tensor input`` and ``out``). ``input``, ``dim``, ``keepdim``: as given
    by position (``ALL_DIMS``: not given), ``kwargs``: the keywords as given. NOTE: a
    ``keepdim=False`` given by position and a ``dtype=None`` are taken as left out (a
    signature with defaults keeps the values only)."""
    args = () if as_method or input is ALL_DIMS else (input,)
    if dim is not ALL_DIMS:
        args += (dim, keepdim) if keepdim is not False or extra else (dim,)
    args += extra
    given = {"dtype": dtype} if dtype is not None else {}
    if not as_method:
        forms = tuple(f"(Tensor input, {f[1:-1]}{', Tensor out = None' if 'dim' in f else ''})"
                      for f in forms)
    return arguments_error(name, forms, args, {**given, **kwargs})
