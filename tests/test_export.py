"""``torch.export`` on ``jax.export``: the same Modules exported by hookgrad and by PyTorch
give the same outputs from ``ep.module()`` (at the example's batch size and, through a
``Dim``, at another), the same signatures and state, and the same errors."""
import os
import subprocess
import sys

import numpy as np
import pytest

import hookgrad
from tests.differential import py, same_as_torch, torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _fill(L, model, seed=0):
    """Deterministic weights, the same in both libraries."""
    rng = np.random.default_rng(seed)
    with L.no_grad():
        for _, p in sorted(model.named_parameters()):
            p.copy_(L.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    return model


def _x(L, *shape, seed=1):
    return L.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _mlp(L):
    nn = L.nn
    return _fill(L, nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)))


def _convnet(L):
    nn = L.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.fc = nn.Linear(4 * 2 * 2, 5)

        def forward(self, x):
            y = nn.functional.max_pool2d(L.relu(self.bn(self.conv(x))), 2)
            return self.fc(y.flatten(1))
    return _fill(L, Net())


def _with_buffers(L):
    nn = L.nn

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 3)
            self.register_buffer("shift", L.arange(3.0))
            self.register_buffer("scratch", L.ones(3), persistent=False)

        def forward(self, x, *, scale=1.0, mask=None):
            y = self.lin(x) * scale + self.shift + self.scratch
            return {"y": y, "masked": y * mask if mask is not None else None}
    return _fill(L, Scaled())


def test_mlp_module_matches_eager_and_pytorch_at_two_batch_sizes():
    def run(L):
        model = _mlp(L)
        ep = L.export.export(model, (_x(L, 3, 4),),
                             dynamic_shapes={"input": {0: L.export.Dim("batch", max=64)}})
        out = [ep.module()(_x(L, n, 4, seed=n)) for n in (3, 7)]
        eager = [model(_x(L, n, 4, seed=n)) for n in (3, 7)]
        assert all(np.allclose(py(a), py(b), atol=1e-5) for a, b in zip(out, eager))
        return py(out)
    out = same_as_torch(run)
    assert [len(o) for o in out] == [3, 7]


def test_conv_net_with_a_dynamic_batch_matches_pytorch():
    def run(L):
        model = _convnet(L).eval()
        ep = L.export.export(model, (_x(L, 2, 3, 4, 4),),
                             dynamic_shapes=({0: L.export.Dim("batch")},))
        return py([ep.module()(_x(L, n, 3, 4, 4, seed=n)) for n in (2, 5)])
    out = same_as_torch(run, tol=1e-4)
    assert [len(o) for o in out] == [2, 5]


def test_buffers_kwargs_and_constants_follow_pytorch():
    def run(L):
        model = _with_buffers(L)
        x, mask = _x(L, 2, 4), _x(L, 2, 3, seed=2)
        ep = L.export.export(model, (x,), {"scale": 2.0, "mask": mask})
        got = ep.module()(_x(L, 2, 4, seed=5), scale=2.0, mask=mask)
        want = model(_x(L, 2, 4, seed=5), scale=2.0, mask=mask)
        assert np.allclose(py(got["y"]), py(want["y"]), atol=1e-5)
        sig = ep.graph_signature
        return {"out": py(got), "state": sorted(ep.state_dict),
                "module_state": sorted(ep.module().state_dict()),
                "inputs": [(s.kind.name, s.arg.name, s.target, s.persistent)
                           for s in sig.input_specs],
                "parameters": sig.parameters, "buffers": sig.buffers,
                "non_persistent": sig.non_persistent_buffers,
                "user_inputs": sig.user_inputs,
                "outputs": [s.kind.name for s in sig.output_specs]}
    got = same_as_torch(run)
    assert got["state"] == ["lin.bias", "lin.weight", "shift"]
    assert ("USER_INPUT", "scale", None, None) in got["inputs"]


def test_the_programs_parameters_and_buffers_are_pytorchs():
    def run(L):
        ep = L.export.export(_with_buffers(L), (_x(L, 2, 4),))
        return {"named_parameters": [(n, py(p)) for n, p in ep.named_parameters()],
                "parameters": [py(p) for p in ep.parameters()],
                "named_buffers": [(n, py(b)) for n, b in ep.named_buffers()],
                "buffers": [py(b) for b in ep.buffers()]}
    got = same_as_torch(run)
    assert [n for n, _ in got["named_parameters"]] == ["lin.weight", "lin.bias"]
    assert [n for n, _ in got["named_buffers"]] == ["shift", "scratch"]
    assert got["buffers"] == [v for _, v in got["named_buffers"]]


def test_guards_reject_inputs_the_program_was_not_exported_for():
    def run(L):
        model = _with_buffers(L)
        Dim = L.export.Dim
        ep = L.export.export(model, (_x(L, 2, 4),), {"scale": 2.0},
                             dynamic_shapes={"x": {0: Dim("b", min=2, max=8)}, "scale": None})
        m = ep.module()
        return [_raises(m.train), _raises(m.eval),
                _raises(lambda: m(_x(L, 3, 5), scale=2.0)),
                _raises(lambda: m(_x(L, 9, 4), scale=2.0)),
                _raises(lambda: m(_x(L, 3, 4), scale=3.0)),
                _raises(lambda: m(_x(L, 3, 4)))]
    got = same_as_torch(run)
    assert got == [["NotImplementedError", "Calling train() is not supported yet."],
                   ["NotImplementedError", "Calling eval() is not supported yet."],
                   ["AssertionError", "Guard failed: x.size()[1] == 4"],
                   ["AssertionError", "Guard failed: x.size()[0] <= 8"],
                   ["AssertionError", "Guard failed: scale == 2.0"],
                   ["ValueError", "Ran into a kwarg keyword mismatch: Got the following "
                                  "keywords [] but expected ['scale']"]]


def _raises(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return [type(e).__name__, str(e).splitlines()[0]]
    return None


def _export_error(L, model, args, **kw):
    try:
        L.export.export(model, args, **kw)
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    raise AssertionError("export did not raise")


def _reshaper(L):
    class Reshape(L.nn.Module):
        def forward(self, x):
            return x.reshape(2, 4) * 2
    return Reshape()


@pytest.mark.parametrize("hint", ["named", "DYNAMIC"])
def test_a_dimension_the_forward_specializes_is_a_constraint_violation(hint):
    for L in (hookgrad,) if torch is None else (hookgrad, torch):
        dim = L.export.Dim("b") if hint == "named" else L.export.Dim.DYNAMIC
        kind, msg = _export_error(L, _reshaper(L), (L.ones(2, 4),),
                                  dynamic_shapes={"x": {0: dim}})
        assert issubclass(kind, L._dynamo.exc.UserError), (L, kind)
        assert msg.startswith("Constraints violated (")
        assert "specialized it to be a constant (2)" in msg
        if hint == "named":
            assert msg.startswith("Constraints violated (b)!") and "  b = 2" in msg


def test_dim_auto_falls_back_to_the_example_size():
    def run(L):
        ep = L.export.export(_reshaper(L), (L.ones(2, 4),),
                             dynamic_shapes={"x": {0: L.export.Dim.AUTO}})
        return [py(ep.module()(L.ones(2, 4))),
                _raises(lambda: ep.module()(L.ones(3, 4)))[1].startswith("Guard failed: ")]
    assert same_as_torch(run)[1] is True
    ep = hookgrad.export.export(_reshaper(hookgrad), (hookgrad.ones(2, 4),),
                                dynamic_shapes={"x": {0: hookgrad.export.Dim.AUTO}})
    assert ep.range_constraints == {}
    with pytest.raises(AssertionError, match=r"^Guard failed: x.size\(\)\[0\] == 2$"):
        ep.module()(hookgrad.ones(3, 4))


def test_bad_dynamic_shapes_and_arguments_raise_pytorchs_errors():
    def run(L):
        Dim, m, x = L.export.Dim, _mlp(L), L.ones(2, 4)
        cases = [dict(dynamic_shapes={"y": {0: Dim("b")}}),
                 dict(dynamic_shapes=({0: Dim("b")}, {0: Dim("c")}))]
        out = [_export_error(L, m, (x,), **kw) for kw in cases]
        out.append(_export_error(L, m, x))
        out.append(_export_error(L, lambda x: x, (x,)))
        out.append(_export_error(L, m, (L.ones(9, 4),),
                                 dynamic_shapes=({0: Dim("b", min=2, max=4)},)))
        return [(k.__name__, msg.splitlines()[0].split(", got <class")[0]) for k, msg in out]
    got = same_as_torch(run)
    assert [k for k, _ in got] == ["UserError", "UserError", "UserError", "ValueError",
                                   "ConstraintViolationError"]
    assert "top-level keys must be the arg names ['input']" in got[0][1]
    assert got[1][1].startswith("Detected mismatch between the structure of `inputs`")
    assert got[2][1].startswith("Expecting `args` to be a tuple of example positional")
    assert got[3][1].startswith("Expected `mod` to be an instance of `torch.nn.Module`")
    assert got[4][1].startswith("9 not in range [2, 4]")


def test_dim_checks_its_arguments_as_pytorch():
    def run(L):
        Dim = L.export.Dim
        return [_raises(lambda: Dim("b", min=5, max=2)), _raises(lambda: Dim("not valid")),
                repr(Dim("b", max=10)), repr(Dim("b")), repr(Dim.AUTO), repr(2 * Dim("d")),
                [repr(d) for d in L.export.dims("p", "q", max=5)],
                _raises(lambda: Dim("b") * 0)]
    got = same_as_torch(run)
    assert got[0] == ["AssertionError", "Cannot create Dim with inconsistent min=5, max=2"]
    assert got[2:5] == ["Dim('b', min=0, max=10)", "Dim('b', min=0)", "DimHint(AUTO)"]


def test_derived_dimensions_tie_inputs_together():
    def run(L):
        class Cat(L.nn.Module):
            def forward(self, x, y):
                return L.cat([x, x]) + y
        b = L.export.Dim("b")
        ep = L.export.export(Cat(), (L.ones(2, 3), L.ones(4, 3)),
                             dynamic_shapes={"x": {0: b}, "y": {0: 2 * b}})
        return [py(ep.module()(_x(L, 3, 3), _x(L, 6, 3, seed=3))),
                _raises(lambda: ep.module()(_x(L, 3, 3), _x(L, 4, 3)))[0]]
    got = same_as_torch(run)
    assert len(got[0]) == 6 and got[1] == "AssertionError"


def test_training_mode_buffer_writes_are_program_outputs():
    def run(L):
        model = _convnet(L).train()
        x = _x(L, 4, 3, 4, 4)
        before = py(model.bn.running_mean)
        ep = L.export.export(model, (x,))
        assert py(model.bn.running_mean) == before  # exporting runs nothing on the model
        m = ep.module()
        out = m(x)
        eager = _convnet(L).train()
        want = eager(x)
        assert np.allclose(py(out), py(want), atol=1e-4)
        return {"running_mean": py(m.get_buffer("bn.running_mean")),
                "eager_running_mean": py(eager.bn.running_mean),
                "batches": py(m.get_buffer("bn.num_batches_tracked"))}, ep
    got = same_as_torch(lambda L: run(L)[0], tol=1e-4)
    assert np.allclose(got["running_mean"], got["eager_running_mean"], atol=1e-5)
    assert got["batches"] == 1
    # the program is functional: the writes are outputs (PyTorch's form after
    # run_decompositions(); its training IR keeps them in place: docs/differences.md)
    ep = run(hookgrad)[1]
    assert sorted(ep.graph_signature.buffers_to_mutate.values()) == [
        "bn.num_batches_tracked", "bn.running_mean", "bn.running_var"]


def test_forward_hooks_are_traced_into_the_program():
    def run(L):
        model = _mlp(L)
        seen = []
        model.register_forward_hook(lambda mod, args, out: out * 10)
        model.register_forward_pre_hook(lambda mod, args: seen.append(L.compiler.is_exporting()))
        ep = L.export.export(model, (_x(L, 2, 4),))
        assert seen == [True]
        return py(ep.module()(_x(L, 2, 4)))
    got = same_as_torch(run)
    assert np.allclose(got, py(_mlp(hookgrad)(_x(hookgrad, 2, 4)) * 10), atol=1e-5)


def test_dynamic_shape_builders_and_suggested_fixes():
    def run(L):
        E = L.export
        m = _mlp(L)
        extra = E.AdditionalInputs()
        extra.add((L.ones(5, 4),))
        shapes = E.ShapesCollection()
        x = L.ones(2, 4)
        shapes[x] = {0: E.Dim("n")}
        try:
            E.export(_reshaper(L), (L.ones(2, 4),), dynamic_shapes={"x": {0: E.Dim("b")}})
        except L._dynamo.exc.UserError as e:
            refined = E.dynamic_shapes.refine_dynamic_shapes_from_suggested_fixes(
                e.msg, {"x": {0: E.Dim("b")}})
        E.export(_reshaper(L), (L.ones(2, 4),), dynamic_shapes=refined)
        inferred = extra.dynamic_shapes(m, (L.ones(2, 4),))
        extra.verify(E.export(m, (L.ones(2, 4),), dynamic_shapes=inferred))
        return [repr(inferred),
                repr(shapes.dynamic_shapes(m, (x,))), repr(refined)]
    got = same_as_torch(run)
    assert got == ["{'input': (DimHint(DYNAMIC), None)}", "{'input': {0: Dim('n', min=0)}}",
                   "{'x': {0: 2}}"]


def test_the_program_text_is_stablehlo_and_run_decompositions_returns_it():
    ep = hookgrad.export.export(_mlp(hookgrad), (hookgrad.ones(2, 4),),
                                dynamic_shapes={"input": {0: hookgrad.export.Dim("batch")}})
    text = str(ep)
    assert text.startswith("ExportedProgram:") and "stablehlo.dot_general" in text
    assert "Graph signature" in text and "Range constraints: {'batch': VR[1, int_oo]}" in text
    assert ep.run_decompositions() is ep  # docs/differences.md: nothing to decompose
    assert "func.func public @main" in ep.graph_module.code
    with pytest.raises(RuntimeError, match=r"Unable to call ExportedProgram directly\. You "
                                           r"should use `exported_program.module\(\)`"):
        ep(hookgrad.ones(2, 4))


def test_a_trace_that_must_know_a_size_is_not_1_takes_sizes_from_2():
    # the encoder's view checks ask "s != 1?": decided with sizes from 2 (docs/differences.md)
    layer = hookgrad.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True).eval()
    ep = hookgrad.export.export(layer, (hookgrad.ones(2, 5, 8),),
                                dynamic_shapes=({1: hookgrad.export.Dim("s")},))
    assert repr(ep.range_constraints) == "{'s': VR[2, int_oo]}"
    with pytest.raises(AssertionError, match=r"^Guard failed: src.size\(\)\[1\] >= 2$"):
        ep.module()(hookgrad.ones(2, 1, 8))


_LOAD_AND_RUN = r"""
import sys, numpy as np, hookgrad
extra = {"note": ""}
ep = hookgrad.export.load(sys.argv[1], extra_files=extra)
x = hookgrad.tensor(np.arange(20, dtype=np.float32).reshape(5, 4) / 10)
print(extra["note"], repr(ep.module()(x).tolist()))
"""


def test_a_saved_program_runs_in_a_fresh_process_without_the_model_source(tmp_path):
    pytest.importorskip("flatbuffers")  # JAX's serializer (hookgrad[export])
    model = _mlp(hookgrad)
    ep = hookgrad.export.export(model, (hookgrad.ones(2, 4),),
                                dynamic_shapes={"input": {0: hookgrad.export.Dim("batch")}})
    path = tmp_path / "mlp.pt2"
    hookgrad.export.save(ep, path, extra_files={"note": "mlp-v1"})
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT] + sys.path))
    proc = subprocess.run([sys.executable, "-c", _LOAD_AND_RUN, str(path)], cwd=str(tmp_path),
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    note, values = proc.stdout.strip().split(" ", 1)
    x = hookgrad.tensor(np.arange(20, dtype=np.float32).reshape(5, 4) / 10)
    assert note == "mlp-v1"
    assert np.allclose(eval(values), py(model(x)), atol=1e-5)


def test_save_without_flatbuffers_says_what_to_install(tmp_path):
    try:
        import flatbuffers  # noqa: F401
        pytest.skip("flatbuffers is installed: save works (the test above)")
    except ImportError:
        pass
    ep = hookgrad.export.export(_mlp(hookgrad), (hookgrad.ones(2, 4),))
    with pytest.raises(ImportError, match="need the 'flatbuffers' package"):
        hookgrad.export.save(ep, tmp_path / "m.pt2")


def test_inputs_of_another_dtype_are_refused_with_the_reason():
    ep = hookgrad.export.export(_mlp(hookgrad), (hookgrad.ones(2, 4),))
    with pytest.raises(RuntimeError, match="takes input as float32, but got float64"):
        ep.module()(hookgrad.ones(2, 4, dtype=hookgrad.float64))


def test_unflatten_and_draft_export_say_hookgrad_lacks_them():
    for fn in (hookgrad.export.unflatten, hookgrad.export.draft_export):
        with pytest.raises(NotImplementedError, match="hookgrad does not implement "
                                                      "torch.export"):
            fn(None)


def test_random_ops_draw_new_numbers_at_each_call_of_the_program():
    def run(L):
        model = L.nn.Sequential(L.nn.Linear(4, 64), L.nn.Dropout(0.5))
        ep = L.export.export(model.train(), (L.ones(2, 4),))
        m = ep.module()
        a, b = m(L.ones(2, 4)), m(L.ones(2, 4))
        frozen = L.export.export(model.eval(), (L.ones(2, 4),)).module()
        return [bool((a != b).any()), bool((frozen(L.ones(2, 4)) == model(L.ones(2, 4))).all())]
    assert same_as_torch(run) == [True, True]


@pytest.mark.parametrize("kind", ["encoder", "lstm"])
def test_sequence_models_export_with_dynamic_batch_and_length(kind):
    def run(L):
        Dim = L.export.Dim
        if kind == "encoder":
            model = L.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        else:
            model = L.nn.LSTM(4, 8, batch_first=True)
        model = _fill(L, model).eval()
        width = 8 if kind == "encoder" else 4
        # PyTorch's LSTM specializes the length (its loop runs per step): batch only there
        dims = {0: Dim("b"), 1: Dim("s", max=32)} if kind == "encoder" else {0: Dim("b")}
        ep = L.export.export(model, (_x(L, 2, 5, width),), dynamic_shapes=(dims,))
        sizes = ((2, 5), (3, 9)) if kind == "encoder" else ((2, 5), (3, 5))
        outs = [ep.module()(_x(L, b, s, width, seed=b)) for b, s in sizes]
        return py([o[0] if isinstance(o, tuple) else o for o in outs])
    got = same_as_torch(run, tol=1e-4)
    assert [len(o) for o in got] == [2, 3]


_HF_EXPORT = r"""
import hookgrad.as_torch
hookgrad.as_torch.install()
import torch
from torch.export import Dim, ExportedProgram
from transformers import BertConfig, BertModel
torch.manual_seed(0)
model = BertModel(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1,
                             num_attention_heads=2, intermediate_size=32,
                             max_position_embeddings=32)).eval()
ids = torch.tensor([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]])
with torch.no_grad():
    ep = torch.export.export(model, (ids,), dynamic_shapes=({0: Dim.STATIC, 1: None},))
    out, ref = ep.module()(ids), model(ids)
assert isinstance(ep, ExportedProgram)
print(type(out).__name__, float((out.last_hidden_state - ref.last_hidden_state).abs().max()))
"""


def test_a_transformers_model_exports_under_as_torch():
    pytest.importorskip("transformers")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT] + sys.path))
    proc = subprocess.run([sys.executable, "-c", _HF_EXPORT], cwd=ROOT, capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    name, diff = proc.stdout.split()[-2:]
    assert name == "BaseModelOutputWithPoolingAndCrossAttentions" and float(diff) < 1e-5


def test_the_module_reads_its_state_at_each_call():
    def run(L):
        ep = L.export.export(L.nn.Sequential(L.nn.Linear(4, 3)), (L.ones(2, 4),))
        m = ep.module()
        m.load_state_dict({"0.weight": L.zeros(3, 4), "0.bias": L.arange(3.0)})
        return py(m(L.ones(2, 4)))
    assert same_as_torch(run) == [[0.0, 1.0, 2.0]] * 2


def test_without_guards_a_bad_input_is_refused_by_the_program():
    ep = hookgrad.export.export(hookgrad.nn.Linear(4, 3), (hookgrad.ones(2, 4),))
    with pytest.raises(RuntimeError, match=r"cannot run on these inputs \(the call skipped "
                                           r"its guards: check_guards=False\): Shape mismatch"):
        ep.module(check_guards=False)(hookgrad.ones(2, 5))
