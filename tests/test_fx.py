"""torch.fx.symbolic_trace over hookgrad Modules: the graph (node by node, printed as
PyTorch prints it) against PyTorch's trace of the same model source, the GraphModule's
outputs against the eager model, and PyTorch's errors for what cannot be traced."""
import math
import os

import pytest

import hookgrad
from hookgrad import fx, tanh
from hookgrad.nn import functional as F
from hookgrad.fx.proxy import TraceError
from tests.differential import needs_torch, py, raises, same_as_torch, torch


def _model(L):
    nn = L.nn

    class Sub(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.scale = nn.Parameter(L.ones(4))

        def forward(self, x):
            return self.lin(x) * self.scale

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.sub = Sub()
            self.seq = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
            self.register_buffer("b", L.zeros(4))

        def forward(self, x, y=2):
            h = self.sub(x) + self.b
            h = L.relu(h) + 1
            h = L.softmax(self.seq(h), -1)
            a, b = h.chunk(2, dim=-1)
            z = L.cat([a, b], dim=-1).sum(dim=0, keepdim=True)
            return {"out": z * y, "n": x.shape[0], "m": -x.mean(), "s": 2 - self.sub.scale,
                    "t": math.sqrt(2) * x @ x.T}
    return M()


def _nodes(gm):
    return [(n.op, n.name, str(n.target) if n.op != "call_function" else n.format_node())
            for n in gm.graph.nodes]


@needs_torch
def test_graph_is_pytorchs_node_for_node():
    got = fx.symbolic_trace(_model(hookgrad))
    want = torch.fx.symbolic_trace(_model(torch))
    assert _nodes(got) == _nodes(want)
    assert str(got.graph) == str(want.graph)
    assert got.code == want.code  # the source PyTorch writes for it, wrap() header included
    assert type(got).__name__ == type(want).__name__ == "M"


def test_graph_module_runs_the_graph_like_the_model():
    model = _model(hookgrad)
    gm = fx.symbolic_trace(model)
    ops = [n.op for n in gm.graph.nodes]
    assert ops[:2] == ["placeholder"] * 2 and ops[-1] == "output"
    assert {"call_module", "call_function", "call_method", "get_attr"} <= set(ops)
    x = hookgrad.randn(3, 4)
    got, want = gm(x, y=3), model(x, 3)
    for k in want:
        assert hookgrad.allclose(hookgrad.as_tensor(got[k]), hookgrad.as_tensor(want[k]))
    # the layers and Parameters are shared, not copied; the Modules on the way are new
    assert gm.get_submodule("seq.0") is model.seq[0] and gm.sub.lin is model.sub.lin
    assert gm.sub.scale is model.sub.scale and type(gm.seq) is hookgrad.nn.Module
    assert set(gm.state_dict()) == set(model.state_dict())
    out = gm(x)["out"]
    out.sum().backward()
    assert model.sub.scale.grad is not None


def test_functional_calls_module_globals_and_wrap_are_recorded():
    def f(x):
        return F.softmax(tanh(x), dim=0) + len_of(x)

    g = fx.symbolic_trace(f).graph
    assert [n.format_node() for n in g.nodes][1:4] == [
        "%tanh : [num_users=1] = call_function[target=torch.tanh](args = (%x,), kwargs = {})",
        "%softmax : [num_users=1] = call_function[target=torch.nn.functional.softmax]"
        "(args = (%tanh,), kwargs = {dim: 0})",
        "%len_of : [num_users=1] = call_function[target=tests.test_fx.len_of](args = (%x,), "
        "kwargs = {})"]
    assert fx.symbolic_trace(f)(hookgrad.ones(2)).tolist() == [2.5, 2.5]


def test_a_function_bound_before_torch_function_switched_on_is_still_recorded():
    # ``from torch import tanh`` ran before the first mode wrapped ``torch.tanh``: the
    # trace must still record the plain function it holds (in a fresh process, as the
    # protocol switches on once per process)
    import subprocess
    import sys
    program = (
        "import hookgrad\n"
        "from hookgrad import fx, tanh\n"
        "from hookgrad.overrides import TorchFunctionMode\n"
        "with TorchFunctionMode():\n"
        "    pass\n"
        "g = fx.symbolic_trace(lambda x: tanh(x) * 2).graph\n"
        "print([n.op for n in g.nodes])\n")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         timeout=300, cwd=os.path.dirname(os.path.dirname(__file__)))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == \
        "['placeholder', 'call_function', 'call_function', 'output']"


def test_wrapping_a_builtin_records_it_in_that_module_only(tmp_path, monkeypatch):
    (tmp_path / "fx_wraps_len.py").write_text(
        "import hookgrad.fx\nhookgrad.fx.wrap('len')\n\n\ndef f(x):\n    return len(x)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import fx_wraps_len
    g = fx.symbolic_trace(fx_wraps_len.f).graph
    assert "%len_1 : [num_users=1] = call_function[target=builtins.len](args = (%x,)" in str(g)
    assert "len" not in vars(fx_wraps_len)  # the builtin is unshadowed after the trace
    with pytest.raises(RuntimeError, match="'len' is not supported"):
        fx.symbolic_trace(lambda x: len(x))


def test_functions_imported_by_name_in_a_traced_modules_source_are_recorded(tmp_path,
                                                                           monkeypatch):
    (tmp_path / "fx_inner_layer.py").write_text(
        "import hookgrad\nfrom hookgrad import tanh\n\n\n"
        "class Inner(hookgrad.nn.Module):\n    def forward(self, x):\n"
        "        return tanh(x)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import fx_inner_layer

    class Outer(hookgrad.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = fx_inner_layer.Inner()

        def forward(self, x):
            return self.inner(x) + 1
    targets = [n.format_node() for n in fx.symbolic_trace(Outer()).graph.nodes]
    assert "call_function[target=torch.tanh](args = (%x,)" in targets[1]
    assert fx_inner_layer.tanh is hookgrad.tanh  # put back after the trace


def len_of(x):
    return len(x)


fx.wrap("len_of")


class _Branchy(hookgrad.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        return -x


@pytest.mark.parametrize("fn, error, match", [
    (_Branchy(), TraceError, "symbolically traced variables cannot be used as inputs to "
                             "control flow"),
    (lambda x: len(x), RuntimeError, "'len' is not supported in symbolic tracing by default"),
    (lambda x: [t for t in x], TraceError, "Proxy object cannot be iterated"),
    (lambda *xs: xs[0], NotImplementedError, "hookgrad does not implement torch.fx."
                                             "symbolic_trace of a function with \\*args"),
])
def test_what_cannot_be_traced_raises_pytorchs_error(fn, error, match):
    before = (hookgrad.nn.Module.__call__, hookgrad.relu)
    with pytest.raises(error, match=match):
        fx.symbolic_trace(fn)
    assert (hookgrad.nn.Module.__call__, hookgrad.relu) == before  # patches undone
    assert "__getattr__" not in vars(hookgrad.nn.Module)


@needs_torch
@pytest.mark.parametrize("fn", [lambda x: len(x), lambda x: [t for t in x]])
def test_the_same_errors_as_torch(fn):
    with pytest.raises(Exception) as want:
        torch.fx.symbolic_trace(fn)
    with pytest.raises(Exception) as got:
        fx.symbolic_trace(fn)
    assert (type(got.value).__name__, str(got.value)) == (type(want.value).__name__,
                                                          str(want.value))


def _operators(L):
    def f(x):
        return (x[1:, None] + abs(x) + L.ones(2), x.size(0) > 1, x[x > 0], -x.T, x ** 2 @ x)
    return L.fx.symbolic_trace(f).code


def test_code_writes_operators_constants_and_deletions_as_pytorch_does():
    code = same_as_torch(_operators)
    assert "abs_1 = _operator_abs(x)" in code and "matmul = pow_1 @ x;  pow_1 = x = None" in code


def test_a_transformer_subclass_rewrites_the_graph():
    def f(L):
        import operator

        class AddToMul(L.fx.Transformer):
            def call_function(self, target, args, kwargs):
                if target is operator.add:
                    target = operator.mul
                return super().call_function(target, args, kwargs)

        class M(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = L.nn.Linear(2, 2)
                self.register_buffer("b", L.ones(2))

            def forward(self, x, y=3):
                return L.relu(self.lin(x) + self.b).sum(1) + y
        new = AddToMul(L.fx.symbolic_trace(M())).transform()
        return [str(new.graph), type(new).__name__, new.code]
    got = same_as_torch(f)
    assert "call_function[target=operator.mul](args = (%lin, %b)" in got[0]


def test_a_graph_module_from_a_dict_takes_the_targets_from_it():
    gm = fx.symbolic_trace(hookgrad.nn.Sequential(hookgrad.nn.Linear(2, 3)))
    lin = gm.get_submodule("0")
    assert fx.GraphModule({"0": lin}, gm.graph)(hookgrad.ones(1, 2)).shape == (1, 3)
    with pytest.raises(RuntimeError, match="Node _0 referenced target 0 but that target was "
                       "not provided"):
        fx.GraphModule({}, gm.graph)


def test_recompile_has_nothing_to_do():
    gm = fx.symbolic_trace(lambda x: x + 1)
    assert gm.recompile() is None and gm(hookgrad.ones(1)).tolist() == [2.0]
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'x'"):
        gm()


def test_an_interpreter_subclass_changes_what_running_means():
    def f(L):
        import operator

        class AddIsMul(L.fx.Interpreter):
            def call_function(self, target, args, kwargs):
                seen.append(target.__name__)
                if target is operator.add:
                    target = operator.mul
                return super().call_function(target, args, kwargs)
        seen = []
        gm = L.fx.symbolic_trace(lambda x, y: L.relu(x + y) + 1)
        out = AddIsMul(gm).run(L.tensor([2.0, -3.0]), L.tensor([3.0, 1.0]))
        return [py(out), seen, py(gm(L.tensor([2.0, -3.0]), y=L.tensor([3.0, 1.0]))),
                raises(L.fx.Interpreter(gm).run)]
    got = same_as_torch(f)
    assert got[0] == [6.0, 0.0] and got[1] == ["add", "relu", "add"]


def test_symbolic_shape_questions_have_concrete_answers():
    def f(L):
        from importlib import import_module
        s = import_module(L.__name__ + ".fx.experimental.symbolic_shapes")
        x = L.ones(2, 3)
        return [s.guard_or_false(x.shape[0] == 2), s.guard_or_true(x.shape[1] == 2),
                s.statically_known_true(x.shape[0] > 1), s.is_concrete_int(x.shape[0]),
                s.is_concrete_bool(True), sorted(s.free_symbols(x)), s.has_free_symbols(x)]
    assert same_as_torch(f) == [True, False, True, True, True, [], False]


def test_tree_flatten_spec_follows_the_spec():
    def f(L):
        from importlib import import_module
        fxp, p = import_module(L.__name__ + ".fx._pytree"), import_module(
            L.__name__ + ".utils._pytree")
        spec = p.tree_structure({"a": 1, "b": (2, 3)})
        return [fxp.tree_flatten_spec({"b": (5, 6), "a": 4, "c": 9}, spec),
                fxp.tree_flatten_spec([1, 2, 3], p.tree_structure([0, 0]))]
    assert same_as_torch(f) == [[4, 5, 6], [1, 2]]
