"""A call PyTorch's argument parser refuses, worded for the form called: a binary op's
function lists the function's signatures and counts ``input`` in a position (``eq()``,
``mul(): argument 'other' (position 2)``), its method the method's, an alias names itself; a
missing, extra or unknown argument gets the parser's words, not Python's (one signature's
own error, or the listing); a Tensor operator returns NotImplemented for any call its
parser refuses (``x.__mul__(y, foo=1)``), so Python answers. Compared with PyTorch where it
is installed; eager and compiled."""
import re

import numpy as np
import pytest

import hookgrad
from tests.differential import py, raises_as_torch, same_as_torch


def _x(L):
    return L.tensor([1.0, 2.0, 3.0])


def _i(L):
    return L.tensor([1, 2, 3])


_OUT = ", *, Tensor out = None"
_TWO = (f"(Tensor input, Tensor other{_OUT})", f"(Tensor input, Number other{_OUT})")
_TWO_M = ("(Tensor other)", "(Number other)")
_POW = (f"(Tensor input, Tensor exponent{_OUT})", f"(Number self, Tensor exponent{_OUT})",
        f"(Tensor input, Number exponent{_OUT})")
_BITS = (_TWO[0], "(Number self, Tensor other)", _TWO[1])
_DIV = (f"(Tensor input, Tensor other{_OUT})",
        "(Tensor input, Tensor other, *, str rounding_mode, Tensor out = None)",
        "(Tensor input, Number other, *, str rounding_mode)")
_ALPHA = "(Tensor input, Tensor other, *, Number alpha = 1, Tensor out = None)"


def _listed(name, got, forms, lines=None):
    """PyTorch's listing of ``forms`` (``lines``: the line under each, where there is one)."""
    lines = lines or [None] * len(forms)
    return (f"{name}() received an invalid combination of arguments - got ({got}), but "
            "expected one of:\n" + "".join(f" * {f}\n" + (f"      {w}\n" if w else "")
                                           for f, w in zip(forms, lines)))


def _types(marked):
    return f"didn't match because some of the arguments have invalid types: ({marked})"


CASES = {
    # a function form lists the function's signatures (its method: the method's)
    "eq(x, None)": (lambda L: L.eq(_x(L), None), _listed("eq", "Tensor, NoneType", _TWO)),
    "x.eq(None)": (lambda L: _x(L).eq(None), _listed(
        "eq", "NoneType", _TWO_M, [_types("!NoneType!")] * 2)),
    "lt(x, [1.0])": (lambda L: L.lt(_x(L), [1.0]), _listed("lt", "Tensor, list", _TWO)),
    "less(x, 'a')": (lambda L: L.less(_x(L), "a"), _listed("less", "Tensor, str", _TWO)),
    "x.greater_equal(None)": (lambda L: _x(L).greater_equal(None), _listed(
        "greater_equal", "NoneType", _TWO_M, [_types("!NoneType!")] * 2)),
    "ne(x, array)": (lambda L: L.ne(_x(L), np.ones(3)),
                     _listed("ne", "Tensor, numpy.ndarray", _TWO)),
    "bitwise_and(i, None)": (lambda L: L.bitwise_and(_i(L), None), _listed(
        "bitwise_and", "Tensor, NoneType", _BITS, [None, _types("!Tensor!, !NoneType!"), None])),
    "bitwise_xor(i, other=None)": (lambda L: L.bitwise_xor(_i(L), other=None), _listed(
        "bitwise_xor", "Tensor, other=NoneType", _BITS,
        [None, _types("!Tensor!, !other=NoneType!"), None])),
    "xlogy(x, None)": (lambda L: L.xlogy(_x(L), None), _listed("xlogy", "Tensor, NoneType", (
        _TWO[0], f"(Number self, Tensor other{_OUT})", _TWO[1]))),
    "floor_divide(None, x)": (lambda L: L.floor_divide(None, _x(L)), _listed(
        "floor_divide", "NoneType, Tensor", (_TWO[0], "(Tensor input, Number other)"),
        [None, _types("!NoneType!, !Tensor!")])),
    # a number ``input`` where no signature takes one
    "eq(2, x)": (lambda L: L.eq(2, _x(L)), _listed("eq", "int, Tensor", _TWO)),
    "maximum(2, x)": (lambda L: L.maximum(2, _x(L)),
                      "maximum(): argument 'input' (position 1) must be Tensor, not int"),
    # one signature: its own error, the function counting ``input``
    "mul(x, None)": (lambda L: L.mul(_x(L), None),
                     "mul(): argument 'other' (position 2) must be Tensor, not NoneType"),
    "maximum(x, 2)": (lambda L: L.maximum(_x(L), 2),
                      "maximum(): argument 'other' (position 2) must be Tensor, not int"),
    "x.logical_and(None)": (lambda L: _x(L).logical_and(None), "logical_and(): argument "
                            "'other' (position 1) must be Tensor, not NoneType"),
    "add(x, None)": (lambda L: L.add(_x(L), None),
                     "add(): argument 'other' (position 2) must be Tensor, not NoneType"),
    "sub(x, array)": (lambda L: L.sub(_x(L), np.ones(3)),
                      "sub(): argument 'other' (position 2) must be Tensor, not numpy.ndarray"),
    "div(x, 'a')": (lambda L: L.div(_x(L), "a"),
                    "div(): argument 'other' (position 2) must be Tensor, not str"),
    "x.div([1.0])": (lambda L: _x(L).div([1.0]),
                     "div(): argument 'other' (position 1) must be Tensor, not list"),
    "add(x, other=None)": (lambda L: L.add(_x(L), other=None),
                           "add(): argument 'other' must be Tensor, not NoneType"),
    "add(x, 1, alpha=None)": (lambda L: L.add(_x(L), 1, alpha=None),
                              "add(): argument 'alpha' must be Number, not NoneType"),
    # too few or too many arguments, an unknown keyword: the parser's words
    "x.pow()": (lambda L: _x(L).pow(), _listed(
        "pow", "", ("(Tensor exponent)", "(Number exponent)"))),
    "pow(x)": (lambda L: L.pow(_x(L)), _listed("pow", "Tensor", _POW)),
    "eq(x)": (lambda L: L.eq(_x(L)), _listed("eq", "Tensor", _TWO)),
    "x.eq(x, x)": (lambda L: _x(L).eq(_x(L), _x(L)), _listed("eq", "Tensor, Tensor", _TWO_M)),
    "eq(x, x, foo=1)": (lambda L: L.eq(_x(L), _x(L), foo=1),
                        _listed("eq", "Tensor, Tensor, foo=int", _TWO)),
    "x.eq(x, out=x)": (lambda L: _x(L).eq(_x(L), out=_x(L)),
                       _listed("eq", "Tensor, out=Tensor", _TWO_M)),
    "mul(x)": (lambda L: L.mul(_x(L)), 'mul() missing 1 required positional arguments: "other"'),
    "x.mul(x, x)": (lambda L: _x(L).mul(_x(L), _x(L)),
                    "mul() takes 1 positional argument but 2 were given"),
    "x.atan2()": (lambda L: _x(L).atan2(),
                  'atan2() missing 1 required positional arguments: "other"'),
    "add(x)": (lambda L: L.add(_x(L)), "add() received an invalid combination of arguments - "
               f"got (Tensor), but expected {_ALPHA}"),
    "x.add()": (lambda L: _x(L).add(), "add() received an invalid combination of arguments - "
                "got (), but expected (Tensor other, *, Number alpha = 1)"),
    "x.add(x, x)": (lambda L: _x(L).add(_x(L), _x(L)),
                    "add() takes 1 positional argument but 2 were given"),
    "x.sub(x, out=x)": (lambda L: _x(L).sub(_x(L), out=_x(L)),
                        "sub() got an unexpected keyword argument 'out'"),
    "div(x, x, x)": (lambda L: L.div(_x(L), _x(L), _x(L)),
                     _listed("div", "Tensor, Tensor, Tensor", _DIV)),
    "div(x, x, rounding_mode=1)": (lambda L: L.div(_x(L), _x(L), rounding_mode=1),
                                   _listed("div", "Tensor, Tensor, rounding_mode=int", _DIV)),
    "remainder(x, 2, 3)": (lambda L: L.remainder(_x(L), 2, 3), _listed(
        "remainder", "Tensor, int, int", (_TWO[0], "(Number self, Tensor other)", _TWO[1]))),
    "x.fmod(2, out=x)": (lambda L: _x(L).fmod(2, out=_x(L)),
                        _listed("fmod", "int, out=Tensor", _TWO_M)),
    "x.clamp(0, 1, out=x)": (lambda L: _x(L).clamp(0, 1, out=_x(L)), _listed(
        "clamp", "int, int, out=Tensor", ("(Tensor min = None, Tensor max = None)",
                                          "(Number min = None, Number max = None)"))),
    "true_divide(x)": (lambda L: L.true_divide(_x(L)), _listed(
        "true_divide", "Tensor", (_TWO[0], "(Tensor input, Number other)"))),
    "x.true_divide(x, x)": (lambda L: _x(L).true_divide(_x(L), _x(L)),
                            _listed("true_divide", "Tensor, Tensor", _TWO_M)),
    # rsub, nextafter and igamma: a TypeError of their parser, no error of JAX's
    "rsub(x, None)": (lambda L: L.rsub(_x(L), None), _listed("rsub", "Tensor, NoneType", (
        "(Tensor input, Tensor other, *, Number alpha = 1)",
        "(Tensor input, Number other, Number alpha = 1)"))),
    "rsub(None, x)": (lambda L: L.rsub(None, _x(L)), _listed("rsub", "NoneType, Tensor", (
        "(Tensor input, Tensor other, *, Number alpha = 1)",
        "(Tensor input, Number other, Number alpha = 1)"))),
    "x.nextafter(array)": (lambda L: _x(L).nextafter(np.ones(3)), "nextafter(): argument "
                           "'other' (position 1) must be Tensor, not numpy.ndarray"),
    "nextafter(x)": (lambda L: L.nextafter(_x(L)),
                     'nextafter() missing 1 required positional arguments: "other"'),
    "x.igamma(None)": (lambda L: _x(L).igamma(None),
                       "igamma(): argument 'other' (position 1) must be Tensor, not NoneType"),
    "igammac(x, other=2)": (lambda L: L.igammac(_x(L), other=2),
                            "igammac(): argument 'other' must be Tensor, not int"),
    # float_power takes a Tensor or a number, not an array or a list
    "float_power(x, array)": (lambda L: L.float_power(_x(L), np.ones(3)),
                              _listed("float_power", "Tensor, numpy.ndarray", _POW)),
    "float_power(x, list)": (lambda L: L.float_power(_x(L), [1.0, 2.0, 3.0]),
                             _listed("float_power", "Tensor, list", _POW)),
    "float_power(list, x)": (lambda L: L.float_power([2.0], _x(L)),
                             _listed("float_power", "list, Tensor", _POW)),
    "x.float_power(array)": (lambda L: _x(L).float_power(np.ones(3)), _listed(
        "float_power", "numpy.ndarray", ("(Tensor exponent)", "(Number exponent)"),
        [_types("!numpy.ndarray!")] * 2)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_refused_call_raises_pytorchs_parser_error_for_the_form_called(case):
    call, message = CASES[case]
    raises_as_torch(call, TypeError, "^" + re.escape(message) + "$")


@pytest.mark.parametrize("case", ["eq(x, None)", "x.eq(None)", "mul(x, None)", "add(x)"])
def test_the_parser_error_is_the_same_compiled(case):
    call, message = CASES[case]
    compiled = hookgrad.compile(lambda x: call(hookgrad))
    with pytest.raises(TypeError, match="^" + re.escape(message) + "$"):
        compiled(_x(hookgrad))


def test_an_operator_returns_not_implemented_for_a_call_its_parser_refuses():
    # PyTorch's operators turn their parser's TypeError into NotImplemented: an unknown
    # keyword, ``out=``, a missing or an extra operand
    def run(L):
        x, y, i = _x(L), _x(L), _i(L)
        calls = [lambda: x.__mul__(y, foo=1), lambda: x.__mul__(y, out=x),
                 lambda: x.__mul__(), lambda: x.__mul__(y, y), lambda: x.__rmul__(y, foo=1),
                 lambda: x.__eq__(y, foo=1), lambda: x.__eq__(), lambda: x.__ne__(y, foo=1),
                 lambda: x.__lt__(y, foo=1), lambda: x.__le__(y, y), lambda: x.__gt__(out=y),
                 lambda: x.__ge__(y, foo=1), lambda: i.__and__(i, foo=1),
                 lambda: i.__or__(i, foo=1), lambda: i.__xor__(i, foo=1),
                 lambda: i.__rand__(i, foo=1), lambda: i.__ror__(i, foo=1),
                 lambda: i.__rxor__(i, foo=1), lambda: x.__floordiv__(y, foo=1),
                 lambda: x.__add__(), lambda: x.__sub__(y, y)]
        return [c() is NotImplemented for c in calls] + [py(x)]
    assert same_as_torch(run) == [True] * 21 + [[1.0, 2.0, 3.0]]


def test_operands_by_keyword_compute_as_pytorchs():
    def run(L):
        x, y = _x(L), L.tensor([2.0, 2.0, 2.0])
        out = L.empty(3, dtype=L.bool)
        return [py(r) for r in (
            L.eq(x, other=y), L.lt(input=x, other=y), x.ge(other=y), x.__mul__(other=y),
            x.__eq__(other=y), x.__rmul__(other=y), L.mul(input=x, other=2), L.gt(x, y, out=out),
            out, L.add(x, y, alpha=2), L.float_power(2, x), L.float_power(x, 2),
            x.float_power(y), x.pow(exponent=2), L.sum(input=x, dim=0), L.mul(2, x),
            L.bitwise_and(6, L.tensor([3, 5])), L.xlogy(2, x), L.floor_divide(7, x))]
    got = same_as_torch(run)
    assert got[0] == [False, True, False] and got[3] == [2.0, 4.0, 6.0]


SUMS = {  # ``dim`` and ``keepdim`` worded as given: by position or by keyword
    "x.sum(None, 1)": (lambda L: _x(L).sum(None, 1),
                       "sum(): argument 'keepdim' (position 2) must be bool, not int"),
    "x.sum(dim=None, keepdim=1)": (lambda L: _x(L).sum(dim=None, keepdim=1),
                                   "sum(): argument 'keepdim' must be bool, not int"),
    "x.sum(0, 1)": (lambda L: _x(L).sum(0, 1),
                    "sum(): argument 'keepdim' (position 2) must be bool, not int"),
    "x.sum(True)": (lambda L: _x(L).sum(True), _listed("sum", "bool", (
        "(*, torch.dtype dtype = None)",
        "(tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None)"))),
    "x.sum(0, dim=0)": (lambda L: _x(L).sum(0, dim=0),
                        "sum() got multiple values for argument 'dim'"),
    "sum()": (lambda L: L.sum(), _listed("sum", "", (
        "(Tensor input, *, torch.dtype dtype = None)",
        "(Tensor input, tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None, "
        "Tensor out = None)"))),
}


@pytest.mark.parametrize("case", list(SUMS))
def test_sums_arguments_are_worded_as_given(case):
    call, message = SUMS[case]
    raises_as_torch(call, TypeError, "^" + re.escape(message) + "$")
