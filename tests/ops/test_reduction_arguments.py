"""The arguments PyTorch's parser refuses in the reductions and dim-taking ops, with its
TypeError: a ``keepdim`` without a ``dim`` where no signature takes one, an explicit
``dim=None`` where the signature with a dim takes an int (``prod``, ``max``, ``median``),
and a bool ``dim``; and what the same ops do take (an explicit None where PyTorch takes
it). Compared with PyTorch where it is installed."""
import pytest

from tests.differential import py, raises_as_torch, same_as_torch


def _x(L):
    return L.tensor([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]])


def _invalid(name, got):
    return rf"^{name}\(\) received an invalid combination of arguments - got \({got}"


REFUSED = {
    "sum keepdim without dim": (lambda L: _x(L).sum(keepdim=True), _invalid("sum", "keepdim=bool")),
    "sum of a bool dim": (lambda L: _x(L).sum(dim=True), _invalid("sum", "dim=bool")),
    "mean keepdim without dim": (lambda L: L.mean(_x(L), keepdim=True), _invalid("mean", "")),
    "prod dim=None": (lambda L: _x(L).prod(dim=None), _invalid("prod", "dim=NoneType")),
    # PyTorch's parser words a positional None by the one signature it fits in length;
    # hookgrad's cannot tell a positional argument from a keyword one
    "prod None positionally": (lambda L: _x(L).prod(None, True),
                               r"^prod\(\)(: argument 'dim' \(position 1\) must be int, not "
                               r"NoneType| received an invalid combination of arguments)"),
    "prod keepdim without dim": (lambda L: _x(L).prod(keepdim=True), _invalid("prod", "")),
    "max dim=None": (lambda L: _x(L).max(dim=None), _invalid("max", "dim=NoneType")),
    "min keepdim without dim": (lambda L: L.min(_x(L), keepdim=True), _invalid("min", "")),
    "max of a bool dim": (lambda L: _x(L).max(True), _invalid("max", "")),
    "all of a bool dim": (lambda L: _x(L).all(dim=True), _invalid("all", "")),
    "count_nonzero of a bool dim": (lambda L: _x(L).count_nonzero(True),
                                    _invalid("count_nonzero", "")),
    "median dim=None": (lambda L: _x(L).median(dim=None),
                        r"^median\(\): argument 'dim' (\(position 1\) )?must be int, not "
                        r"NoneType$"),
    "nanmedian keepdim without dim": (lambda L: _x(L).nanmedian(keepdim=True),
                                      r'^nanmedian\(\) missing 1 required positional arguments: '
                                      r'"dim"$'),
    "amax of a bool dim": (lambda L: _x(L).amax(True), r"^amax\(\): argument 'dim' "
                           r"\(position 1\) must be tuple of ints, not bool$"),
    "argmin of a bool dim": (lambda L: _x(L).argmin(True),
                             r"^argmin\(\): argument 'dim' \(position 1\) must be int, not bool$"),
    "logsumexp dim=None": (lambda L: _x(L).logsumexp(None), r"^logsumexp\(\): argument 'dim' "
                           r"\(position 1\) must be tuple of ints, not NoneType$"),
    "nansum of a bool dim": (lambda L: _x(L).nansum(True), r"^nansum\(\): argument 'dim' "
                             r"\(position 1\) must be tuple of ints, not bool$"),
    "cumsum of a bool dim": (lambda L: _x(L).cumsum(True),
                             r"^cumsum\(\): argument 'dim' \(position 1\) must be int, not bool$"),
    "mode of a bool dim": (lambda L: _x(L).mode(True),
                           r"^mode\(\): argument 'dim' \(position 1\) must be int, not bool$"),
    "aminmax of a bool dim": (lambda L: _x(L).aminmax(dim=True),
                              r"^aminmax\(\): argument 'dim' must be int, not bool$"),
    "softmax of a bool dim": (lambda L: _x(L).softmax(True), r"^softmax\(\): argument 'dim' "
                              r"\(position 1\) must be int, not bool$"),
    "unsqueeze of a bool dim": (lambda L: _x(L).unsqueeze(True), r"^unsqueeze\(\): argument "
                                r"'dim' \(position 1\) must be int, not bool$"),
    # a positional bool alone is the legacy ``unbiased``; a keyword ``dim=True`` is refused
    "std dim=True": (lambda L: _x(L).std(dim=True), _invalid("std", r"dim=bool, \)")),
    "var dim=True": (lambda L: L.var(_x(L), dim=True), _invalid("var", "")),
    "std_mean dim=True": (lambda L: L.std_mean(_x(L), dim=True),
                          _invalid("std_mean", r"Tensor, dim=bool\)")),
    "var_mean dim=True": (lambda L: L.var_mean(_x(L), dim=True),
                          _invalid("var_mean", r"Tensor, dim=bool\)")),
    "std of two bools": (lambda L: _x(L).std(True, True), _invalid("std", r"bool, bool\)")),
    "var of a bool and keepdim": (lambda L: _x(L).var(True, keepdim=True),
                                  _invalid("var", r"bool, keepdim=bool\)")),
    "var of a bool and correction": (lambda L: _x(L).var(dim=True, correction=1),
                                     _invalid("var", "")),
    "std of a bool tuple": (lambda L: _x(L).std((True,)), _invalid("std", r"tuple\)")),
    "std dim twice": (lambda L: _x(L).std(1, dim=1), _invalid("std", r"int, dim=int\)")),
    "norm of a bool dim": (lambda L: _x(L).norm(dim=True), r"^linalg_vector_norm\(\): argument "
                           r"'dim' \(position 3\) must be tuple of ints, but found element of "
                           r"type bool at pos 0$"),
    "norm of a bool tuple": (lambda L: L.norm(_x(L), 2, (True, 0)), r"^linalg_vector_norm\(\): "
                             r"argument 'dim' \(position 3\) must be tuple of ints, but found"),
    # ``F.softmax``'s implicit dim (a warning) is not ``torch.softmax``'s
    "softmax dim=None": (lambda L: _x(L).softmax(None), r"^softmax\(\): argument 'dim' "
                         r"(\(position 1\) )?must be int, not NoneType$"),
    "log_softmax dim=None": (lambda L: _x(L).log_softmax(dim=None), r"^log_softmax\(\): argument "
                             r"'dim' (\(position 1\) )?must be int, not NoneType$"),
    "softmax without dim": (lambda L: L.softmax(_x(L)),
                            r'^softmax\(\) missing 1 required positional arguments: "dim"$'),
    "unsqueeze_ of a bool dim": (lambda L: _x(L).unsqueeze_(False), r"^unsqueeze_\(\): argument "
                                 r"'dim' \(position 1\) must be int, not bool$"),
}


REFUSED.update({
    # torch.special's softmax family names itself, and counts input in dim's position
    "special.softmax without dim": (lambda L: L.special.softmax(_x(L)),
                                    r'^special_softmax\(\) missing 1 required positional '
                                    r'arguments: "dim"$'),
    "special.log_softmax without dim": (lambda L: L.special.log_softmax(_x(L)),
                                        r'^special_log_softmax\(\) missing 1 required '
                                        r'positional arguments: "dim"$'),
    "special.softmax of a bool dim": (lambda L: L.special.softmax(_x(L), True),
                                      r"^special_softmax\(\): argument 'dim' \(position 2\) "
                                      r"must be int, not bool$"),
    "special.log_softmax of None": (lambda L: L.special.log_softmax(_x(L), None),
                                    r"^special_log_softmax\(\): argument 'dim' \(position 2\) "
                                    r"must be int, not NoneType$"),
    "special.softmax of a list": (lambda L: L.special.softmax([1.0, 2.0], 0),
                                  r"^special_softmax\(\): argument 'input' \(position 1\) must "
                                  r"be Tensor, not list$"),
    "softmax of a float dim": (lambda L: _x(L).softmax(1.0),
                               r"^softmax\(\): argument 'dim' \(position 1\) must be int, not "
                               r"float$"),
    "log_softmax of a str dim": (lambda L: _x(L).log_softmax("1"),
                                 r"^log_softmax\(\): argument 'dim' \(position 1\) must be int, "
                                 r"not str$"),
})


# a float or a string dim is no int to PyTorch's parser (int() would truncate the float)
REFUSED.update({
    f"{name} of a {kind} dim": (lambda L, name=name, bad=bad: getattr(_x(L), name)(bad), match)
    for name, match in (
        ("sum", _invalid("sum", "")), ("mean", _invalid("mean", "")),
        ("prod", _invalid("prod", "")), ("std", _invalid("std", "")),
        ("all", _invalid("all", "")), ("max", _invalid("max", "")),
        ("amax", r"^amax\(\): argument 'dim' \(position 1\) must be tuple of ints, not "),
        ("logsumexp", r"^logsumexp\(\): argument 'dim' \(position 1\) must be tuple of ints, "),
        ("argmax", r"^argmax\(\): argument 'dim' \(position 1\) must be int, not "),
        ("cumsum", r"^cumsum\(\): argument 'dim' \(position 1\) must be int, not "),
        ("unbind", r"^unbind\(\): argument 'dim' \(position 1\) must be int, not "),
        ("unsqueeze", r"^unsqueeze\(\): argument 'dim' \(position 1\) must be int, not "))
    for kind, bad in (("float", 1.0), ("str", "1"))})


# ``keepdim`` is a bool and ``dtype`` a torch.dtype to PyTorch's parser (a str such as
# 'float' is no dtype; without a dim no signature takes it); torch.norm's dim is ints
REFUSED.update({
    f"{name} keepdim={bad!r}": (lambda L, name=name, bad=bad: getattr(_x(L), name)(
        1, keepdim=bad), rf"^{name}\(\): argument 'keepdim' must be bool, not {kind}$")
    for name in ("sum", "mean", "prod") for bad, kind in (("a", "str"), (1, "int"),
                                                          (None, "NoneType"))})
REFUSED.update({
    f"{name} dtype='float'": (lambda L, name=name: getattr(_x(L), name)(dtype="float"),
                              _invalid(name, "dtype=str, "))
    for name in ("sum", "mean", "prod")})
REFUSED.update({
    "sum dim and dtype='float'": (lambda L: _x(L).sum(1, dtype="float"),
                                  r"^sum\(\): argument 'dtype' must be torch.dtype, not str$"),
    "mean dim and dtype='float'": (lambda L: _x(L).mean(1, dtype="float"),
                                   r"^mean\(\): argument 'dtype' must be torch.dtype, not str$"),
    # torch.norm's Python code takes len() of a float dim for its Frobenius norm
    "norm of a float dim": (lambda L: L.norm(_x(L), dim=1.5),
                            r"^object of type 'float' has no len\(\)$"),
    "norm method of a float dim": (lambda L: _x(L).norm(dim=1.5),
                                   r"^object of type 'float' has no len\(\)$"),
    "norm p=1 of a float dim": (lambda L: L.norm(_x(L), p=1, dim=1.5),
                                r"^linalg_vector_norm\(\): argument 'dim' \(position 3\) must be "
                                r"tuple of ints, not float$"),
    "norm of a str dim": (lambda L: L.norm(_x(L), dim="a"),
                          r"^linalg_vector_norm\(\): argument 'dim' \(position 3\) must be "
                          r"tuple of ints, not str$"),
    "norm of a float in a tuple": (lambda L: L.norm(_x(L), dim=(1.5,)),
                                   r"^linalg_vector_norm\(\): argument 'dim' \(position 3\) must "
                                   r"be tuple of ints, but found element of type float at pos 0$"),
})


@pytest.mark.parametrize("case", list(REFUSED))
def test_arguments_no_signature_takes_raise_pytorchs_type_error(case):
    call, match = REFUSED[case]
    raises_as_torch(call, TypeError, match)


@pytest.mark.parametrize("call", [lambda L: L.norm(_x(L), p="a"),
                                  lambda L: _x(L).norm(p="a", dim=1),
                                  lambda L: L.norm(L.ones(3), p="a"),
                                  lambda L: L.norm(L.ones(2, 3, 4), p="a"),
                                  lambda L: L.nn.functional.normalize(_x(L), p="a")])
def test_norm_of_an_unknown_str_order_raises_the_matrix_norms_error(call):
    # the order is checked before the dims (normalize's is ``input.norm(p, dim)``)
    raises_as_torch(call, RuntimeError, r"^linalg\.matrix_norm: Order a not supported\.$")


@pytest.mark.parametrize("call, match", [
    (lambda L: L.norm(L.ones(2, 3, 4), p="nuc"), r"dim must be a 2-tuple\. Got 0 1 2$"),
    (lambda L: L.norm(_x(L), p="nuc", dim=1), r"dim must be a 2-tuple\. Got 1$"),
    (lambda L: L.nn.functional.normalize(_x(L), p="nuc"), r"dim must be a 2-tuple\. Got 1$"),
    (lambda L: L.norm(L.ones(2, 3, dtype=L.int64), p="nuc"),
     r"Expected a floating point or complex tensor as input\. Got Long$")])
def test_the_nuclear_norm_refuses_what_pytorchs_matrix_norm_refuses(call, match):
    raises_as_torch(call, RuntimeError, r"^linalg\.matrix_norm: " + match)


def test_the_nuclear_norm_is_the_matrix_norms():
    def scenario(L):
        x = L.tensor([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], requires_grad=True)
        y = L.tensor([[[1.0, 2.0], [0.5, -1.0]], [[3.0, 0.0], [1.0, 1.0]]])
        outs = [L.norm(x, p="nuc"), x.norm("nuc", keepdim=True), L.norm(y, "nuc", (0, 2)),
                L.norm(x, p="nuc", dtype=L.float64)]
        outs[0].backward()
        return [[py(o), o.grad_fn.name() if o.grad_fn else None, str(o.dtype)[-7:]] for o in outs] + \
            [py(x.grad)]
    same_as_torch(scenario)


def test_what_the_signatures_take_still_runs():
    same_as_torch(lambda L: [py(r) for r in (
        _x(L).sum(), _x(L).sum(dim=None), _x(L).sum(dim=None, keepdim=True),
        _x(L).sum(1, True), _x(L).mean(None), _x(L).prod(), _x(L).prod(1, keepdim=True),
        _x(L).max(), _x(L).min(0).values, _x(L).max(_x(L) * 2), _x(L).median(),
        _x(L).median(1).values, _x(L).nanmedian(), _x(L).amax(), _x(L).amax(None),
        _x(L).argmax(None), _x(L).all(None), _x(L).nansum(keepdim=True), _x(L).std(True),
        _x(L).unsqueeze(1), L.unsqueeze(_x(L), -1), _x(L).cumsum(0), _x(L).std(False),
        _x(L).var(1, False), _x(L).var(1, False, True), _x(L).std(dim=(0, 1), keepdim=True),
        _x(L).var(unbiased=False), *L.var_mean(_x(L), True), *L.std_mean(_x(L), 1, correction=0),
        _x(L).norm(dim=1), _x(L).norm(2, (0, 1)), _x(L).softmax(1), _x(L).log_softmax(-1))])


def test_functional_softmax_keeps_its_implicit_dim_with_a_warning():
    for name in ("softmax", "softmin", "log_softmax"):
        with pytest.warns(UserWarning, match=f"Implicit dimension choice for {name}") as w:
            got = same_as_torch(lambda L: py(getattr(L.nn.functional, name)(_x(L))))
        assert w[0].filename == __file__  # the user's line
        assert len(got) == 2 and len(got[0]) == 3


@pytest.mark.parametrize("call,kernel", [
    (lambda L: L.softmax(L.ones(2, 3, dtype=L.long), 1), "softmax_lastdim_kernel_impl"),
    (lambda L: L.softmax(L.ones(2, 3, dtype=L.long), 0), "softmax_kernel_impl"),
    (lambda L: L.ones(2, 3, dtype=L.long).log_softmax(-1), "log_softmax_lastdim_kernel_impl"),
    (lambda L: L.special.log_softmax(L.ones(2, 3, dtype=L.long), 0), "log_softmax_kernel_impl"),
    (lambda L: L.nn.functional.softmax(L.ones(2, 3, dtype=L.long), 1),
     "softmax_lastdim_kernel_impl"),
    (lambda L: L.softmax(L.ones(3), 0, L.int32), "softmax_lastdim_kernel_impl"),
], ids=["softmax", "softmax not last", "log_softmax", "special.log_softmax", "functional",
        "an int dtype"])
def test_softmax_of_integers_has_no_kernel(call, kernel):
    raises_as_torch(call, NotImplementedError, rf"^\"{kernel}\" not implemented for '(Long|Int)'$")


def test_softmax_of_integers_in_a_float_dtype_runs():
    same_as_torch(lambda L: [py(L.softmax(L.ones(2, 3, dtype=L.long), 1, L.float32)),
                             py(L.special.softmax(L.ones(3, dtype=L.long), 0, L.float64)),
                             py(L.special.log_softmax(L.ones(3), dim=0, dtype=L.float64))])


def test_cumprod_of_integers_and_bools_is_int64_as_cumsum():
    """PyTorch accumulates an integer or bool input's running product in int64, as its
    running sum; ``dtype=`` and the in-place form keep their dtype."""
    def run(L):
        got = {}
        for name in ("int32", "uint8", "bool", "int8", "int64", "float16"):
            x = L.tensor([1, 2, 1, 3]).to(getattr(L, name))
            got[name] = [str(f(x, 0).dtype).rpartition(".")[2] for f in (L.cumprod, L.cumsum)]
        x = L.tensor([1000, 1000, 1000, 10], dtype=L.int32)
        got["values"] = L.cumprod(x, 0).tolist()  # past int32's range
        got["dtype="] = str(L.cumprod(x, 0, dtype=L.float32).dtype).rpartition(".")[2]
        got["in place"] = str(x.cumprod_(0).dtype).rpartition(".")[2]
        vander = L.linalg.vander(L.tensor([1, 2], dtype=L.int32))
        got["vander"] = str(vander.dtype).rpartition(".")[2]
        return got
    got = same_as_torch(run)
    assert got["int32"] == got["bool"] == ["int64", "int64"]
    assert got["values"][-1] == 10 ** 10 and got["in place"] == "int32"


def test_any_and_all_of_uint8_are_uint8_as_pytorchs():
    """PyTorch's any and all give uint8 (0 or 1) for a uint8 input, bool for every other
    dtype, with or without a dim; a compiled call as eagerly."""
    def run(L):
        got = {}
        for name in ("uint8", "int32", "bool", "float32"):
            x = L.tensor([[1, 0, 2], [3, 4, 5]]).to(getattr(L, name))
            got[name] = [(str(r.dtype).rpartition(".")[2], r.tolist())
                         for r in (x.any(), x.all(), L.any(x, 1), L.all(x, 0, keepdim=True))]
        return got
    got = same_as_torch(run)
    assert {d for d, _ in got["uint8"]} == {"uint8"} and got["uint8"][0][1] == 1
    assert {d for d, _ in got["int32"]} == {"bool"}
    import hookgrad as hg
    compiled = hg.compile(lambda t: t.any(1))(hg.tensor([[1, 0], [0, 0]], dtype=hg.uint8))
    assert compiled.dtype == hg.uint8 and compiled.tolist() == [1, 0]
