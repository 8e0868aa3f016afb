"""The argument parser's words for the other forms of a binary op: a method (in place or
not) names itself and lists the method's signatures (``fmod_()``), and an operator leaves an
operand the parser refuses to Python (``x % "a"``: "unsupported operand type(s) for %:
'Tensor' and 'str'"), as PyTorch's do; compared with PyTorch where it is installed."""
import numpy as np
import pytest

from tests.differential import raises_as_torch, same_as_torch


def _x(L):
    return L.ones(2, 3)


_METHOD_FORMS = r" \* \(Tensor {0}\)\n      didn't match because some of the arguments have " \
                r"invalid types: \(!{1}!\)\n \* \(Number {0}\)\n      didn't match because some " \
                r"of the arguments have invalid types: \(!{1}!\)\n$"
IN_PLACE = {  # the in-place method forms name themselves, with the method's signatures
    "fmod_": (lambda L: _x(L).fmod_(None), TypeError,
              r"^fmod_\(\) received an invalid combination of arguments - got \(NoneType\), but "
              r"expected one of:\n" + _METHOD_FORMS.format("other", "NoneType")),
    "remainder_": (lambda L: _x(L).remainder_("a"), TypeError,
                   r"^remainder_\(\) received an invalid combination of arguments - got \(str\), "
                   r"but expected one of:\n" + _METHOD_FORMS.format("other", "str")),
    "pow_": (lambda L: _x(L).pow_(None), TypeError,
             r"^pow_\(\) received an invalid combination of arguments - got \(NoneType\), but "
             r"expected one of:\n" + _METHOD_FORMS.format("exponent", "NoneType")),
    "true_divide_": (lambda L: _x(L).true_divide_(None), TypeError,
                     r"^true_divide_\(\) received an invalid combination of arguments - got "
                     r"\(NoneType\), but expected one of:\n"
                     + _METHOD_FORMS.format("other", "NoneType")),
    "add_": (lambda L: _x(L).add_(None), TypeError,
             r"^add_\(\): argument 'other' \(position 1\) must be Tensor, not NoneType$"),
    "mul_": (lambda L: _x(L).mul_("a"), TypeError,
             r"^mul_\(\): argument 'other' \(position 1\) must be Tensor, not str$"),
    "atan2_ of a number": (lambda L: _x(L).atan2_(2), TypeError,
                           r"^atan2_\(\): argument 'other' \(position 1\) must be Tensor, not "
                           r"int$"),
    "logical_and_": (lambda L: _x(L).logical_and_(None), TypeError,
                     r"^logical_and_\(\): argument 'other' \(position 1\) must be Tensor, not "
                     r"NoneType$"),
    "add_'s unknown keyword": (lambda L: _x(L).add_(1, foo=1), TypeError,
                               r"^add_\(\) got an unexpected keyword argument 'foo'$"),
    "mul_'s unknown keyword": (lambda L: _x(L).mul_(1, foo=1), TypeError,
                               r"^mul_\(\) got an unexpected keyword argument 'foo'$"),
    "add's unknown keyword": (lambda L: L.add(_x(L), 1, foo=1), TypeError,
                              r"^add\(\) got an unexpected keyword argument 'foo'$"),
    # an op of several signatures lists them for one unknown keyword (no line per form)
    "fmod's unknown keyword": (
        lambda L: L.fmod(_x(L), 2, foo=1), TypeError,
        r"^fmod\(\) received an invalid combination of arguments - got \(Tensor, int, foo=int\), "
        r"but expected one of:\n \* \(Tensor input, Tensor other, \*, Tensor out = None\)\n "
        r"\* \(Tensor input, Number other, \*, Tensor out = None\)\n$"),
    "pow_'s unknown keyword": (
        lambda L: _x(L).pow_(2, foo=1), TypeError,
        r"^pow_\(\) received an invalid combination of arguments - got \(int, foo=int\), but "
        r"expected one of:\n \* \(Tensor exponent\)\n \* \(Number exponent\)\n$"),
    "mul_ of two": (lambda L: _x(L).mul_(1, 2), TypeError,
                    r"^mul_\(\) takes 1 positional argument but 2 were given$"),
    "atan2_ of none": (lambda L: _x(L).atan2_(), TypeError,
                       r"^atan2_\(\) missing 1 required positional arguments: \"other\"$"),
}


@pytest.mark.parametrize("call, exc, match", IN_PLACE.values(), ids=IN_PLACE.keys())
def test_an_in_place_method_words_its_errors_as_pytorchs(call, exc, match):
    raises_as_torch(call, exc, match)


_OPERATORS = ["%", "+", "-", "*", "/", "//", "**", "&", "|", "^", "@"]


@pytest.mark.parametrize("op", _OPERATORS)
@pytest.mark.parametrize("other", ["'a'", "None", "[1.0]", "{}", "(1,)", "object()"])
def test_an_operator_leaves_an_operand_its_parser_refuses_to_python(op, other):
    """PyTorch's operators return NotImplemented where its parser refuses the operand, so
    Python words the TypeError (``unsupported operand type(s) for %: 'Tensor' and 'str'``)
    or asks the other operand (``x * 'a'`` asks the string to repeat itself), either way
    round and in place."""
    def run(L, src):
        x = L.ones(2, dtype=L.int64) if op in "&|^" else L.ones(2, 2)
        try:
            exec(src, {"x": x, "L": L})
        except TypeError as e:
            return str(e)
        return "no error"
    for src in (f"x {op} {other}", f"{other} {op} x", f"y = x.clone(); y {op}= {other}"):
        got = run(__import__("hookgrad"), src)
        assert not got.startswith(("add(", "mul(", "sub(", "div(")), src  # (a parser's)
        assert got != "no error" or src.startswith("'a' %"), src  # (str's own formatting)
        try:
            import torch
        except ImportError:
            continue
        assert got == run(torch, src), src
    if other == "'a'" and op == "%":
        assert run(__import__("hookgrad"), "x % 'a'") == \
            "unsupported operand type(s) for %: 'Tensor' and 'str'"


def test_a_comparison_with_a_string_or_none_is_pythons():
    """``==``/``!=`` of a Tensor and a string or None fall back to identity (False/True),
    an ordering raises Python's TypeError, as PyTorch's operators do."""
    def run(L):
        x = L.ones(2)
        out = [x == "a", x != None, x == [1.0, 2.0]]  # noqa: E711 - the operator itself
        for src in ("x < 'a'", "x >= None"):
            try:
                eval(src, {"x": x})
            except TypeError as e:
                out.append(str(e))
        return out
    assert same_as_torch(run) == [False, True, False,
                                  "'<' not supported between instances of 'Tensor' and 'str'",
                                  "'>=' not supported between instances of 'Tensor' and "
                                  "'NoneType'"]


@pytest.mark.parametrize("op", ["+", "-", "*", "/"])
def test_an_in_place_operator_leaves_a_numpy_array_to_the_out_of_place_one(op):
    """PyTorch's in-place method refuses a NumPy array (``mul_(): argument 'other' must be
    Tensor``), so its in-place operator returns NotImplemented and Python computes
    ``x op array`` instead: a new Tensor (float64 here), the old one unchanged. (Before,
    hookgrad's in-place operator raised the method's TypeError.)"""
    def run(L):
        x = L.tensor([1.0, 2.0])
        y = x
        for other in (__import__("numpy").array(2.0), __import__("numpy").array([2.0, 4.0])):
            y = x
            exec(f"y {op}= other", {"other": other}, loc := {"y": y})
            y = loc["y"]
        return [y is x, str(y.dtype).split(".")[-1], y.tolist(), x.tolist()]
    got = same_as_torch(run)
    assert got[:2] == [False, "float64"]


def test_numpy_float64_and_complex128_scalars_are_numbers_to_the_arithmetic_ops():
    """PyTorch reads a NumPy scalar operand as a Python number, so it does not widen a
    Tensor's dtype: an int Tensor plus np.float64(0.5) is float32 (the default dtype), a
    float32 Tensor to the power np.float64(2) stays float32. NumPy's float64 and
    complex128 are Python floats and complexes, which hookgrad passed on as they were,
    and JAX kept their 64 bits (float64 results)."""
    import numpy as np

    def run(L):
        xi, x = L.tensor([1, 2]), L.tensor([1.0, 2.0])
        out = [xi + np.float64(0.5), xi - np.float64(0.5), xi / np.float64(2),
               x ** np.float64(2), x.pow(np.float64(2)), xi % np.float64(1.5),
               xi.fmod(np.float64(1.5)), xi.remainder(np.float64(1.5)),
               L.add(xi, np.float64(0.5)), x.sub(np.float64(1), alpha=2),
               x * np.complex128(1j), x + np.complex128(1 + 1j)]
        return [[str(r.dtype).split(".")[-1], str(r.tolist())] for r in out]
    got = same_as_torch(run)
    assert [d for d, _ in got] == ["float32"] * 10 + ["complex64"] * 2


def test_a_numpy_scalar_on_the_left_of_a_reflected_operator_is_a_number():
    """``np.float32(3) ** x``, ``np.int64(3) // x``: PyTorch's reflected operators read the
    NumPy scalar as a Python number (before, hookgrad's pow and floor_divide refused it,
    and a float64 one widened the result)."""
    import numpy as np

    def run(L):
        xi, x = L.tensor([1, 2]), L.tensor([1.0, 2.0])
        out = [np.float64(3) ** x, np.float32(3) ** x, np.int64(3) ** xi,
               np.float64(3) // x, np.int64(3) // x, np.float64(3) % x, np.int32(3) % xi]
        return [[str(r.dtype).split(".")[-1], str(r.tolist())] for r in out]
    got = same_as_torch(run)
    assert [d for d, _ in got] == ["float32"] * 2 + ["int64"] + ["float32"] * 3 + ["int64"]


def _method_refuses(name, arg, got, marked):
    return (rf"^{name}\(\) received an invalid combination of arguments - got \({got}\), but "
            r"expected one of:\n" + _METHOD_FORMS.format(arg, marked))


_ARRAY = "numpy\\.ndarray"
METHOD = {  # the out-of-place method forms name the method and list its signatures too
    "x.pow(array)": (lambda L: _x(L).pow(np.ones(3)),
                     _method_refuses("pow", "exponent", _ARRAY, _ARRAY)),
    "x.pow(None)": (lambda L: _x(L).pow(None),
                    _method_refuses("pow", "exponent", "NoneType", "NoneType")),
    "x.remainder(array)": (lambda L: _x(L).remainder(np.ones(3)),
                           _method_refuses("remainder", "other", _ARRAY, _ARRAY)),
    "x.remainder(None)": (lambda L: _x(L).remainder(None),
                          _method_refuses("remainder", "other", "NoneType", "NoneType")),
    "x.fmod(array)": (lambda L: _x(L).fmod(np.ones(3)),
                      _method_refuses("fmod", "other", _ARRAY, _ARRAY)),
    "x.fmod(None)": (lambda L: _x(L).fmod(None),
                     _method_refuses("fmod", "other", "NoneType", "NoneType")),
    "x.fmod([1.0])": (lambda L: _x(L).fmod([1.0]),
                      _method_refuses("fmod", "other", "list", r"list of \[float\]")),
    "x.copysign('a')": (lambda L: _x(L).copysign("a"),
                        _method_refuses("copysign", "other", "str", "str")),
    "x.true_divide(None)": (lambda L: _x(L).true_divide(None),
                            _method_refuses("true_divide", "other", "NoneType", "NoneType")),
    # an unknown keyword: the method's signatures, no line (one item, two arguments)
    "x.fmod(2, foo=1)": (lambda L: _x(L).fmod(2, foo=1),
                         r"^fmod\(\) received an invalid combination of arguments - got \(int, "
                         r"foo=int\), but expected one of:\n \* \(Tensor other\)\n \* \(Number "
                         r"other\)\n$"),
    "x.true_divide(2, foo=1)": (lambda L: _x(L).true_divide(2, foo=1),
                                r"^true_divide\(\) received an invalid combination of arguments "
                                r"- got \(int, foo=int\), but expected one of:\n \* \(Tensor "
                                r"other\)\n \* \(Number other\)\n$"),
    # the function forms keep theirs
    "fmod(x, None)": (lambda L: L.fmod(_x(L), None),
                      r"^fmod\(\) received an invalid combination of arguments - got \(Tensor, "
                      r"NoneType\), but expected one of:\n \* \(Tensor input, Tensor other, \*, "
                      r"Tensor out = None\)\n \* \(Tensor input, Number other, \*, Tensor out = "
                      r"None\)\n$"),
}


@pytest.mark.parametrize("case", list(METHOD))
def test_a_method_words_its_parser_errors_as_pytorchs(case):
    call, match = METHOD[case]
    raises_as_torch(call, TypeError, match)


def test_the_method_forms_still_compute_as_pytorchs():
    got = same_as_torch(lambda L: [r.tolist() for r in (
        _x(L).pow(2), _x(L).remainder(L.tensor(0.75)), _x(L).fmod(0.75), _x(L).copysign(-1),
        _x(L).true_divide(4), L.Tensor.pow(_x(L), 3))])
    assert got[4] == [[0.25] * 3] * 2
