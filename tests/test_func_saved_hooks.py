"""``torch.func``'s reverse-mode transforms refuse saved-tensor hooks, as PyTorch's do: hooks
registered around the call, or inside the function, raise PyTorch's RuntimeError; without
hooks they differentiate. (``jax.grad`` over ``functional_call`` runs the hooks:
tests/test_func.py.)"""
import pytest

from tests.differential import py, raises_as_torch, same_as_torch

_MESSAGE = (r"^torch\.func\.\{grad, vjp, jacrev, hessian\} don't yet support saved tensor "
            r"hooks\. Please open an issue with your use case\.$")
_CALLS = [
    lambda L, x: L.func.grad(lambda x: x.sin().sum())(x),
    lambda L, x: L.func.grad_and_value(lambda x: x.sin().sum())(x)[0],
    lambda L, x: L.func.vjp(lambda x: x.sin(), x)[0],
    lambda L, x: L.func.jacrev(lambda x: x.sin())(x),
]


@pytest.mark.parametrize("call", _CALLS)
def test_hooks_around_the_transform_raise(call):
    def run(L):
        with L.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            return call(L, L.tensor([1.0, 2.0]))
    raises_as_torch(run, RuntimeError, _MESSAGE)


def test_hooks_inside_the_function_raise():
    # (raised while JAX traces: pytest's match reads the note JAX adds after the message)
    def run(L):
        def f(x):
            with L.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                return x.sin().sum()
        return L.func.grad(f)(L.tensor([1.0, 2.0]))
    raises_as_torch(run, RuntimeError, _MESSAGE[:-1] + r"(\n|$)")


def test_without_hooks_they_differentiate_and_hooks_work_after():
    def run(L):
        x = L.tensor([1.0, 2.0])
        out = [py(c(L, x)) for c in _CALLS]
        y = L.tensor([0.5], requires_grad=True)
        seen = []
        with L.autograd.graph.saved_tensors_hooks(lambda t: seen.append("pack") or t,
                                                  lambda t: t):
            z = (y * y).sum()
        z.backward()
        return out + [seen, py(y.grad)]
    same_as_torch(run)
