"""Node classes as PyTorch has them: ``Node`` a virtual base (not in the MRO), classes named
as PyTorch's, nodes callable with PyTorch's errors, input metadata and sequence numbers,
and the graph a backward records under ``create_graph=True``."""
import pytest

import hookgrad as hg
from tests.differential import py, raises, same_as_torch


def graph_desc(fn):
    """``Name(next, ...)`` recursively, as graph-reading code prints a graph."""
    if fn is None:
        return "None"
    return f"{type(fn).__name__}({', '.join(graph_desc(n) for n, _ in fn.next_functions)})"


def _doubler(L):
    class Doubler(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    return Doubler


def test_node_is_a_virtual_base():
    def f(L):
        Node = L.autograd.graph.Node
        a = L.ones(2, requires_grad=True)
        b = a.exp()
        acc = b.grad_fn.next_functions[0][0]
        c = _doubler(L).apply(a)
        return [isinstance(b.grad_fn, Node), issubclass(type(b.grad_fn), Node),
                Node in type(b.grad_fn).__mro__, isinstance(acc, Node),
                Node in type(acc).__mro__, isinstance(L._C._functions.AccumulateGrad, Node),
                issubclass(L._C._functions.AccumulateGrad, Node),
                issubclass(L._C._functions.DelayedError, Node),
                isinstance(None, Node), isinstance(1, Node), isinstance(Node, Node),
                issubclass(Node, Node), issubclass(int, Node),
                issubclass(L.autograd.function.BackwardCFunction, Node),
                isinstance(c.grad_fn, Node), Node in type(c.grad_fn).__mro__]
    assert same_as_torch(f) == [True, True, False, True, False, False, True, True, False, False,
                                False, True, False, True, True, False]


def test_class_names_as_pytorchs():
    def f(L):
        x = L.ones(3, requires_grad=True)
        y = x.clone()
        y[0] = x[1] * 2  # CopySlices
        z = L.zeros(3)
        z.copy_(x)  # CopyBackwards
        hook = L.utils.hooks.BackwardHook(L.nn.Identity(), [], [])
        h, = hook.setup_input_hook((x.clone(),))
        s = _doubler(L).apply(x)
        acc = x.clone().grad_fn.next_functions[0][0]
        return [type(n).__name__ for n in (y.grad_fn, z.grad_fn, h.grad_fn, s.grad_fn, acc)] + \
            [y.grad_fn.name(), z.grad_fn.name(), acc.name(), s.grad_fn.name()]
    assert same_as_torch(f) == [
        "CopySlices", "CopyBackwards", "BackwardHookFunctionBackward", "DoublerBackward",
        "AccumulateGrad", "torch::autograd::CopySlices", "torch::autograd::CopyBackwards",
        "torch::autograd::AccumulateGrad", "DoublerBackward"]


def test_one_class_per_name():
    def f(L):
        x = L.ones(2, requires_grad=True)
        return [type((x * 2).grad_fn) is type((x * x).grad_fn),
                type((x * 2).grad_fn) is type((x + 2).grad_fn)]
    assert same_as_torch(f) == [True, False]


def _function(L, once):
    class MyFunction(L.autograd.Function):
        @staticmethod
        def forward(ctx, t1, pyscalar, t2):
            ctx.pyscalar = pyscalar
            ctx.save_for_backward(t1, t2)
            return t1 + pyscalar * t2 + t1 * t2

        @staticmethod
        def backward(ctx, g):
            v1, v2 = ctx.saved_tensors
            return g + g * v2, None, g * ctx.pyscalar + g * v1
    if once:
        MyFunction.backward = staticmethod(
            L.autograd.function.once_differentiable(MyFunction.backward))
    return MyFunction


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@pytest.mark.parametrize("once", [False, True])
def test_graph_recorded_by_a_backward_with_create_graph(once):
    def f(L):
        x = L.ones(2, 2, requires_grad=True)
        y = L.full((2, 2), 2.0, requires_grad=True)
        out = _function(L, once).apply(x, 2, y)
        out.sum().backward(L.ones((), requires_grad=True), create_graph=True)
        return [graph_desc(x.grad.grad_fn), graph_desc(y.grad.grad_fn), py(x.grad), py(y.grad)]
    got = same_as_torch(f)
    if once:
        assert got[0] == got[1] == \
            "CopyBackwards(None, Error(AccumulateGrad(), None, AccumulateGrad()))"
    else:
        assert got[0] == ("CopyBackwards(None, AddBackward0(ExpandBackward0(AccumulateGrad()), "
                          "MulBackward0(ExpandBackward0(AccumulateGrad()), AccumulateGrad())))")
    assert got[2] == [[3.0, 3.0], [3.0, 3.0]] and got[3] == [[3.0, 3.0], [3.0, 3.0]]


@pytest.mark.parametrize("op", ["sum", "neg", "t", "transpose", "permute", "view", "unsqueeze",
                                "squeeze", "select", "slice"])
def test_backward_of_one_op_names_pytorchs_node(op):
    fns = {"sum": lambda x: x.sum(), "neg": lambda x: -x, "t": lambda x: x.t(),
           "transpose": lambda x: x.transpose(0, 1), "permute": lambda x: x.permute(1, 0),
           "view": lambda x: x.view(6), "unsqueeze": lambda x: x.unsqueeze(0),
           "squeeze": lambda x: x[None].squeeze(0), "select": lambda x: x[0],
           "slice": lambda x: x[:, 1:]}

    def f(L):
        x = L.ones(2, 3, requires_grad=True)
        y = fns[op](x)
        gx, = L.autograd.grad(y, x, L.ones(y.shape, requires_grad=True), create_graph=True)
        return graph_desc(gx.grad_fn)
    got = same_as_torch(f)
    assert "Backward" in got and "Backward0Backward" not in got


def test_calling_a_node():
    def f(L):
        a = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = a * 2
        out = [raises(y.grad_fn), raises(y.grad_fn, 1), raises(y.grad_fn, None, None)]
        ga, gb = y.grad_fn(L.ones(3))
        out += [py(ga), gb, list(y.grad_fn(None))]
        acc = y.grad_fn.next_functions[0][0]
        out += [list(acc(L.ones(3))), py(a.grad)]
        return out
    got = same_as_torch(f)
    assert got[0] == {"raises": "TypeError", "message": "expected 1 arguments, got 0 instead"}
    assert got[1] == {"raises": "TypeError", "message": "argument 0 is not a Variable"}
    assert got[3:] == [[2.0, 2.0, 2.0], None, [None, None], [], [1.0, 1.0, 1.0]]


def test_input_metadata_and_sequence_numbers():
    def f(L):
        x = L.ones(2, requires_grad=True)
        z = x * x
        m = z.grad_fn._input_metadata[0]
        var, _ = L.var_mean(L.ones(3, 3, requires_grad=True), dim=0)
        ms = var.grad_fn._input_metadata
        acc = z.grad_fn.next_functions[0][0]
        w = z.exp()
        later = w.grad_fn._sequence_nr() > z.grad_fn._sequence_nr()
        z.grad_fn._set_sequence_nr(123)
        return [list(m.shape), str(m.dtype).split(".")[-1], len(ms), list(ms[1].shape),
                list(acc._input_metadata[0].shape), later, z.grad_fn._sequence_nr()]
    assert same_as_torch(f) == [[2], "float32", 2, [3], [2], True, 123]


def test_sequence_nr_orders_ready_nodes():
    def f(L):
        x = L.ones(1, requires_grad=True)
        a, b = x * 2, x * 3
        order = []
        a.grad_fn.register_hook(lambda gi, go: order.append("a"))
        b.grad_fn.register_hook(lambda gi, go: order.append("b"))
        a.grad_fn._set_sequence_nr(b.grad_fn._sequence_nr() + 1)
        (a + b).sum().backward()
        return order
    assert same_as_torch(f) == ["a", "b"]


def test_node_classes_inside_compile():
    x = hg.ones(2, 2, requires_grad=True)
    seen = []
    note = hg.compile.trace_only(seen.append)   # what the trace sees, once

    @hg.compile
    def step(x):
        y = x.exp().sum()
        note([type(y.grad_fn).__name__, isinstance(y.grad_fn, hg.autograd.graph.Node),
                     hg.autograd.graph.Node in type(y.grad_fn).__mro__])
        y.backward()
        return y
    step(x)
    assert seen[0] == ["SumBackward0", True, False]
