"""Ops declared in one place: an OpDef row, ``@export`` or ``@variants`` gives every public
form (function, method, in-place method, aliases) of an op, and nothing else does."""
import inspect

import pytest

import hookgrad as hg
from hookgrad._ops import dispatch, pointwise, registry
from hookgrad._torch_function import unwrapped


@pytest.fixture
def scratch():
    """Names declared by a test are removed afterwards (the registry is global)."""
    before = (dict(registry.FUNCTIONS), dict(registry.METHODS))
    yield
    for table, old in zip((registry.FUNCTIONS, registry.METHODS), before):
        table.clear()
        table.update(old)


@pytest.mark.parametrize("row", pointwise._UNARY + pointwise._BINARY, ids=lambda r: r.name)
def test_a_row_is_every_public_form_of_its_op(row):
    # once a mode has switched ``__torch_function__`` on, each public name holds its own
    # wrapper of the row's function (and autocast may wrap it): compare what they wrap.
    # The function takes ``out=``; the method, as PyTorch's, does not
    def form(owner, name):
        return inspect.unwrap(unwrapped(getattr(owner, name)))
    fn = form(hg, row.name)
    if row in pointwise._BINARY:
        # a binary row's function and method are functions of their own (over one body),
        # each alias's too: PyTorch's parser errors name the form and list its signatures
        for name in (row.name, *row.aliases):
            function, method = form(hg, name), form(hg.Tensor, name)
            assert function is not method and function.__name__ == method.__name__ == name
    else:
        assert form(hg.Tensor, row.name) is fn
        for alias in row.aliases:
            assert form(hg, alias) is fn and form(hg.Tensor, alias) is fn
    assert "out" in inspect.signature(getattr(hg, row.name)).parameters
    assert "out" not in inspect.signature(getattr(hg.Tensor, row.name)).parameters
    for name in (row.name, *row.aliases):
        assert hasattr(hg.Tensor, name + "_") == row.inplace
        assert (name + "_" in registry.FUNCTIONS) == (row.inplace and row.inplace_function)
    assert registry.OPS[row.name].node == row.node
    assert registry.OPS[row.name].save == row.save
    assert inspect.signature(fn).return_annotation == "Tensor"


def test_save_constants_are_identities_not_strings():
    # a row named "all" (torch.all) must not read as "save every input"
    assert dispatch.ALL != "all" and dispatch.OUT != "out"
    assert registry.OPS["all"].save is dispatch.ALL
    assert registry.OPS["exp"].save is dispatch.OUT


def test_variants_make_the_function_and_its_inplace_form(scratch):
    @registry.variants(inplace=True, aliases=("_scratch_alias",))
    def _scratch_add(input, other, *, alpha=1):
        if alpha != 1:
            return pointwise._ADD_ALPHA, (input, other), {"alpha": alpha}
        return pointwise._ADD, (input, other), None

    x = hg.tensor([1.0, 2.0])
    assert _scratch_add(x, 1.0, alpha=3).tolist() == [4.0, 5.0]
    assert registry.FUNCTIONS["_scratch_alias"] is _scratch_add
    inplace = registry.METHODS["_scratch_alias_"]
    assert list(inspect.signature(inplace).parameters) == ["self", "other", "alpha"]
    assert inspect.signature(_scratch_add).return_annotation == "Tensor"
    y = x * 1.0
    v = y._version
    assert inplace(y, hg.tensor([1.0, 1.0])) is y
    assert y.tolist() == [2.0, 3.0] and y._version == v + 1
    assert "_scratch_add_" not in registry.FUNCTIONS  # inplace_function not asked for


def test_a_name_declared_twice_is_an_error(scratch):
    registry.export(lambda input: input, name="_scratch_twice")
    with pytest.raises(RuntimeError, match="'_scratch_twice' is declared twice"):
        registry.export(lambda input: input, name="_scratch_twice")
