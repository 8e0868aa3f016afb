"""Checks of the in-place forms ``Tensor.addmm_`` and ``Tensor.cumprod_`` (values,
gradients and node names are op-table rows in _op_table.py)."""
from tests.differential import raises_as_torch, same_as_torch


def test_addmm_in_place_needs_self_of_the_result_size():
    raises_as_torch(lambda L: L.zeros(3, 2).addmm_(L.ones(1, 2), L.ones(2, 2)), RuntimeError,
                    r"Bad in-place call: input tensor size \[3, 2\] and output tensor size "
                    r"\[1, 2\] should match")
    raises_as_torch(lambda L: L.zeros(2, 2).addmm_(L.ones(2, 3), L.ones(2, 2)), RuntimeError,
                    r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x2\)")


def test_cumprod_in_place_writes_into_self():
    def run(L):
        x = L.tensor([[1, 2, 3], [2, 2, 2]])
        y = x.cumprod_(1, dtype=L.int64)
        return [y is x, str(x.dtype).rpartition(".")[2], x.tolist()]
    same_as_torch(run)


def test_cumprod_in_place_refuses_another_dtype():
    raises_as_torch(lambda L: L.tensor([1, 2]).cumprod_(0, dtype=L.float32), RuntimeError,
                    "Bad in-place call: input tensor dtype long int and output tensor dtype "
                    "float should match")
