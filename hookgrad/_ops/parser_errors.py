"""PyTorch's argument parser's TypeErrors, worded as it words them.

PyTorch's signatures are typed (``int dim``, ``tuple of ints dims``); hookgrad's Python ones
take whatever comes, and ``int(True)`` is 1, so a bool dim would silently mean dim 1. The ops
test the type inline (``d.__class__ is bool``: no call on a valid call's path) and build the
error here only when they raise. Positions count from the first argument after ``self``, as
the Tensor method's message does (a function form's message counts one more: hookgrad's
one Python function for most ops cannot tell which form was called; the ops with a function
per form over one body, ``variants(forms=, method_words=)`` and the binary rows
(``binary_forms``), word each form's errors, and ``arguments_error`` follows the parser's
rule for arguments no signature takes).
"""
from __future__ import annotations

import numpy as np

from .._dtype import dtype
from .._errors import type_name  # the parser's name of a type (the factories' too)
from .._tensor import Tensor


def not_a(name, arg, value, wanted="int", position=1):
    """``name(): argument 'arg' (position n) must be <wanted>, not <type>`` (``position``
    None: a keyword's wording, which names no position)."""
    where = "" if position is None else f" (position {position})"
    return TypeError(f"{name}(): argument '{arg}'{where} must be {wanted}, not "
                     f"{type_name(value)}")


def refused_call(err):
    """``err``, a chooser's TypeError for an argument its parser refuses, marked for
    ``variants(forms=)`` to word again as the parser words the call, for the form called
    (a function's ``(position 2)``, its method's ``(position 1)``)."""
    err.refused_call = True
    return err


def number(name, arg, value, position=None, wanted="Number"):
    """``float(value)`` for a scalar argument, or PyTorch's parser TypeError where it is
    no number (a str, None, a sequence), which ``float()`` would word its own way."""
    if value.__class__ is float:
        return value
    if value is None or isinstance(value, (str, bytes, list, tuple, dict)):
        raise not_a(name, arg, value, wanted, position)
    return float(value)


def integer(name, arg, value, position=None):
    """``value`` of an ``int`` argument, or PyTorch's parser TypeError where it is none (a
    bool, a float, a str, None; NumPy's integers pass, as they do in PyTorch)."""
    if value.__class__ is int:
        return value
    if value.__class__ is bool or not hasattr(value, "__index__"):
        raise not_a(name, arg, value, "int", position)
    return int(value)


def boolean(name, arg, value, position=None):
    """``value`` of a ``bool`` argument, or PyTorch's parser TypeError where it is none (an
    int, a str, None, a Tensor, NumPy's bool: ``bool()`` would take them all)."""
    if value.__class__ is bool:
        return value
    raise not_a(name, arg, value, "bool", position)


def not_a_dim(name, dim, wanted="int"):
    """PyTorch's TypeError for a ``dim`` argument of the wrong type (a bool, None)."""
    return not_a(name, "dim", dim, wanted)


def bool_in_int_list(name, arg, value, position=1):
    """PyTorch's TypeError for a ``tuple of ints`` argument that is a bool or whose first
    element is one (the parser reads the first element's type only: a later bool passes as
    an int, in PyTorch and here), else None. NOTE: a call; a common op tests inline."""
    if value.__class__ is bool:
        return not_a(name, arg, value, "tuple of ints", position)
    if isinstance(value, (tuple, list)) and value and value[0].__class__ is bool:
        return TypeError(f"{name}(): argument '{arg}' (position {position}) must be tuple of "
                         "ints, but found element of type bool at pos 0")
    return None


def invalid_arguments(name, forms, *args, **given):
    """PyTorch's TypeError for a call none of ``name``'s signatures (``forms``) takes;
    ``args`` (positional) and ``given`` (keywords): the arguments that made it so."""
    return _invalid(name, forms, args, given, True)


def sizes_fit_no_form(name, forms, sizes, given=None):
    """PyTorch's TypeError for sizes given one by one (``view(True, 24)``) that fit none of
    ``forms`` (``given``: keywords beside them): its parser adds no line per signature for
    several arguments."""
    return _invalid(name, forms, sizes, given or {}, False)


def _invalid(name, forms, args, given, why):
    got = ", ".join(type_name(v) for v in args)
    # PyTorch's wording: a keyword follows a positional one after ", ", else ends in ", "
    got += "".join(f", {k}={type_name(v)}" if args else f"{k}={type_name(v)}, "
                   for k, v in given.items())
    why = _why_not if why is True else why  # (else a function of its own, or none)
    err = TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                    "but expected one of:\n" + "".join(
                        f" * {f.replace('?', '')}\n{why(f, args, given) if why else ''}"
                        for f in forms))
    err.parser_call = (forms, args, given, why)  # for ``as_method`` to word it again
    return err


def unknown_keyword(err, name, args, kwargs):
    """PyTorch's TypeError for one unknown keyword of ``name``, an op of several signatures
    (``_INPUT_FORMS``) given its other arguments by position: its parser lists them, with
    no line per signature (``fmod() received an invalid combination of arguments - got
    (Tensor, int, foo=int)``); ``err``, Python's TypeError, otherwise (several keywords:
    PyTorch lists them in an order of its own)."""
    forms = _INPUT_FORMS.get(name)
    if forms is None or len(kwargs) != 1 or "unexpected keyword argument" not in str(err):
        return err
    return _invalid(name, forms, args, kwargs, False)


def as_method(err, name):
    """The TypeError of the Tensor method ``name`` (an in-place form, ``fmod_``) for the
    one ``err`` its function's parser raised (``fmod()``): PyTorch's method names itself,
    and its signatures are the function's that take a Tensor first, without it or
    ``out``. Another error is returned as it is."""
    base = name[:-1] if name.endswith("_") else name
    call = getattr(err, "parser_call", None)
    if call is not None:
        forms, args, given, why = call
        params = [f[1:-1].split(", ") for f in forms]
        if any(p[0].rsplit(" ", 1)[-1] in ("input", "self") for p in params):
            methods = []
            for p in params:
                if p[0].startswith("Tensor "):
                    rest = [q for q in p[1:] if q != "Tensor out = None"]
                    methods.append(f"({', '.join(rest[:-1] if rest[-1:] == ['*'] else rest)})")
            forms, args = methods, args[1:]
        return _invalid(name, forms, args, given, why)
    msg = str(err)
    if err.__class__ is TypeError and msg.startswith(base + "("):
        return TypeError(name + msg[len(base):])
    return err


def _why_not(form, args, given):
    """The line PyTorch's parser adds under a signature the call could have meant: a keyword
    it does not have, or, where the call gives as many arguments as it has parameters
    (``out`` counted), each argument's type marked ``!...!`` where it does not fit."""
    params = [p.split(" = ")[0].rsplit(" ", 1) for p in form[1:-1].split(", ")
              if p and p != "*"]
    bad = [k for k in given if k not in {p[-1] for p in params}]
    if bad:
        return ("      didn't match because some of the keywords were incorrect: "
                f"{', '.join(bad)}\n")
    if given or len(params) != len(args):
        return ""
    marked = [_described(v) if _fits(p[0], v) else f"!{_described(v)}!"
              for p, v in zip(params, args)]
    return ("      didn't match because some of the arguments have invalid types: "
            f"({', '.join(marked)})\n")


def _fits(kind, v):
    """Whether the parser takes ``v`` for a parameter of type ``kind`` (a type it has no
    rule for here: taken)."""
    c = v.__class__
    if kind[-1:] == "?":  # (an optional parameter, which the parser prints without it)
        return v is None or _fits(kind[:-1], v)
    if kind == "Tensor":
        return isinstance(v, Tensor)
    if kind == "Number":
        return c in (int, float, complex, bool)
    if kind == "int":
        return c is not bool and hasattr(v, "__index__")
    if kind == "bool":
        return c is bool
    if kind == "torch.dtype":
        return isinstance(v, dtype)
    if kind == "tuple of ints":
        return isinstance(v, (list, tuple)) and all(_fits("int", x) for x in v)
    return True


def _described(v):
    """``v``'s type as the parser's marks name it: a sequence with its items' types."""
    if v.__class__ is list:
        return f"list of [{', '.join(map(type_name, v))}]"
    if v.__class__ is tuple:
        return f"tuple of ({', '.join(map(type_name, v))}{',' if len(v) == 1 else ''})"
    return type_name(v)


_OUT = ", *, Tensor out = None"
# the function forms of binary ops whose ``input`` may be a number (pow, remainder) or not
_INPUT_FORMS = {
    "pow": (f"(Tensor input, Tensor exponent{_OUT})", f"(Number self, Tensor exponent{_OUT})",
            f"(Tensor input, Number exponent{_OUT})"),
    "remainder": (f"(Tensor input, Tensor other{_OUT})", "(Number self, Tensor other)",
                  f"(Tensor input, Number other{_OUT})"),
    "copysign": (f"(Tensor input, Tensor other{_OUT})", f"(Tensor input, Number other{_OUT})"),
    "fmod": (f"(Tensor input, Tensor other{_OUT})", f"(Tensor input, Number other{_OUT})"),
    "true_divide": (f"(Tensor input, Tensor other{_OUT})", "(Tensor input, Number other)"),
    "float_power": (f"(Tensor input, Tensor exponent{_OUT})",
                    f"(Number self, Tensor exponent{_OUT})",
                    f"(Tensor input, Number exponent{_OUT})"),
}


def input_forms(name):
    """``{name: (the method's signatures, the function's)}`` of an op of ``_INPUT_FORMS``,
    for ``variants(forms=)``: the method's are the function's that take a Tensor first,
    without it or ``out``."""
    methods = tuple("(" + ", ".join(p for p in f[1:-1].split(", ")[1:]
                                    if p not in ("*", "Tensor out = None")) + ")"
                    for f in _INPUT_FORMS[name] if f.startswith("(Tensor "))
    return {name: (methods, _INPUT_FORMS[name])}
# no form of theirs takes a number ``input`` (a bool is a number for the others' forms)
_NO_NUMBER_INPUT = ("fmod", "true_divide", "copysign")
# an ``other`` none of those forms takes (a Tensor or a number): hookgrad's operand reader
# would take a list as data and word the others its own way
REFUSED_OTHERS = frozenset({type(None), str, list, tuple, np.ndarray})


def refuse_other(name, input, other):
    """PyTorch's TypeError for a binary op's ``other`` that is neither a Tensor nor a
    number (the caller tests ``other.__class__ in REFUSED_OTHERS`` inline)."""
    raise refused_call(invalid_arguments(name, _INPUT_FORMS[name], input, other))


def refuse_input(name, input, other):
    """PyTorch's TypeError for a function form's ``input`` (not a Tensor: the caller has
    checked) that is not a number either: a list, a string, None, an array."""
    if not isinstance(input, (int, float, complex)) or name in _NO_NUMBER_INPUT:
        raise refused_call(invalid_arguments(name, _INPUT_FORMS[name], input, other))


def takes_one(name, args):
    """PyTorch's TypeError for a method taking its ``tuple of ints`` as several separate
    arguments (``x.permute(*dims)``) whose first is a bool: its parser then reads them as
    too many arguments."""
    return TypeError(f"{name}() takes 1 positional argument but {len(args)} were given")


def arity_error(name, params, args, kwargs):
    """PyTorch's TypeError for a call of ``name`` (parameters ``params``, all positional and
    required) with an unknown keyword or another count of positional ``args``."""
    if kwargs:
        return TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kwargs))}'")
    n = len(params)
    if len(args) > n:
        return TypeError(f"{name}() takes {n} positional argument{'s' if n != 1 else ''} but "
                         f"{len(args)} were given")
    missing = params[len(args):]
    return TypeError(f"{name}() missing {len(missing)} required positional arguments: "
                     + ", ".join(f'"{p}"' for p in missing))


def arguments_error(name, forms, args, kwargs, hidden=False):
    """PyTorch's TypeError for a call of ``name`` (``args`` after ``self`` for a method)
    that none of its signatures ``forms`` (the method's or the function's, as called)
    takes, where the arguments themselves are the fault (an unknown keyword, one too
    many). Its parser counts the arguments, keywords included: where exactly one signature
    takes that many, it raises that signature's own error (``sum() got an unexpected
    keyword argument 'foo'``, a missing or mistyped argument); otherwise it lists them all,
    the keywords in the reverse of their order. An op of one signature raises its own
    error whatever the count (``mul() missing 1 required positional arguments``), unless
    it has ``hidden`` ones too (add's and sub's deprecated ``(Tensor, Number alpha, Tensor
    other)``), which count as several but are never listed: one listed alone reads ``got
    (...), but expected (...)``, the arguments it cannot take marked."""
    params = [_params(f) for f in forms]
    if len(forms) == 1 and not hidden:
        return _own_error(name, params[0], args, kwargs)
    n = len(args) + len(kwargs)
    fit = [p for p in params if _required(p) <= n <= len(p)]
    if len(fit) == 1:
        return _own_error(name, fit[0], args, kwargs)
    kwargs = dict(reversed(list(kwargs.items())))
    if len(forms) == 1:
        return _one_form(name, forms[0], params[0], args, kwargs)
    return _invalid(name, forms, args, kwargs, _why_keywords)


def _one_form(name, form, params, args, kwargs):
    """The parser's listing of one signature (``got (Tensor, !Tensor!), but expected
    (Tensor other, *, Number alpha = 1)``): an argument marked where the signature has no
    place for it or its type does not fit."""
    positional = [p for p in params if not p[3]]
    by_name = {p[1]: p for p in params}
    got = [_described(v) if i < len(positional) and _takes(positional[i][0], v)
           else f"!{_described(v)}!" for i, v in enumerate(args)]
    got += [f"{k}={_described(v)}" if k in by_name and _takes(by_name[k][0], v)
            else f"!{k}={_described(v)}!" for k, v in kwargs.items()]
    return TypeError(f"{name}() received an invalid combination of arguments - got "
                     f"({', '.join(got)}), but expected {form.replace('?', '')}")


# the ops whose parser takes a Python number for a ``Tensor`` parameter (``x.mul(2)``)
NUMBERS_AS_TENSORS = frozenset(("add", "sub", "subtract", "mul", "multiply", "div", "divide",
                                "true_divide", "floor_divide"))


def _params(form):
    """A signature's parameters: ``(kind, name, default or None, keyword only)``."""
    out, kw_only = [], False
    for p in form[1:-1].split(", "):
        if p == "*":
            kw_only = True
        elif p:
            decl, _, default = p.partition(" = ")
            kind, name = decl.rsplit(" ", 1)
            out.append((kind, name, default or None, kw_only))
    return out


def _required(params):
    return sum(p[2] is None for p in params)


def _own_error(name, params, args, kwargs):
    """The error of the one signature ``params`` a call's count fits, in the order its
    parser checks: too many positional arguments, then each parameter (missing from the
    first missing required one on, or of a type it does not take), then the keywords left
    (unknown, or given twice)."""
    positional = [p for p in params if not p[3]]
    numbers = (name[:-1] if name.endswith("_") else name) in NUMBERS_AS_TENSORS
    if len(args) > len(positional):
        lo, hi = sum(p[2] is None for p in positional), len(positional)
        took = f"from {lo} to {hi}" if lo != hi else str(hi)
        return TypeError(f"{name}() takes {took} positional argument{'s' if hi != 1 else ''} "
                         f"but {len(args)} were given")
    for i, (kind, arg, default, _) in enumerate(params):
        if i < len(args):
            value, where = args[i], i + 1
        elif arg in kwargs:
            value, where = kwargs[arg], None
        elif default is None:
            missing = [f'"{p[1]}"' for p in params[i:] if p[2] is None]
            return TypeError(f"{name}() missing {len(missing)} required positional argument"
                             f"{'s' if len(missing) == 1 else ''}: {', '.join(missing)}")
        else:
            continue
        if not (value is None and default == "None" or _takes(kind, value) or
                kind == "Tensor" and numbers and value.__class__ in (int, float, complex, bool)):
            return not_a(name, arg, value, kind.rstrip("?"), where)
    names = [p[1] for p in params]
    for k in kwargs:
        if k not in names:
            return TypeError(f"{name}() got an unexpected keyword argument '{k}'")
        if names.index(k) < len(args):
            return TypeError(f"{name}() got multiple values for argument '{k}'")
    return TypeError(f"{name}(): invalid arguments")  # (not reached: the call was refused)


def _takes(kind, value):
    # a ``tuple of ints`` dim takes one int too (PyTorch's ``int[1]``)
    return _fits(kind, value) or kind.rstrip("?") == "tuple of ints" and _fits("int", value)


def _why_keywords(form, args, given):
    """The line PyTorch's parser adds under a signature with as many items as the call has
    arguments (``*`` and ``out`` counted): the keywords it does not match, which, as its
    parser reads a signature, are all but those naming a parameter without a default (in
    the order given: already reversed), else each argument's type marked where it does
    not fit."""
    if len(args) + len(given) != len(form[1:-1].split(", ")):
        return ""
    plain = {p[1] for p in _params(form) if p[2] is None}
    bad = [k for k in given if k not in plain]
    if bad:
        return ("      didn't match because some of the keywords were incorrect: "
                f"{', '.join(bad)}\n")
    if not given:
        return _why_not(form, args, {})
    kinds = {p[1]: p[0] for p in _params(form)}
    marked = [_described(v) if _fits(p[0], v) else f"!{_described(v)}!"
              for p, v in zip(_params(form), args)]
    marked += [f"{k}={_described(v)}" if _fits(kinds[k], v) else f"!{k}={_described(v)}!"
               for k, v in given.items()]
    if all(not m.startswith("!") for m in marked):
        return ""
    return ("      didn't match because some of the arguments have invalid types: "
            f"({', '.join(marked)})\n")
