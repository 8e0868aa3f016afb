"""An unknown keyword (or one argument too many) to an op of several signatures: PyTorch's
parser counts the arguments, keywords included; where exactly one signature takes that
many it raises that signature's own error, otherwise it lists them all (the method's or
the function's, as called), the keywords in the reverse of their order, with a line under
a signature only where the count equals its items (``*`` and ``out`` counted). Compared
with PyTorch where it is installed; eager and compiled."""
import pytest

import hookgrad
from tests.differential import raises_as_torch


def _x(L):
    return L.arange(6.0).reshape(2, 3)


_SUM_M = (r"\(\*, torch\.dtype dtype = None\)",
          r"\(tuple of ints dim, bool keepdim = False, \*, torch\.dtype dtype = None\)")
_SUM_F = (r"\(Tensor input, \*, torch\.dtype dtype = None\)",
          r"\(Tensor input, tuple of ints dim, bool keepdim = False, \*, torch\.dtype dtype = "
          r"None, Tensor out = None\)")
_CLAMP_M = (r"\(Tensor min = None, Tensor max = None\)",
            r"\(Number min = None, Number max = None\)")
_CLAMP_F = (r"\(Tensor input, Tensor min = None, Tensor max = None, \*, Tensor out = None\)",
            r"\(Tensor input, Number min = None, Number max = None, \*, Tensor out = None\)")


def _listed(name, got, forms, *why):
    why = why or (None,) * len(forms)
    return (rf"^{name}\(\) received an invalid combination of arguments - got \({got}\), but "
            r"expected one of:\n" + "".join(
                rf" \* {f}\n" + (rf"      didn't match because some of the keywords were "
                                 rf"incorrect: {w}\n" if w else "") for f, w in zip(forms, why))
            + "$")


def _unexpected(name, key):
    return rf"^{name}\(\) got an unexpected keyword argument '{key}'$"


CASES = {
    # two signatures take one argument: both listed, no line (neither has one item)
    "x.sum(foo=1)": (lambda L, x: x.sum(foo=1), _listed("sum", "foo=int, ", _SUM_M)),
    "sum(x, foo=1)": (lambda L, x: L.sum(x, foo=1), _listed("sum", "Tensor, foo=int", _SUM_F)),
    # one signature takes two: its own error
    "x.sum(0, foo=1)": (lambda L, x: x.sum(0, foo=1), _unexpected("sum", "foo")),
    "sum(x, 0, True, foo=1)": (lambda L, x: L.sum(x, 0, True, foo=1),
                               _unexpected("sum", "foo")),
    "x.sum(0, bar=2, foo=1)": (lambda L, x: x.sum(0, bar=2, foo=1), _unexpected("sum", "bar")),
    "x.sum(foo=1, bar=2)": (lambda L, x: x.sum(foo=1, bar=2),
                            r'^sum\(\) missing 1 required positional arguments: "dim"$'),
    "x.sum(dtype=float32, foo=1)": (lambda L, x: x.sum(dtype=L.float32, foo=1),
                                    r'^sum\(\) missing 1 required positional arguments: '
                                    r'"dim"$'),
    "x.sum('a', foo=1)": (lambda L, x: x.sum("a", foo=1), r"^sum\(\): argument 'dim' "
                          r"\(position 1\) must be tuple of ints, not str$"),
    "x.sum(0, 'a', foo=1)": (lambda L, x: x.sum(0, "a", foo=1), r"^sum\(\): argument "
                             r"'keepdim' \(position 2\) must be bool, not str$"),
    # none takes four: listed, a line under the one of four items
    "x.sum(0, True, float32, foo=1)": (
        lambda L, x: x.sum(0, True, L.float32, foo=1),
        _listed("sum", "int, bool, torch\\.dtype, foo=int", _SUM_M, None, "foo")),
    "x.sum(0, True, dtype=float32, foo=1)": (
        lambda L, x: x.sum(0, True, dtype=L.float32, foo=1),
        _listed("sum", "int, bool, foo=int, dtype=torch\\.dtype", _SUM_M, None, "foo, dtype")),
    "sum(x, 0, True, float32, foo=1, bar=2)": (
        lambda L, x: L.sum(x, 0, True, dtype=L.float32, foo=1, bar=2),
        _listed("sum", "Tensor, int, bool, bar=int, foo=int, dtype=torch\\.dtype", _SUM_F, None,
                "bar, foo, dtype")),
    "x.clamp(foo=1)": (lambda L, x: x.clamp(foo=1), _listed("clamp", "foo=int, ", _CLAMP_M)),
    "clamp(x, foo=1)": (lambda L, x: L.clamp(x, foo=1),
                        _listed("clamp", "Tensor, foo=int", _CLAMP_F)),
    "x.clamp(0, foo=1)": (lambda L, x: x.clamp(0, foo=1),
                          _listed("clamp", "int, foo=int", _CLAMP_M, "foo", "foo")),
    "clamp(x, 0, foo=1)": (lambda L, x: L.clamp(x, 0, foo=1),
                           _listed("clamp", "Tensor, int, foo=int", _CLAMP_F)),
    "x.clamp(max=1, foo=1)": (lambda L, x: x.clamp(max=1, foo=1),
                              _listed("clamp", "foo=int, max=int, ", _CLAMP_M, "foo, max",
                                      "foo, max")),
    "x.clamp(0, 1, 2)": (lambda L, x: x.clamp(0, 1, 2),
                         _listed("clamp", "int, int, int", _CLAMP_M)),
    "clamp(x, 0, 1, foo=1, bar=2)": (lambda L, x: L.clamp(x, 0, 1, foo=1, bar=2),
                                     _listed("clamp", "Tensor, int, int, bar=int, foo=int",
                                             _CLAMP_F, "bar, foo", "bar, foo")),
    "x.clamp_(0, foo=1)": (lambda L, x: x.clamp_(0, foo=1),
                           _listed("clamp_", "int, foo=int", _CLAMP_M, "foo", "foo")),
    "x.clip(0, foo=1)": (lambda L, x: x.clip(0, foo=1),
                         _listed("clip", "int, foo=int", _CLAMP_M, "foo", "foo")),
    "clip(x, 0, foo=1)": (lambda L, x: L.clip(x, 0, foo=1),
                          _listed("clip", "Tensor, int, foo=int", _CLAMP_F)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_unknown_keyword_raises_pytorchs_parser_error_for_the_form_called(case):
    call, match = CASES[case]
    raises_as_torch(lambda L: call(L, _x(L)), TypeError, match)


@pytest.mark.parametrize("case", ["x.sum(foo=1)", "x.clamp(0, foo=1)", "clamp(x, foo=1)"])
def test_the_parser_error_is_the_same_compiled(case):
    call, match = CASES[case]
    compiled = hookgrad.compile(lambda x: call(hookgrad, x))
    with pytest.raises(TypeError, match=match):
        compiled(_x(hookgrad))


def test_the_forms_still_compute_as_pytorchs():
    from tests.differential import py, same_as_torch
    got = same_as_torch(lambda L: [py(f(_x(L))) for f in (
        lambda x: x.sum(), lambda x: L.sum(x, 1, True), lambda x: x.sum(dim=0, dtype=L.float64),
        lambda x: x.clamp(1, max=4), lambda x: L.clip(x, min=2), lambda x: x.clip(max=3),
        lambda x: L.clamp(x, 1, 4, out=L.empty(2, 3)))])
    assert got[0] == 15.0 and got[3] == [[1.0, 1.0, 2.0], [3.0, 4.0, 4.0]]
