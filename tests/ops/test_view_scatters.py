"""view_scatters.py's checks against PyTorch (values, gradients and node names are op-table
rows in _op_table.py)."""
import pytest

from tests.differential import raises_as_torch, same_as_torch


@pytest.mark.parametrize("call, exc, match", [
    (lambda L, x: L.select_scatter(x, L.ones(3), 0, 0), RuntimeError,
     r"expected src to have a size equal to the slice of self. src size = \[3\], slice size "
     r"= \[4\]"),
    (lambda L, x: L.slice_scatter(x, L.ones(3, 3), 1, 0, 2), RuntimeError,
     r"src size = \[3, 3\], slice size = \[3, 2\]"),
    (lambda L, x: x.diagonal_scatter(L.ones(2)), RuntimeError,
     r"src size = \[2\], slice size = \[3\]"),
    (lambda L, x: L.slice_scatter(x, x, step=0), RuntimeError, "slice step must be positive"),
])
def test_errors_match_torch(call, exc, match):
    raises_as_torch(lambda L: call(L, L.zeros(3, 4)), exc, match)


def test_the_input_is_left_alone_and_src_is_cast_to_its_dtype():
    def run(L):
        x = L.zeros(2, 3)
        y = L.select_scatter(x, L.tensor([1, 2, 3]), 0, 1)
        return [x.tolist(), y.tolist(), str(y.dtype).rpartition(".")[2]]
    same_as_torch(run)
