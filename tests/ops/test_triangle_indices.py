"""``tril_indices`` / ``triu_indices`` against PyTorch."""
import pytest
from tests.differential import raises_as_torch, same_as_torch


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("row, col, offset", [(3, 3, 0), (3, 4, 1), (4, 3, -1), (2, 5, -3),
                                              (0, 3, 0), (3, 2, 9)])
def test_indices_match_torch(name, row, col, offset):
    same_as_torch(lambda L: getattr(L, name)(row, col, offset).tolist())


def test_dtype_is_long_unless_given():
    same_as_torch(lambda L: [str(L.tril_indices(2, 2).dtype).rpartition(".")[2],
                             str(L.triu_indices(2, 2, dtype=L.int32).dtype).rpartition(".")[2]])


@pytest.mark.parametrize("call, exc, match", [
    (lambda L: L.tril_indices(-1, 3), RuntimeError, "row must be non-negative, got-1"),
    (lambda L: L.triu_indices(3, -2), RuntimeError, "col must be non-negative, got-2"),
    (lambda L: L.tril_indices(3, 3, dtype=L.float32), NotImplementedError,
     "\"tril_indices\" not implemented for 'Float'"),
])
def test_errors_match_torch(call, exc, match):
    raises_as_torch(call, exc, match)
