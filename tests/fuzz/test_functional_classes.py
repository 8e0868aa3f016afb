"""Regression tests for the classes the fuzzer found in functional mode
(``hookgrad.func.functional_call`` under ``jax.grad``), each checked against PyTorch's eager
run of the same program where PyTorch is installed."""
import math

import jax
import numpy as np

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
    # CdistBackward0 saves x1, x2 and the result, in that order (as PyTorch 2.13's); the
    # functional mode packed only the inputs
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
    assert packs == eager == [[3, 4], [2, 4], [3, 2]]
    assert close(g["a"], x1.grad.tolist()) and close(g["b"], x2.grad.tolist())
    if torch is not None:
        want, t1, t2 = [], torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        loss(torch, t1, t2, want).backward()
        assert packs == want
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


def _result_written(L, a):
    # seed 1408: log_softmax saves its result; the write changes what backward computes with
    y = a.log_softmax(-1)
    y.mul_(2)
    return (y * y).sum()


def _inplace_result_written(L, a):
    # seed 2185: sigmoid_ saves its result, written again in place
    y = a * 1.5
    y.sigmoid_()
    y.add_(1)
    return y.tanh().sum()


def _input_written(L, a):
    # sin saves its input, written after: its backward computes with the written value
    y = a * 1.5
    z = y.sin()
    y.add_(1)
    return (z * a).sum()


def _inplace_input_written(L, a):
    # mul_ saves self from before its own write (a copy): a later write does not reach it
    y = a * 1.5
    y.mul_(a)
    y.add_(1)
    return (y * y).sum()


def _view_overwritten(L, a):
    # seed 1393: a view's saved result overwritten through the view
    y = a.pow(2)
    v = y.narrow(-1, 1, 1)
    v.sigmoid_()
    v[...] = 0.25
    return y.tanh().sum()


def _written_off_the_loss(L, a):
    # seeds 1295, 1356: the written result does not reach the loss: its op's backward
    # never runs (no unpack), as the write's value reaches the backward as a constant
    y = a.log_softmax(-1)
    y[..., 0] = 0.5
    return (a * 2).sum()


_WRITES_AFTER_SAVE = {f.__name__[1:]: f for f in (
    _result_written, _inplace_result_written, _input_written, _inplace_input_written,
    _view_overwritten, _written_off_the_loss)}


def _saving(L, prog, a, log, copy):
    """``prog`` under saved-tensor hooks whose pack keeps the tensor (or, with ``copy``, a
    clone), logging what each unpack sees."""
    def unpack(t):
        if log is not None:  # None: under jax.jit, where values cannot be read
            log.append(t.tolist())
        return t
    with L.autograd.graph.saved_tensors_hooks(
            (lambda t: t.clone()) if copy else (lambda t: t), unpack):
        return prog(L, a)


@pytest.mark.parametrize("copy", [False, True], ids=["kept", "cloned"])
@pytest.mark.parametrize("name", list(_WRITES_AFTER_SAVE))
def test_functional_packed_tensor_sees_later_inplace_writes(name, copy):
    # A pack hook returning its tensor keeps the tensor's storage: an in-place write after
    # the op reaches the unpacked value and the gradient (no version error: the hooks
    # replace the check); a clone keeps the value from before. JAX keeps residuals as
    # values; the write reaches the backward through the identity that opens it.
    prog, a = _WRITES_AFTER_SAVE[name], [[-0.29, 0.61], [-1.44, -0.26]]
    log = []
    g = _grad(_Prog(lambda t: _saving(hookgrad, prog, t, log, copy), a))
    eager, x = [], hookgrad.tensor(a, requires_grad=True)
    _saving(hookgrad, prog, x, eager, copy).backward()
    assert close(log, eager) and close(g["a"], x.grad.tolist())
    if torch is not None:
        want, t = [], torch.tensor(a, requires_grad=True)
        _saving(torch, prog, t, want, copy).backward()
        assert close(log, want) and close(g["a"], t.grad.tolist())


def test_functional_packed_tensor_sees_later_writes_under_jit():
    prog, a = _WRITES_AFTER_SAVE["result_written"], [[-0.29, 0.61], [-1.44, -0.26]]
    m = _Prog(lambda t: _saving(hookgrad, prog, t, None, False), a)
    g = jax.jit(jax.grad(lambda p: hookgrad.func.functional_call(m, p, ())))(
        {"a": m.a.detach()._data})
    x = hookgrad.tensor(a, requires_grad=True)
    _saving(hookgrad, prog, x, [], False).backward()
    assert close(np.asarray(g["a"]).tolist(), x.grad.tolist())
    x = hookgrad.tensor(a, requires_grad=True)  # the write changes the gradient
    _saving(hookgrad, prog, x, [], True).backward()
    assert not close(np.asarray(g["a"]).tolist(), x.grad.tolist())


def test_functional_packs_a_later_output_pytorch_saves():
    # AdaptiveMaxPool2DBackward0 saves self and its indices (result1), packed in that
    # order; the functional mode packed only self (seed 1699)
    def loss(L, x, packs):
        with L.autograd.graph.saved_tensors_hooks(
                lambda t: packs.append((list(t.shape), str(t.dtype).split(".")[-1])) or t,
                lambda t: t):
            y = L.nn.functional.adaptive_max_pool2d(x, (3, None), return_indices=True)[0]
        return y.tanh().sum()
    a = [[[0.43, 1.51, 1.79, -0.27], [0.12, -0.05, 1.54, 0.72], [-1.17, 0.81, 1.43, 1.57],
          [1.82, 0.67, -1.99, 1.56], [-1.7, -0.14, 1.37, 1.63]]]
    packs = []
    g = _grad(_Prog(lambda t: loss(hookgrad, t, packs), a))
    assert packs == [([1, 5, 4], "float32"), ([1, 3, 4], "int64")]
    if torch is not None:
        want, t = [], torch.tensor(a, requires_grad=True)
        loss(torch, t, want).backward()
        assert packs == want and close(g["a"], t.grad.tolist())


def _complex_hooks(L, a, log):
    z = L.complex(a, a * 0.5)
    z.register_hook(lambda g: log.append(("tensor", g.tolist())))
    y = L.view_as_real(z * (1 + 2j))
    y.grad_fn.register_hook(lambda gi, go: log.append(("node", gi[0].tolist())))
    return (y * y * L.tensor([1.0, 3.0])).sum()


def test_functional_hooks_see_pytorchs_complex_gradients():
    # PyTorch's gradient of a complex tensor is the conjugate of JAX's cotangent: tensor and
    # Node hooks saw JAX's (seed 1910)
    a = [[0.01, -0.77], [1.66, -0.51]]
    log = []
    g = _grad(_Prog(lambda t: _complex_hooks(hookgrad, t, log), a))
    eager, x = [], hookgrad.tensor(a, requires_grad=True)
    _complex_hooks(hookgrad, x, eager).backward()
    assert log == eager and close(g["a"], x.grad.tolist())
    if torch is not None:
        want, t = [], torch.tensor(a, requires_grad=True)
        _complex_hooks(torch, t, want).backward()
        assert close(log, want) and close(g["a"], t.grad.tolist())


def test_functional_saved_hooks_give_pytorchs_complex_gradients():
    # under saved-tensor hooks an op's backward is its vjp on the unpacked values: an op
    # saving its result (exp, sigmoid) and one saving its inputs (mul) of complex values
    def loss(L, a):
        with L.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            z = L.complex(a, a * 0.5)
            y = L.view_as_real((z * z * (1 + 2j)).exp().sigmoid())
        return (y * L.tensor([1.0, 3.0])).sum()
    a = [[0.3, -0.7], [1.1, -0.5]]
    g = _grad(_Prog(lambda t: loss(hookgrad, t), a))
    x = hookgrad.tensor(a, requires_grad=True)
    loss(hookgrad, x).backward()
    assert close(g["a"], x.grad.tolist())
    if torch is not None:
        t = torch.tensor(a, requires_grad=True)
        loss(torch, t).backward()
        assert close(g["a"], t.grad.tolist())


def test_quantile_of_a_number_q_under_jax_jit_of_the_gradient():
    # seed 429 (functional_jit): the q range check ran in jnp, traced under jax.jit, and
    # bool() of it raised JAX's TracerBoolConversionError
    x = [[0.5, -1.25, 2.0, 0.75], [1.5, 0.25, -0.5, 3.0]]
    m = _Prog(lambda a: hookgrad.quantile(a, 0.3, dim=1).sum(), x)
    g = jax.jit(hookgrad.func.grad(lambda p: hookgrad.func.functional_call(m, p, ())))(
        dict(m.named_parameters()))
    assert hookgrad.as_tensor(g["a"]).tolist() == _grad(m)["a"]
    if torch is not None:
        t = torch.tensor(x, requires_grad=True)
        torch.quantile(t, 0.3, dim=1).sum().backward()
        assert close(hookgrad.as_tensor(g["a"]).tolist(), t.grad.tolist())
    for lib in (hookgrad, torch) if torch is not None else (hookgrad,):  # PyTorch's words
        for f in (lib.quantile, lib.nanquantile):
            with pytest.raises(RuntimeError, match=r"^quantile\(\) q must be in the range "
                               r"\[0, 1\] but got 1\.5$"):
                f(lib.tensor(x), 1.5)
        with pytest.raises(RuntimeError, match=r"^quantile\(\) q values must be in the range"):
            lib.quantile(lib.tensor(x), lib.tensor([0.5, -0.25]))


def test_functional_multi_grad_hook_over_two_tensors_runs_before_their_earlier_hooks():
    # docs/modes.md's hooks table: a multi-grad hook over several tensors is one identity
    # over them, placed after the identities of hooks already registered on them, so JAX's
    # backward runs it first; eagerly (as PyTorch) the tensor's hooks run in registration
    # order. The gradients are the same in both.
    def loss(a, log):
        y = a * 2
        y.register_hook(lambda g: log.append("tensor"))
        hookgrad.autograd.graph.register_multi_grad_hook(
            [a, y], lambda gs: log.append("multi"), mode="any")
        return (y * y).sum()

    eager_log, func_log = [], []
    a = hookgrad.tensor([0.5, -1.5], requires_grad=True)
    loss(a, eager_log).backward()
    g = _grad(_Prog(lambda p: loss(p, func_log), [0.5, -1.5]))
    assert eager_log == ["tensor", "multi"]
    assert func_log == ["multi", "tensor"]
    assert close(g["a"], a.grad.tolist())
