"""The shape a ``view`` or ``reshape`` gives: its sizes (one may be -1) resolved against
the Tensor's number of elements, with PyTorch's errors for sizes that do not fit, and
remembered per Tensor shape where they are plain ints (a model asks the same per layer
per step)."""
import math

from .. import _jax_trace
from .._dtype import dtype as _dtype_class
from .._errors import type_name
from .._memo import keep
from .._tensor import Size, Tensor
from .parser_errors import invalid_arguments, sizes_fit_no_form

__all__ = ["new_shape", "resolve_shape", "view_keywords", "reshape_keywords",
           "reshape_function_args"]


def _is_minus_one(s):
    return isinstance(s, int) and s == -1  # a symbolic size is never -1


def resolve_shape(shape, numel):
    """``shape`` with its -1 filled in, PyTorch's errors for shapes that do not fit."""
    known, infer = 1, None
    for i, s in enumerate(shape):  # NOTE: the fast path of every view: plain sizes that fit
        if s.__class__ is not int or s < -1 or s == -1 and infer is not None:
            return _resolve_any_shape(shape, numel)
        if s == -1:
            infer = i
        else:
            known *= s
    if infer is None:
        if known == numel:
            return shape
    elif known and numel % known == 0:
        return (*shape[:infer], numel // known, *shape[infer + 1:])
    return _resolve_any_shape(shape, numel)


def new_shape(shape, old, who=("view", "size")):
    """A ``view``/``reshape`` argument ``shape`` (sizes, or one sequence of them) resolved
    for a Tensor of shape ``old``: remembered where it is plain ints (a model reshapes the
    same shapes per layer per step), else worked out (``resolve_shape``, which raises).
    ``who``: the method's name and its argument's, for PyTorch's parser's errors."""
    given = shape[0] if len(shape) == 1 and shape[0].__class__ in _SEQUENCES else shape
    # NOTE: by class first: 3.0 and True equal 3 and 1 but are refused, and a list (which
    # is no key) is copied as the parser does
    if given.__class__ is list or not _INTS.issuperset(map(type, given)):
        return resolve_shape(_sizes(shape, given, who), math.prod(old))
    key = (old, given)
    found = _RESOLVED.get(key)
    if found is None:
        found = keep(_RESOLVED, key, resolve_shape(tuple(given), math.prod(old)))
    return found


def _sizes(shape, given, who):
    """``shape``'s sizes (``_jax_trace.size_args``), or the TypeError PyTorch's parser
    raises for them: it reads ``tuple of ints`` by its first element's type (a bool, a
    float, a str or None there matches no signature: several sizes given one by one are
    then too many arguments), and a later element that is no int fails to unpack (a later
    bool is taken as an int)."""
    name, arg = who
    first = given[0] if given else None
    if given and first.__class__ in _NOT_SIZES:
        if given is not shape:
            raise TypeError(f"{name}(): argument '{arg}' (position 1) must be tuple of ints, "
                            f"but found element of type {type_name(first)} at pos 0")
        if len(shape) > 1:
            raise TypeError(f"{name}() takes 1 positional argument but {len(shape)} were given")
        raise TypeError(f"{name}(): argument '{arg}' (position 1) must be tuple of ints, not "
                        f"{type_name(first)}")
    if given is shape and len(shape) > 1 and first.__class__ in _SEQUENCES:
        # a sequence then more sizes: too many arguments for the sequence's signature
        if name == "view":
            raise sizes_fit_no_form("view", _VIEW_FORMS, shape)
        raise TypeError(f"{name}() takes 1 positional argument but {len(shape)} were given")
    for k, s in enumerate(given):
        if s.__class__ in _NOT_SIZES and s.__class__ is not bool or k and s.__class__ in \
                _SEQUENCES:
            raise TypeError(f"{name}(): argument '{arg}' failed to unpack the object at pos "
                            f"{k + 1} with error \"type must be tuple of ints,but got "
                            f"{type_name(s)}\"")
    return _jax_trace.size_args(shape)


_NOT_SIZES = frozenset((bool, float, str, type(None)))
_SEQUENCES = frozenset((tuple, list, Size))
_INTS = frozenset((int,))
_RESOLVED = {}  # (a Tensor's shape, the sizes asked) -> the shape a view or reshape gives


def _resolve_any_shape(shape, numel):
    """``resolve_shape`` for any sizes (symbolic ones included), and its errors."""
    inferred = False
    for i, s in enumerate(shape):  # PyTorch's order: the first bad size is named
        if _is_minus_one(s):
            if inferred:
                raise RuntimeError("only one dimension can be inferred")
            inferred = True
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape "
                               f"{list(shape)}")
    known = math.prod(s for s in shape if not _is_minus_one(s))
    if inferred:
        if known == 0 and numel == 0:  # any size would do: PyTorch names the ambiguity
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} "
                               "because the unspecified dimension size -1 can be any value "
                               "and is ambiguous")
        if known == 0 or numel % known != 0:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        return tuple(numel // known if _is_minus_one(s) else s for s in shape)
    if known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


_VIEW_FORMS = ("(torch.dtype dtype)", "(tuple of ints size)")


def view_keywords(shape, kwargs):
    """``view``'s arguments given by keyword (``size=`` or ``dtype=``, alone) as its
    positional ones, or PyTorch's parser's TypeError: it lists both signatures, naming the
    keywords (in the reverse of their order) and, where one argument alone was given, why
    each signature did not take it."""
    if not shape and len(kwargs) == 1:
        (key, value), = kwargs.items()
        fits = isinstance(value, _dtype_class) if key == "dtype" else key == "size" and \
            value.__class__ in _SEQUENCES and (not value or value[0].__class__ not in _NOT_SIZES)
        if fits:
            return (value,)
        if key in ("size", "dtype"):
            other = "size" if key == "dtype" else "dtype"
            desc = type_name(value) if value.__class__ not in _SEQUENCES else \
                f"{type_name(value)} of ({', '.join(map(type_name, value))})"
            why = {other: f"some of the keywords were incorrect: {key}",
                   key: f"some of the arguments have invalid types: (!{key}={desc}!, )"}
            raise TypeError(f"view() received an invalid combination of arguments - got "
                            f"({key}={type_name(value)}, ), but expected one of:\n" + "".join(
                                f" * {f}\n      didn't match because {why[f.split()[-1][:-1]]}\n"
                                for f in _VIEW_FORMS))
    given = dict(reversed(list(kwargs.items())))
    raise invalid_arguments("view", _VIEW_FORMS, *shape, **given) if len(kwargs) == 1 and \
        not shape else sizes_fit_no_form("view", _VIEW_FORMS, shape, given)


def reshape_keywords(shape, kwargs):
    """``reshape``'s ``shape=`` as its positional argument, or Python's TypeError for the
    call as PyTorch's parser words it."""
    unknown = [k for k in kwargs if k != "shape"]
    if "shape" in kwargs and shape:
        raise TypeError("reshape() got multiple values for argument 'shape'")
    if "shape" not in kwargs and not shape:
        raise TypeError('reshape() missing 1 required positional arguments: "shape"')
    if unknown:
        raise TypeError(f"reshape() got an unexpected keyword argument '{unknown[0]}'")
    value = kwargs["shape"]
    if value.__class__ not in _SEQUENCES:
        raise TypeError(f"reshape(): argument 'shape' must be tuple of ints, not "
                        f"{type_name(value)}")
    return (value,)


def reshape_function_args(args, kwargs):
    """``hookgrad.reshape``'s ``(input, shape)`` from its positional ``args`` and keywords,
    or the TypeError PyTorch's parser raises for the function form: ``input`` counts as the
    first argument (``shape`` is at position 2, three arguments are one too many), and a
    ``shape`` that is not a sequence is refused (the method takes sizes one by one)."""
    if len(args) > 2:
        raise TypeError(f"reshape() takes 2 positional arguments but {len(args)} were given")
    names = ("input", "shape")
    for name, _ in zip(names, args):
        if name in kwargs:
            raise TypeError(f"reshape() got multiple values for argument '{name}'")
    given = {**dict(zip(names, args)), **kwargs}
    # NOTE: PyTorch's parser names every parameter from the first missing one on (a
    # ``shape=`` given without ``input`` is named too), "argument" singular for several
    missing = [n for n in names if n not in given]
    missing = list(names[names.index(missing[0]):]) if missing else missing
    if missing:
        raise TypeError(f"reshape() missing {len(missing)} required positional argument"
                        f"{'s' if len(missing) == 1 else ''}: "
                        + ", ".join(f'"{n}"' for n in missing))
    unknown = [k for k in kwargs if k not in names]
    if unknown:
        raise TypeError(f"reshape() got an unexpected keyword argument '{unknown[0]}'")
    input, shape = given["input"], given["shape"]
    if not isinstance(input, Tensor):
        raise TypeError(f"reshape(): argument 'input' (position 1) must be Tensor, not "
                        f"{type_name(input)}")
    where = " (position 2)" if len(args) == 2 else ""
    if shape.__class__ not in _SEQUENCES:
        raise TypeError(f"reshape(): argument 'shape'{where} must be tuple of ints, not "
                        f"{type_name(shape)}")
    if shape and shape[0].__class__ in _NOT_SIZES:
        raise TypeError(f"reshape(): argument 'shape'{where} must be tuple of ints, but found "
                        f"element of type {type_name(shape[0])} at pos 0")
    return input, shape
