"""Graph shapes as PyTorch builds them where hooks are attached (linear, conv, matmul,
layer_norm, losses): node names and next_functions recursively, and the order in which
hooks on weights, biases and their nodes fire, compared with PyTorch."""
import types

import pytest

import hookgrad as hg
from tests.differential import needs_torch, py, same_as_torch, torch


def desc(fn):
    """``Name(next@input_nr, ...)`` recursively."""
    if fn is None:
        return "None"
    return f"{type(fn).__name__}(" + ", ".join(
        f"{desc(n)}@{i}" if n is not None else "None" for n, i in fn.next_functions) + ")"


def _rg(L, *shape):
    return L.ones(*shape).requires_grad_()


CASES = {
    "linear_2d": lambda L, F: F.linear(_rg(L, 2, 4), _rg(L, 3, 4), _rg(L, 3)),
    "linear_2d_const_input": lambda L, F: F.linear(L.ones(2, 4), _rg(L, 3, 4), _rg(L, 3)),
    "linear_2d_no_bias": lambda L, F: F.linear(_rg(L, 2, 4), _rg(L, 3, 4)),
    "linear_3d": lambda L, F: F.linear(_rg(L, 5, 2, 4), _rg(L, 3, 4), _rg(L, 3)),
    "linear_3d_no_bias": lambda L, F: F.linear(_rg(L, 5, 2, 4), _rg(L, 3, 4)),
    "linear_1d": lambda L, F: F.linear(_rg(L, 4), _rg(L, 3, 4), _rg(L, 3)),
    "linear_1d_no_bias": lambda L, F: F.linear(_rg(L, 4), _rg(L, 3, 4)),
    "conv2d": lambda L, F: F.conv2d(_rg(L, 1, 2, 5, 5), _rg(L, 3, 2, 3, 3), _rg(L, 3)),
    "conv2d_no_bias": lambda L, F: F.conv2d(_rg(L, 1, 2, 5, 5), _rg(L, 3, 2, 3, 3)),
    "conv1d_const_weight": lambda L, F: F.conv1d(_rg(L, 1, 2, 5), L.ones(3, 2, 3)),
    "conv_transpose2d": lambda L, F: F.conv_transpose2d(_rg(L, 1, 2, 4, 4),
                                                         _rg(L, 2, 3, 3, 3)),
    "matmul_1_1": lambda L, F: L.matmul(_rg(L, 3), _rg(L, 3)),
    "matmul_2_1": lambda L, F: L.matmul(_rg(L, 2, 3), _rg(L, 3)),
    "matmul_1_2": lambda L, F: L.matmul(_rg(L, 3), _rg(L, 3, 4)),
    "matmul_2_2": lambda L, F: L.matmul(_rg(L, 2, 3), _rg(L, 3, 4)),
    "matmul_3_2": lambda L, F: L.matmul(_rg(L, 5, 2, 3), _rg(L, 3, 4)),
    "matmul_3_1": lambda L, F: L.matmul(_rg(L, 5, 2, 3), _rg(L, 3)),
    "matmul_2_3": lambda L, F: L.matmul(_rg(L, 2, 3), _rg(L, 5, 3, 4)),
    "matmul_1_3": lambda L, F: L.matmul(_rg(L, 3), _rg(L, 5, 3, 4)),
    "matmul_3_3": lambda L, F: L.matmul(_rg(L, 5, 2, 3), _rg(L, 5, 3, 4)),
    "matmul_4_3": lambda L, F: L.matmul(_rg(L, 2, 5, 2, 3), _rg(L, 5, 3, 4)),
    "matmul_4_3_bcast": lambda L, F: L.matmul(_rg(L, 2, 1, 2, 3), L.ones(4, 3, 2)),
    "layer_norm": lambda L, F: F.layer_norm(_rg(L, 2, 3), (3,), _rg(L, 3), _rg(L, 3)),
    "layer_norm_no_affine": lambda L, F: F.layer_norm(_rg(L, 2, 3), (3,)),
    "layer_norm_no_bias": lambda L, F: F.layer_norm(_rg(L, 2, 3), (3,), _rg(L, 3)),
    "cross_entropy": lambda L, F: F.cross_entropy(_rg(L, 2, 3), L.tensor([0, 2])),
    "cross_entropy_weight": lambda L, F: F.cross_entropy(_rg(L, 2, 3), L.tensor([0, 2]),
                                                         weight=L.ones(3)),
    "nll_loss": lambda L, F: F.nll_loss(_rg(L, 2, 3), L.tensor([0, 2])),
    "nll_loss_3d": lambda L, F: F.nll_loss(_rg(L, 2, 3, 4),
                                           L.tensor([[0, 2, 1, 1], [0, 0, 0, 1]])),
    "nll_loss_3d_none": lambda L, F: F.nll_loss(_rg(L, 2, 3, 4), L.zeros(2, 4).long(),
                                                reduction="none"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_graph_shape(case):
    def f(L):
        y = CASES[case](L, L.nn.functional)
        y.sum().backward()  # the graph runs, too
        return desc(y.grad_fn)
    got = same_as_torch(f)
    assert "Backward" in got


def test_linear_shapes_explicitly():
    F = hg.nn.functional
    acc = "AccumulateGrad()"
    w, b = _rg(hg, 3, 4), _rg(hg, 3)
    assert desc(F.linear(_rg(hg, 2, 4), w, b).grad_fn) == \
        f"AddmmBackward0({acc}@0, {acc}@0, TBackward0({acc}@0)@0)"
    assert desc(F.linear(hg.ones(5, 2, 4), w).grad_fn) == \
        f"UnsafeViewBackward0(MmBackward0(None, TBackward0({acc}@0)@0)@0)"
    assert desc(F.linear(hg.ones(5, 2, 4), w, b).grad_fn) == \
        f"ViewBackward0(AddmmBackward0({acc}@0, None, TBackward0({acc}@0)@0)@0)"
    assert desc(F.conv2d(_rg(hg, 1, 2, 5, 5), _rg(hg, 3, 2, 3, 3)).grad_fn) == \
        f"ConvolutionBackward0({acc}@0, {acc}@0, None)"
    assert desc(F.layer_norm(_rg(hg, 2, 3), (3,)).grad_fn) == \
        f"NativeLayerNormBackward0({acc}@0, None, None)"
    assert desc(F.cross_entropy(_rg(hg, 2, 3), hg.tensor([0, 2])).grad_fn) == \
        f"NllLossBackward0(LogSoftmaxBackward0({acc}@0)@0)"


def test_nll_loss_weight_requiring_grad_raises():
    def f(L):
        F = L.nn.functional
        try:
            F.nll_loss(_rg(L, 2, 3), L.tensor([0, 2]), weight=_rg(L, 3))
        except RuntimeError as e:
            return str(e)
    assert same_as_torch(f) == ("The function 'nll_loss_forward' is not differentiable with "
                                "respect to argument 'weight'. This input cannot have "
                                "requires_grad True.")


@pytest.mark.parametrize("case", ["linear_2d", "linear_3d", "linear_1d_no_bias", "matmul_2_3",
                                  "matmul_4_3", "nll_loss_3d_none", "conv2d_no_bias"])
def test_values_and_grads_match_the_fused_forward(case):
    """The recorded chain computes what the fused op (run when nothing records) does."""
    def run(grad):
        hg.manual_seed(0)
        with hg.set_grad_enabled(grad):
            y = CASES[case](hg, hg.nn.functional)
        return y.detach().numpy()
    import numpy as np
    np.testing.assert_allclose(run(True), run(False), rtol=1e-6)


def _hooked_linear(L, x_shape, bias=True, log=None):
    """A Linear layer with tensor hooks on weight and bias and Node hooks along its graph;
    returns the output and the layer (kept alive: hookgrad's AccumulateGrad holds its
    leaf weakly) and appends to ``log`` as the hooks fire."""
    L.manual_seed(0)
    lin = L.nn.Linear(4, 3, bias=bias)
    x = L.ones(*x_shape, requires_grad=True)
    out = lin(x)

    def tag(name):
        return lambda *a: log.append(name)
    lin.weight.register_hook(tag("weight.hook"))
    lin.weight.register_post_accumulate_grad_hook(tag("weight.post_acc"))
    if bias:
        lin.bias.register_hook(tag("bias.hook"))
        lin.bias.register_post_accumulate_grad_hook(tag("bias.post_acc"))
    x.register_hook(tag("input.hook"))
    seen = set()
    stack = [out.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        name = type(n).__name__
        n.register_prehook(tag(name + ".pre"))
        n.register_hook(tag(name + ".post"))
        stack.extend(m for m, _ in n.next_functions)
    return out, lin


@needs_torch
@pytest.mark.parametrize("x_shape,bias", [((2, 4), True), ((2, 4), False), ((5, 2, 4), True),
                                          ((4,), False)])
def test_hooks_fire_in_pytorchs_order(x_shape, bias):
    def f(L):
        log = []
        out, lin = _hooked_linear(L, x_shape, bias, log)
        out.sum().backward()
        return log
    got = same_as_torch(f)
    assert "TBackward0.pre" in got and got.index("TBackward0.post") < got.index("weight.post_acc")


def test_hook_order_on_linear_explicitly():
    log = []
    out, lin = _hooked_linear(hg, (2, 4), True, log)
    out.sum().backward()
    # PyTorch's order: addmm, then its inputs' nodes in the order of its edges (bias,
    # input, weight.t()) as each is the ready node with the highest sequence number
    assert log[:3] == ["AddmmBackward0.pre", "AddmmBackward0.post", "bias.hook"]
    assert log.index("bias.post_acc") < log.index("input.hook") < log.index("TBackward0.pre")
    assert log[-5:] == ["TBackward0.post", "weight.hook", "AccumulateGrad.pre",
                        "weight.post_acc", "AccumulateGrad.post"]


def test_hook_order_inside_compile():
    """Inside hookgrad.compile the backward is traced through the same nodes: the hooks
    fire in the eager order (the log is written while tracing, once)."""
    eager = []
    out, lin = _hooked_linear(hg, (2, 4), True, eager)
    out.sum().backward()
    traced = []
    log = types.SimpleNamespace(append=hg.compile.trace_only(traced.append))   # once

    @hg.compile
    def step(x_shape):
        out, lin = _hooked_linear(hg, x_shape, True, log)
        out.sum().backward()
        return lin.weight.grad
    step((2, 4))
    assert traced == eager


def test_node_prehook_on_tbackward_sees_the_transposed_gradient():
    lin = hg.nn.Linear(4, 3)
    out = lin(hg.ones(2, 4))
    t_node = out.grad_fn.next_functions[2][0]
    seen = []
    t_node.register_prehook(lambda go: seen.append(tuple(go[0].shape)))
    t_node.register_prehook(lambda go: (go[0] * 2,))
    out.sum().backward()
    assert seen == [(4, 3)]
    assert py(lin.weight.grad) == [[4.0] * 4] * 3  # 2 rows, doubled by the prehook
    if torch is not None:
        assert type(t_node).__name__ == "TBackward0"
