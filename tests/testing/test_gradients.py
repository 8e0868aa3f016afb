"""hookgrad.testing.check_grads: gradients of the tape against float64 finite differences."""
import jax
import numpy as np
import pytest

import hookgrad as hg
from hookgrad.testing import check_grads
from tests.autograd.test_gradcheck import _first_order_only, _wrong


# the same faulty Functions as the gradcheck tests: a 10%-off backward, and one whose
# values are right but not differentiable in x
_sin_wrong_grad = _wrong(hg)
_sin_first_order_only = _first_order_only(hg)


def test_passes_for_correct_gradients_of_several_arguments_and_outputs():
    x, w = hg.randn(3, 4), hg.randn(4, 2)
    check_grads(lambda x, w: ((x @ w).tanh(), x.softmax(1)), (x, w), order=2)


def test_only_arguments_requiring_grad_are_checked_when_some_do():
    x = hg.randn(3, requires_grad=True)
    c = hg.randn(3)
    check_grads(lambda x, c: (x * c.exp()).sum(), (x, c))


def test_accepts_arrays_and_non_tensor_arguments():
    check_grads(lambda x, k: (x ** k).sum(), (np.array([0.5, 1.5], np.float32), 3))


def test_runs_in_float64_and_restores_the_mode():
    seen = []

    def f(x):
        seen.append(x.dtype)
        return x.exp()
    before = jax.config.read("jax_enable_x64")
    check_grads(f, (hg.ones(2),))
    assert set(seen) == {hg.float64}
    assert jax.config.read("jax_enable_x64") == before


def test_wrong_first_derivative_is_reported():
    with pytest.raises(AssertionError, match="order-1 gradient w.r.t. argument 0 does not match "
                                             "finite differences"):
        check_grads(_sin_wrong_grad, (hg.tensor([0.3, 1.0, -2.0]),))


def test_wrong_second_derivative_is_reported_only_at_order_2():
    x = hg.tensor([0.3, 1.0, -2.0])
    check_grads(_sin_first_order_only, (x,), order=1)
    with pytest.raises(AssertionError, match="order-2 gradient"):
        check_grads(_sin_first_order_only, (x,), order=2)


def test_bad_arguments():
    with pytest.raises(NotImplementedError, match="forward mode"):
        check_grads(lambda x: x, (hg.ones(2),), modes=("fwd",))
    with pytest.raises(ValueError, match="no floating-point Tensor argument"):
        check_grads(lambda n: hg.ones(2) * n, (3,))
    with pytest.raises(ValueError, match="order must be >= 1"):
        check_grads(lambda x: x, (hg.ones(2),), order=0)
