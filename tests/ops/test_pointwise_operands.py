"""A NumPy array or a list as a binary op's operand: PyTorch's parser refuses it in ``add``
and the ordering comparisons (function and method forms), while its operators leave an
array to NumPy (``x + a`` is NumPy's sum, wrapped back into a Tensor; ``x < a`` is
Python's TypeError, a Tensor that requires grad or not). Compared with PyTorch where it is
installed."""
import numpy as np
import pytest

from tests.differential import py, raises_as_torch, same_as_torch


def _x(L, grad=False):
    return L.tensor([1.0, 2.0, 3.0], requires_grad=grad)


_A = np.array([1.0, 2.5, 0.0])


def _not_supported(op, left, right):
    return rf"^'{op}' not supported between instances of '{left}' and '{right}'$"


def _invalid(name, got):
    return rf"^{name}\(\) received an invalid combination of arguments - got \({got}\), but " \
           r"expected one of:\n \* \(Tensor other\)\n"


def _not_a_tensor(name, arg="other"):
    # hookgrad's one function counts the method's position
    return rf"^{name}\(\): argument '{arg}' \(position [12]\) must be Tensor, not int$"


REFUSED = {
    **{f"{name} of a number": (lambda L, name=name: getattr(L, name)(_x(L), 2),
                               _not_a_tensor(name))
       for name in ("maximum", "minimum", "fmax", "fmin", "atan2", "hypot", "logaddexp",
                    "logaddexp2", "ldexp")},
    "maximum method of a number": (lambda L: _x(L).maximum(2), _not_a_tensor("maximum")),
    "gcd of a number": (lambda L: L.tensor([4, 6]).gcd(2), _not_a_tensor("gcd")),
    "lcm of a number": (lambda L: L.lcm(L.tensor([4, 6]), 3), _not_a_tensor("lcm")),
    "heaviside of a number": (lambda L: L.heaviside(_x(L), 1), _not_a_tensor("heaviside",
                                                                               "values")),
    "add method": (lambda L: _x(L).add(_A), r"^add\(\): argument 'other' \(position 1\) must "
                   r"be Tensor, not numpy\.ndarray$"),
    "add method, alpha": (lambda L: _x(L).add(_A, alpha=2), r"^add\(\): argument 'other' "
                          r"\(position 1\) must be Tensor, not numpy\.ndarray$"),
    "add of a list": (lambda L: _x(L).add([1.0, 1.0, 1.0]), r"^add\(\): argument 'other' "
                      r"\(position 1\) must be Tensor, not list$"),
    # hookgrad's one function counts the method's position
    "add function": (lambda L: L.add(_x(L), _A), r"^add\(\): argument 'other' \(position "
                     r"[12]\) must be Tensor, not numpy\.ndarray$"),
    "lt method": (lambda L: _x(L).lt(_A), _invalid("lt", "numpy.ndarray")),
    "ge method of a list": (lambda L: _x(L).ge([1, 2, 3]), _invalid("ge", "list")),
    "x < array": (lambda L: _x(L) < _A, _not_supported("<", "Tensor", "numpy.ndarray")),
    "x_rg < array": (lambda L: _x(L, True) < _A, _not_supported("<", "Tensor", "numpy.ndarray")),
    "x_rg >= array": (lambda L: _x(L, True) >= _A,
                      _not_supported(">=", "Tensor", "numpy.ndarray")),
    "array <= x": (lambda L: _A <= _x(L), _not_supported("<=", "numpy.ndarray", "Tensor")),
    "x > list": (lambda L: _x(L) > [1, 2, 3], _not_supported(">", "Tensor", "list")),
    "x + list": (lambda L: _x(L) + [1, 2, 3],
                 r"^unsupported operand type\(s\) for \+: 'Tensor' and 'list'$"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_an_array_operand_raises_pytorchs_type_error(case):
    call, match = REFUSED[case]
    raises_as_torch(call, TypeError, match)


def test_the_operators_leave_an_array_to_numpy():
    def run(L):
        x = _x(L)
        y = x
        y += _A  # NumPy's sum, a new Tensor: ``x`` keeps its values
        return [py(x + _A), py(x - _A), py(y), py(x), str(y.dtype).split(".")[1],
                py(x.add(2.0)), py(x < 2), py(x.lt(_x(L)))]
    got = same_as_torch(run)
    assert got[2] == [2.0, 4.5, 3.0] and got[3] == [1.0, 2.0, 3.0] and got[4] == "float64"


def test_a_tensor_that_requires_grad_plus_an_array_reads_it_by_numpy():
    raises_as_torch(lambda L: _x(L, True) + _A, RuntimeError, r"^Can't call numpy\(\) on Tensor "
                    r"that requires grad\. Use tensor\.detach\(\)\.numpy\(\) instead\.$")


@pytest.mark.parametrize("array", [np.arange(3), np.arange(3, dtype=np.int32),
                                   np.ones(3, np.float32), np.array(2.0), np.array(2),
                                   np.ones((2, 3)), np.ones(3, np.complex128)],
                         ids=["int64", "int32", "float32", "0-d float64", "0-d int64",
                              "broadcast", "complex128"])
@pytest.mark.parametrize("left", ["float32", "int64"])
def test_an_operator_with_an_array_gives_numpys_result_dtype(array, left):
    # NumPy computes it: a float32 Tensor plus an int64 array is float64, as NumPy's own
    def run(L):
        x = L.ones(3, dtype=getattr(L, left))
        return [[str(r.dtype).split(".")[1], py(r.abs())] for r in (
            x + array, x - array, x * array, x / array)]
    got = same_as_torch(run)
    assert got[0][0] == np.result_type(np.dtype(left), array).name


def _unsupported(op, left, right):
    return rf"^unsupported operand type\(s\) for {op}: '{left}' and '{right}'$"


# an array on the left: NumPy defers to the Tensor (its __array_priority__), whose reflected
# operator returns NotImplemented, as PyTorch's do: Python's TypeError
LEFT = {
    "array - x": (lambda L: _A - _x(L), _unsupported("-", "numpy.ndarray", "Tensor")),
    "int array - x": (lambda L: np.arange(3) - _x(L), _unsupported("-", "numpy.ndarray",
                                                                   "Tensor")),
    "0-d array - x": (lambda L: np.array(1.0) - _x(L), _unsupported("-", "numpy.ndarray",
                                                                    "Tensor")),
    "array * x": (lambda L: _A * _x(L), _unsupported(r"\*", "numpy.ndarray", "Tensor")),
    "array % x": (lambda L: _A % _x(L), _unsupported("%", "numpy.ndarray", "Tensor")),
    "array ** x": (lambda L: _A ** _x(L), _unsupported(r"\*\* or pow\(\)", "numpy.ndarray",
                                                       "Tensor")),
    "array // x": (lambda L: _A // _x(L), _unsupported("//", "numpy.ndarray", "Tensor")),
    "array @ x": (lambda L: _A @ _x(L), _unsupported("@", "numpy.ndarray", "Tensor")),
    "array & x": (lambda L: np.arange(3) & L.tensor([1, 2, 3]),
                  _unsupported("&", "numpy.ndarray", "Tensor")),
    "array + x": (lambda L: _A + _x(L), r"^Concatenation operation is not implemented for "
                  r"NumPy arrays"),
    "pow method": (lambda L: L.pow(_x(L), np.array(2)), r"^pow\(\) received an invalid "
                   r"combination of arguments - got \(Tensor, numpy\.ndarray\)"),
    "remainder function": (lambda L: L.remainder(_x(L), np.array(2)), r"^remainder\(\) "
                           r"received an invalid combination of arguments - got \(Tensor, "
                           r"numpy\.ndarray\)"),
}


@pytest.mark.parametrize("case", list(LEFT))
def test_an_array_on_the_left_of_an_operator_raises_pytorchs_type_error(case):
    call, match = LEFT[case]
    raises_as_torch(call, TypeError, match)


def test_reflected_operators_return_not_implemented_for_an_array():
    def run(L):
        x, i = _x(L), L.tensor([1, 2, 3])
        return [getattr(x, n)(_A) is NotImplemented for n in (
            "__radd__", "__rsub__", "__rmul__", "__rmod__", "__rpow__", "__rfloordiv__",
            "__rmatmul__")] + [getattr(i, n)(np.arange(3)) is NotImplemented
                               for n in ("__rand__", "__ror__", "__rxor__")]
    assert same_as_torch(run) == [True] * 10


def test_an_array_divided_by_a_tensor_and_compared_with_it_work_as_pytorchs():
    # ``array / x`` is ``x.reciprocal() * array`` (NumPy's product); ``array == x`` the
    # Tensor's ``__eq__``
    got = same_as_torch(lambda L: [[str(r.dtype).split(".")[1], py(r)] for r in (
        np.array([2.0, 1.0, 3.0]) / _x(L), _A == _x(L))])
    assert got[0][0] == "float64"


@pytest.mark.parametrize("array", [np.array(2), np.array(2.0), np.array([1, 2, 3]),
                                   np.array([2.0, 1.0, 2.0], np.float32)],
                         ids=["0-d int64", "0-d float64", "int64", "float32"])
@pytest.mark.parametrize("left", ["float32", "int64"])
def test_remainder_power_and_matmul_with_an_array_give_numpys_result(array, left):
    # NumPy computes them (float32 and an int64 array: float64), as PyTorch leaves them to it
    def run(L):
        x = L.tensor([3, 4, 5], dtype=getattr(L, left))
        out = [x % array, x ** array]
        if array.ndim:
            out.append(x @ array)
        return [[str(r.dtype).split(".")[1], py(r)] for r in out]
    got = same_as_torch(run)
    assert got[0][0] == np.result_type(np.dtype(left), array).name


def test_an_operator_with_a_numpy_scalar_reads_it_as_a_number():
    got = same_as_torch(lambda L: [str(r.dtype).split(".")[1] for r in (
        L.ones(3) * np.float64(2), L.ones(3) + np.int64(1),
        L.ones(3, dtype=L.long) * np.float64(2))])
    assert got == ["float32", "float32", "float32"]


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "float32", "float16",
                                   "complex64"])
def test_masked_fill_names_a_mask_dtype_by_its_cpp_type(dtype):
    name = {"int64": "long int", "int32": "int", "uint8": "unsigned char", "float32": "float",
            "float16": "c10::Half", "complex64": "c10::complex<float>"}[dtype]
    raises_as_torch(lambda L: _x(L).masked_fill(L.ones(3, dtype=getattr(L, dtype)), 1.0),
                    RuntimeError, rf"^masked_fill_ only supports boolean masks, but got mask "
                                  rf"with dtype {name}$")


@pytest.mark.parametrize("op", ["exp", "sin", "log1p", "trunc", "logical_not", "isnan"])
@pytest.mark.parametrize("value", [3, 2.5, [1.0, 2.0], None, "a", np.ones(2)],
                         ids=["int", "float", "list", "None", "str", "ndarray"])
def test_a_unary_op_takes_only_a_tensor(op, value):
    kind = {"ndarray": "numpy.ndarray"}.get(type(value).__name__, type(value).__name__)
    kind = "NoneType" if value is None else kind
    raises_as_torch(lambda L: getattr(L, op)(value), TypeError,
                    rf"^{op}\(\): argument 'input' \(position 1\) must be Tensor, not {kind}$")


@pytest.mark.parametrize("other", [None, "a"], ids=["None", "str"])
@pytest.mark.parametrize("op", ["add", "sub", "div", "mul", "atan2", "maximum"])
def test_none_or_a_string_as_other_is_refused_by_the_parser(op, other):
    # (hookgrad's one function counts the method's position)
    kind = "NoneType" if other is None else "str"
    raises_as_torch(lambda L: getattr(L, op)(_x(L), other), TypeError,
                    rf"^{op}\(\): argument 'other' \(position [12]\) must be Tensor, not {kind}$")


@pytest.mark.parametrize("op,match", [
    ("add", None), ("sub", None), ("div", None), ("mul", None), ("atan2", None),
    ("maximum", None), ("logical_and", None),
    ("eq", r"^eq\(\) received an invalid combination of arguments - got \(list, Tensor\)"),
    ("floor_divide", r"^floor_divide\(\) received an invalid combination of arguments - got "
                     r"\(list, Tensor\)"),
    ("bitwise_and", r"^bitwise_and\(\) received an invalid combination of arguments - got "
                    r"\(list, Tensor\)"),
    ("pow", r"^pow\(\) received an invalid combination of arguments - got \(list, Tensor\), "
            r"but expected one of:\n \* \(Tensor input, Tensor exponent, \*, Tensor out = "
            r"None\)\n \* \(Number self, Tensor exponent"),
    ("remainder", r"^remainder\(\) received an invalid combination of arguments - got "
                  r"\(list, Tensor\), but expected one of:\n \* \(Tensor input, Tensor other"),
    ("copysign", r"^copysign\(\) received an invalid combination of arguments - got \(list, "
                 r"Tensor\), but expected one of:\n \* \(Tensor input, Tensor other, \*, Tensor "
                 r"out = None\)\n \* \(Tensor input, Number other, \*, Tensor out = None\)\n$"),
    ("fmod", r"^fmod\(\) received an invalid combination of arguments - got \(list, "
             r"Tensor\), but expected one of:\n \* \(Tensor input, Tensor other, \*, Tensor "
             r"out = None\)\n \* \(Tensor input, Number other, \*, Tensor out = None\)\n$")])
def test_a_list_as_a_binary_ops_input_is_refused_by_the_parser(op, match):
    match = match or rf"^{op}\(\): argument 'input' \(position 1\) must be Tensor, not list$"
    raises_as_torch(lambda L: getattr(L, op)([1.0, 2.0, 3.0], _x(L)), TypeError, match)


@pytest.mark.parametrize("other", [None, "a", [1.0]], ids=["None", "str", "list"])
@pytest.mark.parametrize("op", ["pow", "fmod", "remainder", "copysign"])
def test_an_other_neither_tensor_nor_number_is_refused_by_the_parser(op, other):
    # the ops with a Number form word it as an invalid combination (a list is no data here)
    got = "NoneType" if other is None else type(other).__name__
    raises_as_torch(lambda L: getattr(L, op)(_x(L), other), TypeError,
                    rf"^{op}\(\) received an invalid combination of arguments - got "
                    rf"\(Tensor, {got}\), but expected one of:\n \* \(Tensor input, Tensor ")


def test_fmod_of_a_number_input_is_refused_and_copysign_names_shapes_in_order():
    raises_as_torch(lambda L: L.fmod(1.5, _x(L)), TypeError,
                    r"^fmod\(\) received an invalid combination of arguments - got \(float, "
                    r"Tensor\)")
    raises_as_torch(lambda L: L.copysign(L.ones(2, 3), L.ones(4, 5)), RuntimeError,
                    r"^The size of tensor a \(3\) must match the size of tensor b \(5\) at "
                    r"non-singleton dimension 1$")


@pytest.mark.parametrize("op", ["neg", "round"])
def test_neg_and_round_take_only_a_tensor(op):
    raises_as_torch(lambda L: getattr(L, op)(2.5), TypeError,
                    rf"^{op}\(\): argument 'input' \(position 1\) must be Tensor, not float$")


@pytest.mark.parametrize("call,got", [
    (lambda L: _x(L).clamp("a"), "str"), (lambda L: _x(L).clamp(None, "b"), "NoneType, str"),
    (lambda L: _x(L).clamp([1.0]), "list")], ids=["str", "None and str", "list"])
def test_clamp_takes_tensor_or_number_bounds(call, got):
    raises_as_torch(call, TypeError, rf"^clamp\(\) received an invalid combination of "
                                     rf"arguments - got \({got}\), but expected one of:\n")


def test_a_number_input_still_computes_where_pytorch_takes_one():
    same_as_torch(lambda L: [py(L.pow(2, _x(L))), py(L.remainder(5, _x(L))), py(2 ** _x(L))])


def test_operators_take_their_methods_keywords():
    # PyTorch's ``+``, ``-`` and ``/`` (and ``+=``, ``-=``, ``/=``) are their methods:
    # ``alpha=`` and ``rounding_mode=`` by keyword, ``__radd__`` is ``add`` too
    def run(L):
        x, t = _x(L, True), L.tensor([4.0, -1.0, 0.5])
        out = [x.__add__(2, alpha=3), x.__radd__(t, alpha=0.5), x.__sub__(1, alpha=2),
               x.__truediv__(t, rounding_mode="floor"), x.__truediv__(2, rounding_mode=None)]
        y = _x(L)
        same = [y.__iadd__(1, alpha=2) is y, y.__isub__(t, alpha=2) is y,
                y.__itruediv__(3, rounding_mode="trunc") is y]
        out[0].sum().backward()
        return [py(r) for r in out] + [same, py(y), py(x.grad)]
    got = same_as_torch(run)
    assert got[0] == [7.0, 8.0, 9.0] and got[2] == [-1.0, 0.0, 1.0]
    assert got[5] == [True] * 3


def test_operators_given_a_keyword_their_method_refuses_are_not_implemented():
    # their methods' parsers' TypeError (a keyword they do not take, ``out=``, an operand
    # they refuse beside a keyword) is NotImplemented, as every operator's
    def run(L):
        x = _x(L)
        calls = [lambda: x.__add__(1, rounding_mode="floor"), lambda: x.__add__(1, out=x),
                 lambda: x.__radd__(1, foo=1), lambda: x.__sub__(1, rounding_mode=None),
                 lambda: x.__truediv__(1, alpha=2), lambda: x.__truediv__(1, out=x),
                 lambda: x.__rsub__(1, alpha=2), lambda: x.__rsub__(1, foo=1),
                 lambda: x.__add__(None, alpha=2), lambda: x.__iadd__(1, out=x),
                 lambda: x.__isub__(1, rounding_mode="floor"), lambda: x.__itruediv__(1, alpha=2),
                 lambda: x.__pow__(2, alpha=1), lambda: x.__mod__(2, foo=1),
                 lambda: x.__matmul__(x, out=x), lambda: x.__rpow__(2, foo=1)]
        return [c() is NotImplemented for c in calls] + [py(x)]
    assert same_as_torch(run) == [True] * 16 + [[1.0, 2.0, 3.0]]
