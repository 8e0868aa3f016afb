"""Node API, GradientEdge, engine introspection (torch._C names), callbacks, logging."""
import logging

import pytest

import hookgrad as hg
from tests.differential import py, raises, same_as_torch


def test_node_names_along_a_chain():
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        s = (x.exp() * 2 - 1).sum()
        names = []
        node = s.grad_fn
        while node is not None:
            names.append(node.name())
            node = node.next_functions[0][0] if node.next_functions else None
        return names
    assert same_as_torch(f) == ["SumBackward0", "SubBackward0", "MulBackward0", "ExpBackward0",
                                "torch::autograd::AccumulateGrad"]


def test_node_classes_are_named_as_pytorchs():
    """Graph drawers (torchviz) label nodes with ``type(grad_fn).__name__``."""
    def f(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        a, b = x * 2, x * 3
        s = (a.exp() + b).sum()
        return [type(s.grad_fn).__name__, type(a.grad_fn).__name__,
                type(a.grad_fn) is type(b.grad_fn), type(x.exp().grad_fn) is type(a.grad_fn),
                isinstance(a.grad_fn, L.autograd.graph.Node), x._is_view(), x.detach()._is_view()]
    assert same_as_torch(f) == ["SumBackward0", "MulBackward0", True, False, True, False, False]


def test_next_functions_structure():
    def f(L):
        a = L.tensor([1.0], requires_grad=True)
        b = L.tensor([2.0])
        out = []
        for y in (a + b, a * 2, 2 * a, a - 2, a ** 2, a / 2):
            out.append([[n.name() if n is not None else None, i]
                        for n, i in y.grad_fn.next_functions])
        return out
    same_as_torch(f)


def test_node_is_a_node_and_metadata_persists():
    def f(L):
        x = L.tensor([1.0], requires_grad=True)
        y = x.clone()
        y.grad_fn.metadata["owner"] = "layer1"
        acc = y.grad_fn.next_functions[0][0]
        return [y.grad_fn.metadata, isinstance(y.grad_fn, L.autograd.graph.Node),
                isinstance(acc, L.autograd.graph.Node), acc.variable is x]
    assert same_as_torch(f) == [{"owner": "layer1"}, True, True, True]


def test_gradient_edge_of_leaf_and_non_leaf():
    def f(L):
        x = L.tensor([0.0, 1.0], requires_grad=True)
        e = L.autograd.graph.get_gradient_edge(x)
        y, z = x.clone().unbind(0)
        e2 = L.autograd.graph.get_gradient_edge(z)
        return [e.node.name(), e.output_nr, e2.node.name(), e2.output_nr,
                e.node is x.exp().grad_fn.next_functions[0][0]]
    assert same_as_torch(f, names=False) == ["torch::autograd::AccumulateGrad", 0,
                                             "UnbindBackward0", 1, True]
    with pytest.raises(RuntimeError, match="It is not possible to get the gradient edge for a "
                                           "Tensor that does not require gradients"):
        hg.autograd.graph.get_gradient_edge(hg.zeros(2))


def test_increment_version():
    x = hg.zeros(2)
    v = x._version
    hg.autograd.graph.increment_version(x)
    assert x._version == v + 1


def test_current_graph_task_id_and_node():
    def f(L):
        x = L.tensor([1.0], requires_grad=True)
        y = x * 2
        seen = {}

        def hook(g):
            seen["id"] = L._C._current_graph_task_id()
            seen["node"] = L._C._current_autograd_node().name()
            seen["will_acc"] = L._C._will_engine_execute_node(y.grad_fn.next_functions[0][0])
        y.register_hook(hook)
        outside = L._C._current_graph_task_id()
        y.sum().backward()
        return [outside, seen["id"] >= 0, seen["node"], seen["will_acc"]]
    assert same_as_torch(f) == [-1, True, "MulBackward0", True]


def test_will_engine_execute_node_respects_inputs():
    def f(L):
        a = L.tensor([1.0], requires_grad=True)
        b = L.tensor([1.0], requires_grad=True)
        ea = L.autograd.graph.get_gradient_edge(a).node
        h = a.exp()
        seen = []
        h.register_hook(lambda g: seen.append(L._C._will_engine_execute_node(ea)))
        L.autograd.grad((h * b).sum(), [b])
        return seen
    assert same_as_torch(f) == []
    with pytest.raises(RuntimeError, match="should only be called during the backward pass"):
        hg._C._will_engine_execute_node(hg.tensor([1.0], requires_grad=True).exp().grad_fn)


def test_queue_callback_runs_at_end_in_order():
    def f(L):
        x = L.tensor([1.0], requires_grad=True)
        y = x * 2
        log = []
        eng = L.autograd.Variable._execution_engine

        def hook(g):
            log.append("hook")
            eng.queue_callback(lambda: log.append(["cb1", py(x.grad)]))
            eng.queue_callback(lambda: log.append("cb2") or eng.queue_callback(
                lambda: log.append("cb3")))
        y.register_hook(hook)
        y.sum().backward()
        return log
    assert same_as_torch(f) == ["hook", ["cb1", [2.0]], "cb2", "cb3"]


def test_queue_callback_outside_backward_raises():
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during backward"):
        hg.autograd.Variable._execution_engine.queue_callback(lambda: None)


def test_debug_logging_names_each_executed_node(caplog):
    x = hg.tensor([1.0, 2.0], requires_grad=True)
    y = x.sin().sum()
    with caplog.at_level(logging.DEBUG, logger="hookgrad.autograd.graph"):
        y.backward()
    msgs = [r.getMessage() for r in caplog.records]
    assert any("SumBackward0" in m and "float32[]" in m for m in msgs)
    assert any("SinBackward0" in m and "float32[2]" in m for m in msgs)


def test_variable_isinstance():
    assert isinstance(hg.ones(1), hg.autograd.Variable)
