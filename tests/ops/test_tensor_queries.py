"""tensor_queries.py's predicates, matrix_forms.py's and sum_to_size.py's checks, against
PyTorch."""
import pytest
from tests.differential import raises_as_torch, same_as_torch


@pytest.mark.parametrize("dtype", ["float32", "int8", "uint8", "bool", "int64"])
def test_is_signed_follows_the_dtype(dtype):
    same_as_torch(lambda L: [L.is_signed(L.ones(1, dtype=getattr(L, dtype))),
                             L.ones(1, dtype=getattr(L, dtype)).is_signed()])


@pytest.mark.parametrize("values", [[2.0], [0.0], [[-1]], [False]])
def test_is_nonzero_reads_the_single_element(values):
    same_as_torch(lambda L: [L.is_nonzero(L.tensor(values)), L.tensor(values).is_nonzero()])


@pytest.mark.parametrize("values, match", [([], "with no values is ambiguous"),
                                           ([1, 2], "with more than one value is ambiguous")])
def test_is_nonzero_needs_one_element(values, match):
    raises_as_torch(lambda L: L.is_nonzero(L.tensor(values)), RuntimeError, match)


def test_is_same_size_compares_shapes():
    same_as_torch(lambda L: [L.is_same_size(L.ones(2, 3), L.zeros(2, 3)),
                             L.ones(2, 3).is_same_size(L.ones(3, 2)),
                             L.ones(1).is_same_size(L.ones(()))])


def test_no_tensor_carries_a_conjugate_or_negative_bit():
    same_as_torch(lambda L: [L.is_conj(L.ones(2)), L.ones(2).is_neg(),
                             L.ones(2, 3).t().is_conj()])


def test_adjoint_is_a_view_and_needs_a_matrix():
    same_as_torch(lambda L: L.ones(2, 3).adjoint()._base is not None)
    raises_as_torch(lambda L: L.adjoint(L.ones(3)), RuntimeError,
                    r"tensor.adjoint\(\) is only supported on matrices or batches of "
                    "matrices. Got 1-D")


def test_sum_to_size_returns_self_for_its_own_size_and_checks_expansion():
    same_as_torch(lambda L: (lambda x: x.sum_to_size(2, 3) is x)(L.ones(2, 3)))
    raises_as_torch(lambda L: L.ones(2, 3, 4).sum_to_size(5), RuntimeError,
                    r"size \{\[5\]\} is not expandable to size \{\[2, 3, 4\]\}\.")
