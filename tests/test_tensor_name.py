"""``Tensor.name`` is None on every Tensor, as PyTorch's, and cannot be set."""
import pytest

from tests.differential import same_as_torch


def test_name_as_torch():
    def run(L):
        x = L.ones(2, requires_grad=True)
        p = L.nn.Parameter(L.zeros(3))
        return [x.name, (x * 2).name, p.name, x.detach().name, x[0].name]
    assert same_as_torch(run) == [None] * 5


def test_name_is_read_only_as_torch():
    import hookgrad
    torch = pytest.importorskip("torch")
    for L in (hookgrad, torch):
        with pytest.raises(AttributeError):
            L.ones(1).name = "x"
