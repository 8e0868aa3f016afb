"""special_math.py's and fused_products.py's checks, and the in-place forms' (values,
gradients and node names are op-table rows in _op_table.py)."""
import pytest

from tests.differential import raises_as_torch, same_as_torch


@pytest.mark.parametrize("call, exc, match", [
    (lambda L, x: L.polygamma(-1, x), RuntimeError, r"polygamma\(n, x\) does not support "
                                                    "negative n"),
    (lambda L, x: x.mvlgamma_(0), RuntimeError, "p has to be greater than or equal to 1"),
    (lambda L, x: L.gcd(x, x), NotImplementedError, "\"gcd_cpu\" not implemented for 'Float'"),
    (lambda L, x: L.lcm(x.long(), x), NotImplementedError,
     "\"lcm_cpu\" not implemented for 'Float'"),
    (lambda L, x: x.float_power_(2), RuntimeError, "the base given to float_power_ has dtype "
                                                   "Float but the operation's result requires "
                                                   "dtype Double"),
    (lambda L, x: x[:, :2].addmm_(L.ones(1, 2), L.ones(2, 2)), RuntimeError,
     r"Bad in-place call: input tensor size \[3, 2\] and output tensor size \[1, 2\] should "
     "match"),
    (lambda L, x: L.addmv(x[0, :2], x, L.ones(5)), RuntimeError,
     r"size mismatch, got input \(2\), mat \(3x4\), vec \(5\)"),
    (lambda L, x: L.addr(x, x[:, :1], x[0]), RuntimeError,
     "addr: Expected 1-D argument vec1, but got 2-D"),
    (lambda L, x: L.addbmm(x, L.ones(2, 3, 5), L.ones(3, 5, 4)), RuntimeError,
     "batch1 and batch2 must have same number of batches, got 2 and 3"),
    (lambda L, x: L.addbmm(x, L.ones(2, 3, 5), L.ones(2, 3, 4)), RuntimeError,
     r"Incompatible matrix sizes for bmm \(3x5 and 3x4\)"),
])
def test_errors_match_torch(call, exc, match):
    raises_as_torch(lambda L: call(L, L.zeros(3, 4)), exc, match)


@pytest.mark.parametrize("call", [
    lambda L: L.polygamma(1, L.tensor([1, 2])),
    lambda L: L.angle(L.tensor([-1, 0, 2])),
    lambda L: L.mvlgamma(L.tensor([3, 4]), 2),
    lambda L: L.float_power(L.tensor([2, 3]), 2),
    lambda L: L.float_power(2, L.tensor([0.5])),
    lambda L: L.gcd(L.tensor([4, 6], dtype=L.int32), L.tensor([6, 9], dtype=L.int32)),
])
def test_integer_inputs_promote_as_in_torch(call):
    same_as_torch(lambda L: [call(L).tolist(), str(call(L).dtype).rpartition(".")[2]])
