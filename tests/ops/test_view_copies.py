"""The ``*_copy`` functions: PyTorch's view-op results as fresh tensors (values, gradients
and node names are op-table rows in _op_table.py)."""
import pytest

import hookgrad as hg
from tests.differential import raises_as_torch

COPIES = [
    lambda L, x: L.view_copy(x, (4, 3)),
    lambda L, x: L.permute_copy(x, (1, 0)),
    lambda L, x: L.transpose_copy(x, 0, 1),
    lambda L, x: L.t_copy(x),
    lambda L, x: L.squeeze_copy(x[:, None], 1),
    lambda L, x: L.unsqueeze_copy(x, 0),
    lambda L, x: L.diagonal_copy(x),
    lambda L, x: L.select_copy(x, 0, 1),
    lambda L, x: L.slice_copy(x, 1, 0, 2),
    lambda L, x: L.narrow_copy(x, 1, 0, 2),
    lambda L, x: L.alias_copy(x),
]


@pytest.mark.parametrize("copy", COPIES)
def test_a_copy_shares_no_storage_with_its_input(copy):
    x = hg.zeros(3, 4)
    y = copy(hg, x)
    y.add_(1)
    assert x.sum().item() == 0
    assert not y._is_view()


@pytest.mark.parametrize("call, exc, match", [
    (lambda L, x: L.permute_copy(x, (0, 0)), RuntimeError, "duplicate dims are not allowed"),
    (lambda L, x: L.t_copy(x[None]), RuntimeError, "t\\(\\) expects a tensor with <= 2 "
                                                   "dimensions, but self is 3D"),
    (lambda L, x: L.narrow_copy(x, 1, 3, 3), RuntimeError,
     r"start \(3\) \+ length \(3\) exceeds dimension size \(4\)"),
    (lambda L, x: L.slice_copy(x, 1, 0, 2, 0), RuntimeError, "slice step must be positive"),
    (lambda L, x: L.view_copy(x, (5,)), RuntimeError,
     r"shape '\[5\]' is invalid for input of size 12"),
])
def test_errors_match_torch(call, exc, match):
    raises_as_torch(lambda L: call(L, L.zeros(3, 4)), exc, match)


def test_out_receives_the_copy():
    x = hg.arange(12.).reshape(3, 4)
    out = hg.empty(4, 3)
    assert hg.permute_copy(x, (1, 0), out=out) is out
    assert out.tolist() == x.t().tolist()
