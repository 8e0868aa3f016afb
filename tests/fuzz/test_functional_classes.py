"""Regression tests for the classes the fuzzer found in functional mode
(``hookgrad.func.functional_call`` under ``jax.grad``), each checked against PyTorch's eager
run of the same program where PyTorch is installed."""
import math

import pytest

import hookgrad
from tests.differential import close, torch


def _grad(module):
    """The gradients of ``module()`` wrt its parameters, by ``jax.grad`` of functional_call."""
    g = hookgrad.func.grad(lambda p: hookgrad.func.functional_call(module, p, ()))(
        dict(module.named_parameters()))
    return {k: hookgrad.as_tensor(v).tolist() for k, v in g.items()}


class _Prog(hookgrad.nn.Module):
    """``loss(a)`` as a module of one parameter ``a``."""

    def __init__(self, loss, a):
        super().__init__()
        self.loss, self.a = loss, hookgrad.nn.Parameter(hookgrad.tensor(a))

    def forward(self):
        return self.loss(self.a)


@pytest.mark.parametrize("write", ["y[...] = 0.25", "y.fill_(0.25)", "y.copy_(y.detach() * 2)"])
def test_functional_hooks_before_an_overwrite_see_zeros(write):
    # PyTorch's in-place node passes the overwritten history zeros, so a hook registered
    # before the write runs with zeros; JAX's AD would give it a symbolic zero and skip it
    def loss(a, log):
        y = a.flip(0, 1)
        y.register_hook(lambda g: log.append(g.tolist()))
        exec(write, {}, {"y": y})
        return (y * a).sum()

    log = []
    g = _grad(_Prog(lambda a: loss(a, log), [[1.0, 2.0], [3.0, 4.0]]))
    assert log == [[[0.0, 0.0], [0.0, 0.0]]]
    if torch is not None:
        want, a = [], torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        loss(a, want).backward()
        assert log == want and g["a"] == a.grad.tolist()



def test_functional_node_inputs_leave_out_index_arguments():
    # ScatterAddBackward0's inputs are self and src: the index has no edge, and the node's
    # post-hooks see two grad_inputs, as eagerly (seed 784)
    def loss(L, a, log):
        y = L.zeros([3, 3]).scatter_add(1, L.tensor([[0, 0, 0], [2, 1, 1], [1, 2, 0]]), a)
        y.grad_fn.register_hook(lambda gi, go: log.append(
            [None if g is None else g.tolist() for g in gi]))
        log.append(len(y.grad_fn.next_functions))
        return (y * 2).sum()
    a = [[1.0, 2.0, 1.0], [2.0, 1.0, 1.0], [1.0, 1.0, 2.0]]
    log = []
    g = _grad(_Prog(lambda t: loss(hookgrad, t, log), a))
    assert log[0] == 2 and log[1][0] is None and len(log[1]) == 2
    if torch is not None:
        want, t = [], torch.tensor(a, requires_grad=True)
        loss(torch, t, want).backward()
        assert log == want and g["a"] == t.grad.tolist()


def test_functional_packs_a_result_pytorch_saves():
    # CdistBackward0 saves x1, x2 and the result; the functional mode packed only the inputs
    # (hookgrad packs the result first, then the inputs its vjp recomputes from: a
    # docs/differences.md row; PyTorch's packs are the same tensors)
    def loss(L, x1, x2, packs):
        with L.autograd.graph.saved_tensors_hooks(
                lambda t: packs.append(list(t.shape)) or t, lambda t: t):
            y = L.cdist(x1, x2)
        return y.tanh().sum()
    a = [[-2.0, -1.99, -1.98, -1.97], [-1.96, -1.95, -1.94, -1.93], [-1.92, -1.91, -1.9, -1.89]]
    b = [[-1.0, -1.5, -1.98, -1.0], [-1.96, -1.95, -0.5, -1.93]]
    packs, m = [], _Prog(lambda t: loss(hookgrad, t, m.b, packs), a)
    m.b = hookgrad.nn.Parameter(hookgrad.tensor(b))
    g = _grad(m)
    eager = []
    x1, x2 = hookgrad.tensor(a, requires_grad=True), hookgrad.tensor(b, requires_grad=True)
    loss(hookgrad, x1, x2, eager).backward()
    assert packs == eager == [[3, 2], [3, 4], [2, 4]]
    assert close(g["a"], x1.grad.tolist()) and close(g["b"], x2.grad.tolist())
    if torch is not None:
        want, t1, t2 = [], torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        loss(torch, t1, t2, want).backward()
        assert sorted(packs) == sorted(want)
        assert close(g["a"], t1.grad.tolist()) and close(g["b"], t2.grad.tolist())


def test_functional_saved_hooks_with_a_number_operand():
    # the vjp runs jitted, as eagerly: the number reaches mul's forward as an array (a
    # Python float has no dtype; the transformer of test_three_modes met it)
    def loss(L, a, packs):
        with L.autograd.graph.saved_tensors_hooks(
                lambda t: packs.append(list(t.shape)) or t, lambda t: t):
            y = (a * 2.0).tanh()
        return y.sum()
    packs = []
    g = _grad(_Prog(lambda t: loss(hookgrad, t, packs), [1.0, -0.5]))
    assert close(g["a"], [2 * (1 - math.tanh(2 * v) ** 2) for v in (1.0, -0.5)])
    if torch is not None:
        want, a = [], torch.tensor([1.0, -0.5], requires_grad=True)
        loss(torch, a, want).backward()
        assert packs == want and close(g["a"], a.grad.tolist())
