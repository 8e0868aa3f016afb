"""autograd.gradcheck / gradgradcheck: PyTorch's signature and results, float64 inside."""
import pytest

import hookgrad as hg
from hookgrad.autograd.gradcheck import GradcheckError
from tests.differential import same_as_torch


def _wrong(L):
    class SinWrong(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.cos() * 1.1
    return SinWrong.apply


def _first_order_only(L):
    class SinDetached(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.detach().cos()
    return SinDetached.apply


def test_results_match_torch():
    def f(L):
        dt = L.float64 if L.__name__ == "torch" else L.float32  # hookgrad checks in float64
        x = L.tensor([0.3, 1.0, -2.0], dtype=dt, requires_grad=True)
        w = L.tensor([[0.5, -1.0], [2.0, 0.1], [0.3, 0.3]], dtype=dt, requires_grad=True)
        gc, ggc = L.autograd.gradcheck, L.autograd.gradgradcheck
        return [gc(lambda x, w: (x @ w).tanh(), (x, w)),
                gc(lambda x: (x.exp() * x, x.sum()), (x,)),
                ggc(lambda x, w: (x @ w).sigmoid(), (x, w)),
                gc(_wrong(L), (x,), raise_exception=False),
                gc(_first_order_only(L), (x,)),
                ggc(_first_order_only(L), (x,), raise_exception=False)]
    assert same_as_torch(f) == [True, True, True, False, True, False]


def test_mismatch_raises_gradcheck_error_with_torch_wording():
    x = hg.tensor([0.3, 1.0], requires_grad=True)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to "
                                             "input 0,\nnumerical:"):
        hg.autograd.gradcheck(_wrong(hg), (x,))
    assert issubclass(GradcheckError, RuntimeError)


def test_inputs_without_grad_are_not_checked():
    x = hg.tensor([0.3, 1.0], requires_grad=True)
    c = hg.tensor([2.0, 3.0])
    assert hg.autograd.gradcheck(lambda x, c: x * c, (x, c))
    with pytest.raises(ValueError, match="gradcheck expects at least one input tensor to "
                                         "require gradient"):
        hg.autograd.gradcheck(lambda c: c * 2, (c,))


def test_single_tensor_input_and_explicit_grad_outputs():
    x = hg.tensor([0.3, 1.0], requires_grad=True)
    assert hg.autograd.gradcheck(lambda x: x.exp(), x)
    v = hg.tensor([1.0, -2.0], requires_grad=True)
    assert hg.autograd.gradgradcheck(lambda x: x.exp() * x, (x,), (v,))


def test_gradcheck_is_callable_through_the_module_too():
    import hookgrad.autograd.gradcheck as mod  # noqa: F401 - binds the submodule attribute
    x = hg.tensor([0.3], requires_grad=True)
    assert hg.autograd.gradcheck(lambda x: x * x, (x,))
