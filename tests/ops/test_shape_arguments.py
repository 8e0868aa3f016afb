"""A bool where the view and shape ops take a dim: PyTorch's typed parser refuses it with a
TypeError (worded per op), where ``int(True)`` would silently mean dim 1; and the calls its
parser does take (a bool after the first element of a dims tuple). Compared with PyTorch
where it is installed. Positions are the method's, except for ``reshape``'s function form,
whose messages count ``input`` too."""
import pytest

from tests.differential import py, raises_as_torch, same_as_torch


def _x(L):
    return L.ones(2, 3, 4)


def _must_be(name, arg, position, wanted="int"):
    return rf"^{name}\(\): argument '{arg}' \(position {position}\) must be {wanted}, not bool$"


def _invalid(name, got):
    return rf"^{name}\(\) received an invalid combination of arguments - got \({got}\), but " \
           r"expected one of:\n \* \("


def _first_element(name, arg, position):
    return rf"^{name}\(\): argument '{arg}' \(position {position}\) must be tuple of ints, " \
           r"but found element of type bool at pos 0$"


REFUSED = {
    "transpose dim0": (lambda L: _x(L).transpose(True, 0), _must_be("transpose", "dim0", 1)),
    "transpose dim1": (lambda L: _x(L).transpose(0, True), _must_be("transpose", "dim1", 2)),
    "swapaxes": (lambda L: _x(L).swapaxes(True, 0), _must_be("swapaxes", "axis0", 1)),
    "swapdims": (lambda L: _x(L).swapdims(0, False), _must_be("swapdims", "dim1", 2)),
    "select dim": (lambda L: _x(L).select(True, 0), _must_be("select", "dim", 1)),
    "select index": (lambda L: _x(L).select(0, True), _must_be("select", "index", 2)),
    "flatten start_dim": (lambda L: _x(L).flatten(True), _must_be("flatten", "start_dim", 1)),
    "flatten end_dim": (lambda L: _x(L).flatten(0, True), _must_be("flatten", "end_dim", 2)),
    "flatten of a 0-d": (lambda L: L.tensor(1.0).flatten(True),
                         _must_be("flatten", "start_dim", 1)),
    "unflatten": (lambda L: _x(L).unflatten(True, (1, 3)), _must_be("unflatten", "dim", 1)),
    "diagonal dim1": (lambda L: _x(L).diagonal(0, True, 2), _must_be("diagonal", "dim1", 2)),
    "diagonal dim2": (lambda L: _x(L).diagonal(0, 0, True), _must_be("diagonal", "dim2", 3)),
    "unbind": (lambda L: _x(L).unbind(True), _must_be("unbind", "dim", 1)),
    "size": (lambda L: _x(L).size(True), _must_be("size", "dim", 1)),
    "cat": (lambda L: L.cat([_x(L), _x(L)], True), _must_be("cat", "dim", 2)),
    "stack": (lambda L: L.stack([_x(L), _x(L)], True), _must_be("stack", "dim", 2)),
    "chunk dim": (lambda L: _x(L).chunk(2, True), _must_be("chunk", "dim", 2)),
    "chunk chunks": (lambda L: _x(L).chunk(True, 0), _must_be("chunk", "chunks", 1)),
    "split_with_sizes": (lambda L: _x(L).split_with_sizes([1, 1], True),
                         _must_be("split_with_sizes", "dim", 2)),
    # Tensor.split is Python in PyTorch: it calls the function forms
    "split by size": (lambda L: _x(L).split(1, True), _invalid("split", "Tensor, int, bool")),
    "split of a bool size": (lambda L: _x(L).split(True), _invalid("split", "Tensor, bool, int")),
    "split by sizes": (lambda L: _x(L).split([1, 1], True),
                       _must_be("split_with_sizes", "dim", 3)),
    "narrow dim": (lambda L: _x(L).narrow(True, 0, 1), _invalid("narrow", "bool, int, int")),
    "narrow start": (lambda L: _x(L).narrow(0, True, 1), _invalid("narrow", "int, bool, int")),
    "narrow length": (lambda L: _x(L).narrow(0, 0, True), _invalid("narrow", "int, int, bool")),
    "movedim source": (lambda L: _x(L).movedim(True, 0), _invalid("movedim", "bool, int")),
    "movedim destination": (lambda L: _x(L).movedim(0, True), _invalid("movedim", "int, bool")),
    "movedim tuples": (lambda L: _x(L).movedim((0,), (True,)), _invalid("movedim", "tuple, tuple")),
    "moveaxis": (lambda L: _x(L).moveaxis(True, 0), _invalid("moveaxis", "bool, int")),
    "squeeze": (lambda L: _x(L).squeeze(True), _invalid("squeeze", "bool")),
    "squeeze of a list": (lambda L: _x(L).squeeze([True]), _invalid("squeeze", "list")),
    "flip": (lambda L: _x(L).flip(True), _must_be("flip", "dims", 1, "tuple of ints")),
    "flip tuple": (lambda L: _x(L).flip((True,)), _first_element("flip", "dims", 1)),
    "flip separate": (lambda L: _x(L).flip(True, 0),
                      r"^flip\(\) takes 1 positional argument but 2 were given$"),
    "roll dims": (lambda L: _x(L).roll(1, True), _must_be("roll", "dims", 2, "tuple of ints")),
    "roll shifts": (lambda L: _x(L).roll(True, 0),
                    _must_be("roll", "shifts", 1, "tuple of ints")),
    "roll dims tuple": (lambda L: _x(L).roll((1,), (True,)), _first_element("roll", "dims", 2)),
    "permute separate": (lambda L: _x(L).permute(True, 0, 2),
                         r"^permute\(\) takes 1 positional argument but 3 were given$"),
    "permute tuple": (lambda L: _x(L).permute((True, 0, 2)),
                      _first_element("permute", "dims", 1)),
    "permute of a 0-d": (lambda L: L.tensor(1.0).permute(True),
                         _must_be("permute", "dims", 1, "tuple of ints")),
    "unsqueeze": (lambda L: _x(L).unsqueeze(True), _must_be("unsqueeze", "dim", 1)),
    "transpose_": (lambda L: _x(L).transpose_(True, 0), _must_be("transpose_", "dim0", 1)),
    "swapaxes_": (lambda L: _x(L).swapaxes_(0, True), _must_be("swapaxes_", "axis1", 2)),
    "swapdims_": (lambda L: _x(L).swapdims_(True, 0), _must_be("swapdims_", "dim0", 1)),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_bool_dim_raises_pytorchs_type_error(case):
    call, match = REFUSED[case]
    raises_as_torch(call, TypeError, match)


def test_what_the_parser_takes_still_runs():
    # PyTorch's parser checks a dims tuple's first element only, and a method's separate
    # dims after the first are read as ints
    got = same_as_torch(lambda L: [py(r.shape) for r in (
        _x(L).flip(0, True), _x(L).flip((0, True)), _x(L).permute(0, True, 2),
        _x(L).squeeze((0, True)), _x(L).roll((1, 1), (0, True)), _x(L).transpose(0, 1),
        _x(L).swapaxes(-1, 0), _x(L).flatten(1), L.tensor(1.0).flatten(0),
        _x(L).narrow(1, 1, 2), _x(L).movedim(0, -1), _x(L).moveaxis((0, 1), (1, 0)),
        *_x(L).split(2, 1), *_x(L).split([1, 2], 1), *_x(L).chunk(2, -1))])
    assert got[0] == [2, 3, 4] and got[-1] == [2, 3, 2]
    assert same_as_torch(lambda L: _x(L).size(-1)) == 4


@pytest.mark.parametrize("make, dim, match", [
    (lambda L: L.ones(2, 3), 2, r"^Dimension out of range \(expected to be in range of "
                                r"\[-2, 1\], but got 2\)$"),
    (lambda L: L.ones(2, 3), -3, r"\[-2, 1\], but got -3\)$"),
    (lambda L: L.tensor(1.0), 0, r"^Dimension specified as 0 but tensor has no dimensions$"),
    (lambda L: L.tensor(1.0), -1, r"^Dimension specified as -1 but tensor has no dimensions$"),
])
def test_size_of_a_dim_out_of_range_raises_pytorchs_index_error(make, dim, match):
    raises_as_torch(lambda L: make(L).size(dim), IndexError, match)


def test_the_transposes_take_their_own_keywords():
    assert same_as_torch(lambda L: [py(_x(L).swapaxes(axis0=0, axis1=2).shape),
                                    py(L.swapaxes(_x(L), axis0=1, axis1=0).shape),
                                    py(_x(L).swapaxes_(axis0=0, axis1=2).shape),
                                    py(_x(L).swapdims(dim0=0, dim1=1).shape)]) == \
        [[4, 3, 2], [3, 2, 4], [4, 3, 2], [3, 2, 4]]


def test_the_in_place_transposes_still_swap():
    assert same_as_torch(lambda L: [py(_x(L).swapaxes_(0, 2).shape),
                                    py(_x(L).swapdims_(-1, 1).shape),
                                    py(_x(L).transpose_(1, 0).shape)]) == \
        [[4, 3, 2], [2, 4, 3], [3, 2, 4]]


@pytest.mark.parametrize("call,shape", [
    (lambda L: L.ones(2, 3).repeat(-1, 1), r"-2: \[-2, 3\]"),
    (lambda L: L.ones(2, 3).repeat(2, -1, 1), r"-2: \[2, -2, 3\]"),
    (lambda L: L.ones(2, 3).tile(-1), r"-3: \[2, -3\]")], ids=["repeat", "repeat more", "tile"])
def test_a_negative_repeat_raises_pytorchs_error(call, shape):
    raises_as_torch(call, RuntimeError, r"^Trying to create tensor with negative dimension "
                    + shape + "$")


def test_a_float_dim_is_no_int():
    raises_as_torch(lambda L: L.ones(2, 3).transpose(0, 1.0), TypeError,
                    r"^transpose\(\): argument 'dim1' \(position 2\) must be int, not float$")
    raises_as_torch(lambda L: L.ones(2, 3).unsqueeze("1"), TypeError,
                    r"^unsqueeze\(\): argument 'dim' \(position 1\) must be int, not str$")


@pytest.mark.parametrize("call,exc,match", [
    (lambda L: L.ones(2, 3).narrow(0, 5, 1), IndexError,
     r"^start out of range \(expected to be in range of \[-2, 2\], but got 5\)$"),
    (lambda L: L.ones(2, 3).roll([1, 2], [0]), RuntimeError,
     r"^shifts and dimensions must align\. shifts: 2, dims:1$"),
    (lambda L: L.ones(3).topk(1.5), TypeError,
     r"^topk\(\): argument 'k' \(position 1\) must be int, not float$"),
    (lambda L: L.ones(2, 3).reshape(2, 3.0), TypeError,
     r"^reshape\(\): argument .shape. failed to unpack the object at pos 2 with error "
     r"\"type must be tuple of ints,but got float\"$"),
    (lambda L: L.zeros(2, 2.5), TypeError, r"type must be tuple of ints,but got float"),
    (lambda L: L.ones(3).sort(dim=True), TypeError,
     r"^sort\(\) received an invalid combination of arguments - got \(dim=bool"),
    (lambda L: L.nansum(L.ones(3), 0.0), TypeError,
     r"^nansum\(\): argument 'dim' \(position [12]\) must be tuple of ints, not float$"),
    (lambda L: L.kron(L.ones(3), "a"), TypeError,
     r"^kron\(\): argument 'other' \(position [12]\) must be Tensor, not str$"),
    (lambda L: L.nonzero(None), TypeError,
     r"^nonzero\(\): argument 'input' \(position 1\) must be Tensor, not NoneType$"),
    (lambda L: L.tril(L.ones(3)), RuntimeError,
     r"^tril: input tensor must have at least 2 dimensions$"),
    (lambda L: L.ones(3).triu(), RuntimeError,
     r"^triu: input tensor must have at least 2 dimensions$"),
], ids=["narrow start", "roll", "topk k", "reshape size", "zeros size", "sort bool dim",
        "nansum float dim", "kron of a string", "nonzero of None", "tril of a vector",
        "triu of a vector"])
def test_out_of_range_and_mistyped_sizes_raise_pytorchs_error(call, exc, match):
    raises_as_torch(call, exc, match)


_UNPACK = r"^{}\(\): argument '{}' failed to unpack the object at pos {} with error " \
          r"\"type must be tuple of ints,but got {}\"$"
SIZES = {
    "reshape(True, 24)": (lambda x: x.reshape(True, 24),
                          r"^reshape\(\) takes 1 positional argument but 2 were given$"),
    "reshape(False, 24)": (lambda x: x.reshape(False, 24),
                           r"^reshape\(\) takes 1 positional argument but 2 were given$"),
    "reshape(None, 24)": (lambda x: x.reshape(None, 24),
                          r"^reshape\(\) takes 1 positional argument but 2 were given$"),
    "reshape(2.0, 12)": (lambda x: x.reshape(2.0, 12),
                         r"^reshape\(\) takes 1 positional argument but 2 were given$"),
    "reshape(True)": (lambda x: x.reshape(True), r"^reshape\(\): argument 'shape' \(position "
                      r"1\) must be tuple of ints, not bool$"),
    "reshape((True, 24))": (lambda x: x.reshape((True, 24)), r"^reshape\(\): argument 'shape' "
                            r"\(position 1\) must be tuple of ints, but found element of type "
                            r"bool at pos 0$"),
    "reshape([2.0, 12])": (lambda x: x.reshape([2.0, 12]), r"^reshape\(\): argument 'shape' "
                           r"\(position 1\) must be tuple of ints, but found element of type "
                           r"float at pos 0$"),
    "view(2, 2.0, 6)": (lambda x: x.view(2, 2.0, 6), _UNPACK.format("view", "size", 2, "float")),
    "view((2, 2.0, 6))": (lambda x: x.view((2, 2.0, 6)),
                          _UNPACK.format("view", "size", 2, "float")),
    "view(2, None)": (lambda x: x.view(2, None), _UNPACK.format("view", "size", 2, "NoneType")),
    "reshape(2, 12, 1.0)": (lambda x: x.reshape(2, 12, 1.0),
                            _UNPACK.format("reshape", "shape", 3, "float")),
    "reshape(2, '12')": (lambda x: x.reshape(2, "12"),
                         _UNPACK.format("reshape", "shape", 2, "str")),
}


@pytest.mark.parametrize("case", list(SIZES))
def test_view_and_reshape_sizes_of_other_types_raise_pytorchs_type_error(case):
    call, match = SIZES[case]
    raises_as_torch(lambda L: call(L.arange(24.0)), TypeError, match)


def test_a_bool_after_the_first_size_is_taken_as_an_int():
    got = same_as_torch(lambda L: [list(L.arange(24.0).reshape(*s).shape) for s in (
        (2, True, 12), (2, 1, True, 12), ((2, True, 12),))] + [
        list(L.arange(24.0).view(2, True, 12).shape)])
    assert got[0] == [2, 1, 12]


def test_view_and_reshape_take_their_sizes_by_keyword():
    got = same_as_torch(lambda L: [list(L.arange(24.0).view(size=(2, 12)).shape),
                                   list(L.arange(24.0).view(size=[3, 8]).shape),
                                   str(L.arange(24.0).view(dtype=L.int32).dtype).split(".")[1],
                                   list(L.arange(24.0).reshape(shape=(4, 6)).shape),
                                   list(L.reshape(L.arange(24.0), shape=(6, 4)).shape)])
    assert got[0] == [2, 12] and got[2] == "int32"


def _combination(got, *why):
    forms = ("(torch.dtype dtype)", "(tuple of ints size)")
    return (rf"^view\(\) received an invalid combination of arguments - got \({got}\), but "
            r"expected one of:\n" + "".join(
                rf" \* {f}\n" + (rf"      didn't match because {w}\n" if w else "")
                for f, w in zip((f.replace("(", r"\(").replace(")", r"\)") for f in forms),
                                why or (None, None))) + "$")


KEYWORDS = {
    # PyTorch's parser lists the signatures, the keywords last and in reverse order, with
    # a line per signature only where one argument alone was given
    "view(2, 12, foo=1)": (lambda L, x: x.view(2, 12, foo=1), _combination("int, int, foo=int")),
    "view(foo=1)": (lambda L, x: x.view(foo=1), _combination(
        "foo=int, ", *["some of the keywords were incorrect: foo"] * 2)),
    "view(size=(2, 12), foo=1)": (lambda L, x: x.view(size=(2, 12), foo=1),
                                  _combination("foo=int, size=tuple, ")),
    "view(2, size=(2, 12))": (lambda L, x: x.view(2, size=(2, 12)),
                              _combination("int, size=tuple")),
    "view(torch.float32, foo=1)": (lambda L, x: x.view(x.dtype, foo=1),
                                   _combination("torch.dtype, foo=int")),
    "view(size=2)": (lambda L, x: x.view(size=2), _combination(
        "size=int, ", "some of the keywords were incorrect: size",
        r"some of the arguments have invalid types: \(!size=int!, \)")),
    "reshape(foo=1)": (lambda L, x: x.reshape(foo=1),
                       r'^reshape\(\) missing 1 required positional arguments: "shape"$'),
    "reshape(2, shape=(2, 12))": (lambda L, x: x.reshape(2, shape=(2, 12)),
                                  r"^reshape\(\) got multiple values for argument 'shape'$"),
    "reshape(shape=(2, 12), foo=1)": (lambda L, x: x.reshape(shape=(2, 12), foo=1),
                                      r"^reshape\(\) got an unexpected keyword argument 'foo'$"),
    "reshape(shape=2)": (lambda L, x: x.reshape(shape=2),
                         r"^reshape\(\): argument 'shape' must be tuple of ints, not int$"),
    "sin(Size)": (lambda L, x: L.sin(x.shape), r"^sin\(\): argument 'input' \(position 1\) "
                  r"must be Tensor, not torch\.Size$"),
}


@pytest.mark.parametrize("case", list(KEYWORDS))
def test_view_and_reshape_keywords_they_do_not_take_raise_pytorchs_type_error(case):
    call, match = KEYWORDS[case]
    raises_as_torch(lambda L: call(L, L.arange(24.0)), TypeError, match)


def _function_must_be(got, where=" \\(position 2\\)"):
    return rf"^reshape\(\): argument 'shape'{where} must be tuple of ints, {got}$"


FUNCTION_FORM = {
    # the function form takes one ``tuple of ints`` (no sizes one by one) and counts
    # ``input`` in its positions and its number of arguments
    "reshape(x, 2, 12)": (lambda L, x: L.reshape(x, 2, 12),
                          r"^reshape\(\) takes 2 positional arguments but 3 were given$"),
    "reshape(x, 2, 3, 4)": (lambda L, x: L.reshape(x, 2, 3, 4),
                            r"^reshape\(\) takes 2 positional arguments but 4 were given$"),
    "reshape(x, True, 24)": (lambda L, x: L.reshape(x, True, 24),
                             r"^reshape\(\) takes 2 positional arguments but 3 were given$"),
    "reshape(x, 24)": (lambda L, x: L.reshape(x, 24), _function_must_be("not int")),
    "reshape(x, True)": (lambda L, x: L.reshape(x, True), _function_must_be("not bool")),
    "reshape(x, None)": (lambda L, x: L.reshape(x, None), _function_must_be("not NoneType")),
    "reshape(x, (True, 24))": (lambda L, x: L.reshape(x, (True, 24)), _function_must_be(
        "but found element of type bool at pos 0")),
    "reshape(x, (2.0, 12))": (lambda L, x: L.reshape(x, (2.0, 12)), _function_must_be(
        "but found element of type float at pos 0")),
    "reshape(x, (2, None))": (lambda L, x: L.reshape(x, (2, None)),
                              _UNPACK.format("reshape", "shape", 2, "NoneType")),
    "reshape(x, shape=24)": (lambda L, x: L.reshape(x, shape=24), _function_must_be("not int",
                                                                                   "")),
    "reshape(x)": (lambda L, x: L.reshape(x),
                   r'^reshape\(\) missing 1 required positional arguments: "shape"$'),
    "reshape(shape=(2, 12))": (lambda L, x: L.reshape(shape=(2, 12)),
                               r'^reshape\(\) missing 2 required positional argument: '
                               r'"input", "shape"$'),
    "reshape(x, (2, 12), foo=1)": (lambda L, x: L.reshape(x, (2, 12), foo=1),
                                   r"^reshape\(\) got an unexpected keyword argument 'foo'$"),
    "reshape(x, (2, 12), input=x)": (lambda L, x: L.reshape(x, (2, 12), input=x),
                                     r"^reshape\(\) got multiple values for argument 'input'$"),
    "reshape([1.0], (1,))": (lambda L, x: L.reshape([1.0], (1,)), r"^reshape\(\): argument "
                             r"'input' \(position 1\) must be Tensor, not list$"),
    "x.reshape()": (lambda L, x: x.reshape(),
                    r'^reshape\(\) missing 1 required positional arguments: "shape"$'),
}


@pytest.mark.parametrize("case", list(FUNCTION_FORM))
def test_reshapes_function_form_raises_pytorchs_type_error(case):
    call, match = FUNCTION_FORM[case]
    raises_as_torch(lambda L: call(L, L.arange(24.0)), TypeError, match)


def test_reshapes_function_form_takes_a_sequence_or_keywords():
    got = same_as_torch(lambda L: [list(L.reshape(L.arange(24.0), s).shape) for s in (
        (2, 12), [3, -1], L.Size([4, 6]))] + [
        list(L.reshape(input=L.arange(24.0), shape=(6, 4)).shape),
        list(L.reshape(L.arange(1.0), ()).shape)])
    assert got == [[2, 12], [3, 8], [4, 6], [6, 4], []]


SEQUENCE_AND_SIZES = {
    # a sequence then more sizes: too many arguments for the sequence's signature; a
    # sequence after a size fails to unpack (Python's int() words neither)
    "x.reshape([2, 12], 1)": (lambda x: x.reshape([2, 12], 1),
                              r"^reshape\(\) takes 1 positional argument but 2 were given$"),
    "x.reshape((2, 12), (1,))": (lambda x: x.reshape((2, 12), (1,)),
                                 r"^reshape\(\) takes 1 positional argument but 2 were given$"),
    "x.reshape(2, [12])": (lambda x: x.reshape(2, [12]),
                           _UNPACK.format("reshape", "shape", 2, "list")),
    "x.view([2, 12], 1)": (lambda x: x.view([2, 12], 1), _combination("list, int")),
    "x.view(2, (12,))": (lambda x: x.view(2, (12,)), _UNPACK.format("view", "size", 2, "tuple")),
}


@pytest.mark.parametrize("case", list(SEQUENCE_AND_SIZES))
def test_a_sequence_beside_other_sizes_raises_pytorchs_type_error(case):
    call, match = SEQUENCE_AND_SIZES[case]
    raises_as_torch(lambda L: call(L.arange(24.0)), TypeError, match)
