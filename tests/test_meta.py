"""The meta device: Tensors with a shape and a dtype and no data; ops propagate shapes and
dtypes without computing; ``to_empty`` and ``load_state_dict(assign=True)`` give a meta
module real parameters."""
import contextlib
import importlib.util
import json
import warnings

import pytest

import hookgrad
from hookgrad import nn

from ._torch_hidden import run_with_torch_hidden
from .differential import py, raises, same_as_torch


@pytest.mark.filterwarnings("ignore:To copy construct from a tensor")
def test_ops_on_meta_tensors_give_shapes_dtypes_and_nodes():
    def run(L):
        F = L.nn.functional
        x = L.empty(2, 3, device="meta", requires_grad=True)
        w = L.empty(4, 3, device="meta")
        outs = {"linear": F.linear(x, w), "view": x.view(6), "t": x.t(), "index": x[0, 1:],
                "cat": L.cat([x, x]), "softmax": F.softmax(x, -1), "sum": x.sum(),
                "half": x.to(L.float16), "cmp": x > 0, "matmul": x @ w.t(),
                "contiguous": x.transpose(0, 1).contiguous(),
                "like": L.zeros_like(x), "new": x.new_ones(5), "tensor": L.tensor(x),
                "clone": x.clone(), "detach": x.detach(), "data": x.data}
        return {k: [str(v.device), list(v.shape), str(v.dtype).split(".")[1], v.requires_grad]
                for k, v in outs.items()}
    got = same_as_torch(run)
    assert got["linear"] == ["meta", [2, 4], "float32", True]
    assert got["cmp"] == ["meta", [2, 3], "bool", False]


def test_meta_tensors_record_their_graph():
    x = hookgrad.ones(2, 3, requires_grad=True).to("meta")
    y = (x * 2).sum()
    assert x.is_meta and y.is_meta
    assert type(x.grad_fn).__name__ == "ToCopyBackward0"
    assert y.grad_fn.name() == "SumBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "MulBackward0"


def test_backward_from_a_meta_tensor_says_it_is_not_implemented():
    m = hookgrad.empty(2, 3, device="meta", requires_grad=True)
    for run in (lambda: (m * m).sum().backward(),
                lambda: hookgrad.autograd.grad((m * 2).sum(), m),
                lambda: (m * 2).backward(hookgrad.ones(2, 3, device="meta"))):
        with pytest.raises(NotImplementedError,
                           match="hookgrad does not implement backward through meta Tensors"):
            run()
    assert m.grad is None


@pytest.mark.filterwarnings("ignore:To copy construct from a tensor")
def test_reading_values_raises_pytorchs_errors():
    def run(L):
        m = L.empty(3, device="meta")
        return [raises(lambda: m.tolist()), raises(lambda: m.cpu()),
                raises(lambda: L.tensor(m, device="cpu")),
                raises(lambda: m.to("cpu")), raises(lambda: m.numpy()),
                raises(lambda: m[0].item()), raises(lambda: bool(m[0]))]
    got = same_as_torch(run)
    assert got[0] == {"raises": "NotImplementedError",
                      "message": "Cannot copy out of meta tensor; no data!"}
    with pytest.raises(RuntimeError, match="Tensor.item\\(\\) cannot be called on meta tensors"):
        hookgrad.empty(1, device="meta").item()
    with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
        hookgrad.empty(1, device="meta").numpy()


def test_repr():
    def run(L):
        return [repr(L.empty(2, device="meta")),
                repr(L.empty(2, 3, dtype=L.int64, device="meta")),
                repr(L.ones(2, device="meta", requires_grad=True) * 2)]
    assert same_as_torch(lambda L: [r.replace(L.__name__ + ".", "") for r in run(L)]) == [
        "tensor(..., device='meta', size=(2,))",
        "tensor(..., device='meta', size=(2, 3), dtype=int64)",
        "tensor(..., device='meta', size=(2,), grad_fn=<MulBackward0>)"]


def test_in_place_ops_and_init_keep_meta_and_count_versions():
    def run(L):
        t = L.zeros(2, 3, device="meta")
        t.add_(1)
        t.mul_(L.ones(3, device="meta"))
        L.nn.init.normal_(t)
        t[0] = 5.0
        return [str(t.device), list(t.shape), t._version > 0,
                raises(lambda: L.zeros(2, 3).copy_(L.ones(2, 3, device="meta")))]
    got = same_as_torch(run)
    assert got == ["meta", [2, 3], True, {"raises": "NotImplementedError",
                                          "message": "Cannot copy out of meta tensor; no data!"}]


def _mlp(L):
    return L.nn.Sequential(L.nn.Linear(3, 4), L.nn.LayerNorm(4), L.nn.BatchNorm1d(4),
                           L.nn.Embedding(5, 3))


def test_module_built_under_meta_then_to_empty():
    def run(L):
        with L.device("meta"):
            m = _mlp(L)
        ids = {k: id(p) for k, p in m.named_parameters()}
        m[0].bias.requires_grad_(False)
        err = raises(lambda: m.to("cpu"))
        m.to_empty(device="cpu")
        return {"err": err,
                "same_objects": all(id(p) == ids[k] for k, p in m.named_parameters()),
                "devices": sorted({str(t.device) for t in [*m.parameters(), *m.buffers()]}),
                "kinds": sorted({type(p).__name__ for p in m.parameters()}),
                "requires_grad": [p.requires_grad for p in m.parameters()]}
    got = same_as_torch(run)
    assert got["err"]["message"].endswith(
        "Please use torch.nn.Module.to_empty() instead of torch.nn.Module.to() when moving "
        "module from meta to a different device.")
    assert not got["same_objects"] and got["devices"] == ["cpu"] and got["kinds"] == ["Parameter"]
    assert got["requires_grad"][1] is False


def test_load_state_dict_assign_materialises_a_meta_module():
    def run(L):
        L.manual_seed(0)
        src = _mlp(L)
        with L.device("meta"):
            m = _mlp(L)
        m[0].weight.requires_grad_(False)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m.load_state_dict(src.state_dict())  # copying into meta: a no-op, with a warning
        still_meta = m[0].weight.is_meta
        m.load_state_dict(src.state_dict(), assign=True)
        x = L.randn(2, 3)
        return {"warned": [str(w.message).split(":")[0] for w in caught][:2],
                "still_meta": still_meta,
                "kinds": sorted({type(p).__name__ for p in m.parameters()}),
                "requires_grad": [p.requires_grad for p in m.parameters()],
                "equal": py(m[:3](x)) == py(src[:3](x)),
                "buffers": [b.is_meta for b in m.buffers()]}
    got = same_as_torch(run)
    assert got["warned"] == ["for 0.weight", "for 0.bias"]
    assert got["still_meta"] and got["equal"] and got["kinds"] == ["Parameter"]
    assert got["requires_grad"][0] is False and all(got["requires_grad"][1:])
    assert got["buffers"] == [False, False, False]


def test_the_copy_into_meta_warning_names_the_callers_line():
    src = nn.Linear(2, 2)
    with hookgrad.device("meta"):
        m = nn.Sequential(nn.Linear(2, 2))
    with pytest.warns(UserWarning, match="copying from a non-meta parameter") as caught:
        m.load_state_dict({"0." + k: v for k, v in src.state_dict().items()})
    assert {w.filename for w in caught} == {__file__}


def test_layers_build_and_run_on_meta():
    def run(L):
        nn = L.nn
        with L.device("meta"):
            cases = [(nn.Conv2d(3, 4, 3), (1, 3, 8, 8)), (nn.BatchNorm2d(3), (2, 3, 4, 4)),
                     (nn.InstanceNorm1d(4, track_running_stats=True), (2, 4, 5)),
                     (nn.LSTM(4, 5, 2, batch_first=True), (2, 3, 4)),
                     (nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), (2, 5, 8)),
                     (nn.GroupNorm(2, 4), (2, 4, 3)), (nn.MaxPool2d(2), (1, 3, 4, 4)),
                     (nn.Embedding(10, 3, padding_idx=0), None)]
            out = []
            for m, shape in cases:
                y = m(L.empty(shape) if shape else L.tensor([[1, 0]]))
                y = y[0] if isinstance(y, tuple) else y
                out.append([type(m).__name__, str(y.device), list(y.shape),
                            sorted({t.device.type for t in [*m.parameters(), *m.buffers()]})])
        return out
    got = same_as_torch(run)
    assert {tuple(o[3]) for o in got} == {("meta",), ()}


def test_skip_init():
    def run(L):
        m = L.nn.utils.skip_init(L.nn.Linear, 5, 2, bias=True)
        errors = [raises(lambda: L.nn.utils.skip_init(L.nn.ReLU)),
                  raises(lambda: L.nn.utils.skip_init(int))]
        return [str(m.weight.device), list(m.weight.shape), type(m.bias).__name__,
                m.weight.requires_grad, errors]
    got = same_as_torch(run)
    assert got[:4] == ["cpu", [2, 5], "Parameter", True]
    assert got[4][0] == {"raises": "RuntimeError",
                         "message": "Module must support a 'device' arg to skip initialization"}


def test_meta_random_factories_draw_nothing():
    hookgrad.manual_seed(0)
    a = hookgrad.rand(3)
    hookgrad.manual_seed(0)
    hookgrad.randn(1000, device="meta")
    with hookgrad.device("meta"):
        nn.Linear(100, 100)
    assert hookgrad.equal(hookgrad.rand(3), a)


@contextlib.contextmanager
def _init_empty_weights(L):
    """accelerate's ``init_empty_weights()`` (1.15, ``include_buffers=False``), as it is
    written: ``Module.register_parameter`` patched to move each new parameter to meta."""
    old = L.nn.Module.register_parameter

    def register_empty_parameter(module, name, param):
        old(module, name, param)
        if param is not None:
            param_cls = type(module._parameters[name])
            kwargs = module._parameters[name].__dict__
            kwargs["requires_grad"] = param.requires_grad
            module._parameters[name] = param_cls(module._parameters[name].to("meta"), **kwargs)

    L.nn.Module.register_parameter = register_empty_parameter
    try:
        yield
    finally:
        L.nn.Module.register_parameter = old


def _custom(L):
    nn = L.nn

    class Block(nn.Module):  # the ways a Hugging Face model makes its tensors
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(L.ones(4))
            self.frozen = nn.Parameter(L.zeros(4), requires_grad=False)
            self.register_buffer("position_ids", L.arange(6).expand((1, -1)), persistent=False)
            self.wte = nn.Embedding(10, 4)
            self.ln = nn.LayerNorm(4)
            self.proj = nn.Linear(4, 4)

        def forward(self, ids):
            return self.proj(self.ln(self.wte(ids))) * self.scale + self.frozen

    return Block()


def test_accelerates_init_empty_weights_pattern():
    def run(L):
        L.manual_seed(0)
        src = _custom(L)
        with _init_empty_weights(L):
            m = _custom(L)
        made = {k: [p.is_meta, type(p).__name__, p.requires_grad]
                for k, p in m.named_parameters()}
        m.load_state_dict(src.state_dict(), assign=True)
        ids = L.tensor([[1, 2, 3]])
        return {"made": made, "buffer_meta": m.position_ids.is_meta,
                "after": [list(k) for k in {(p.is_meta, type(p).__name__) for p in m.parameters()}],
                "frozen": m.frozen.requires_grad, "equal": py(m(ids)) == py(src(ids))}
    got = same_as_torch(run)
    assert got["made"]["scale"] == [True, "Parameter", True]
    assert got["made"]["frozen"] == [True, "Parameter", False]
    assert got["buffer_meta"] is False and got["after"] == [[False, "Parameter"]]
    assert got["equal"] and got["frozen"] is False


def test_a_model_built_under_a_meta_device_block():
    def run(L):
        with L.device("meta"):
            m = _custom(L)
        # what an _init_weights does on the meta device: nothing, without errors
        L.nn.init.normal_(m.proj.weight.data, mean=0.0, std=0.02)
        m.proj.bias.data.zero_()
        m.wte.weight.data[2].zero_()
        m.ln.weight.data.fill_(1.0)
        out = m(L.tensor([[1, 2]]))
        pos = m.wte(m.position_ids)
        return {"params": sorted({str(p.device) for p in m.parameters()}),
                "buffers": str(m.position_ids.device), "out": [str(out.device), list(out.shape)],
                "pos": list(pos.shape), "strides": [m.proj.weight.stride(), m.scale.stride()],
                "nbytes": m.proj.weight.untyped_storage().nbytes()}
    got = same_as_torch(run)
    assert got["params"] == ["meta"] and got["out"] == ["meta", [1, 2, 4]]


def test_transformers_builds_on_meta_and_round_trips_through_safetensors():
    if importlib.util.find_spec("transformers") is None:
        pytest.skip("transformers is not installed")
    # torchvision hidden too: its C extension is built for PyTorch (the torchvision work in
    # issue 30 makes it import under hookgrad)
    proc = run_with_torch_hidden("""
        import json, os, tempfile
        import hookgrad.as_torch
        torch = hookgrad.as_torch.install()
        import transformers as tf
        small = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                     num_attention_heads=4, vocab_size=100, max_position_embeddings=64)
        models = {  # GPT-2: tied weights; Llama: rotary buffers; BERT: a padding_idx row
            "gpt2": (tf.GPT2LMHeadModel, tf.GPT2Config(n_layer=2, n_embd=32, n_head=2,
                     vocab_size=100, n_positions=64, bos_token_id=0, eos_token_id=0)),
            "llama": (tf.LlamaForCausalLM, tf.LlamaConfig(num_key_value_heads=2, **small)),
            "bert": (tf.BertForSequenceClassification, tf.BertConfig(**small))}
        out = {}
        for name, (cls, cfg) in models.items():
            with torch.device("meta"):
                empty = cls(cfg)
            torch.manual_seed(0)
            src = cls(cfg).eval()
            with tempfile.TemporaryDirectory() as d:
                src.save_pretrained(d)
                files = sorted(os.listdir(d))
                back = cls.from_pretrained(d).eval()
            ids = torch.tensor([[1, 2, 3, 4]])
            a, b = src.state_dict(), back.state_dict()
            out[name] = {
                "meta": sorted({str(t.device) for t in [*empty.parameters(), *empty.buffers()]}),
                "files": files,
                "devices": sorted({str(t.device) for t in [*back.parameters(), *back.buffers()]}),
                "same_state": sorted(a) == sorted(b) and all(torch.equal(a[k], b[k]) for k in a),
                "same_buffers": all(torch.equal(x, y) for x, y in zip(src.buffers(), back.buffers())),
                "same_logits": torch.allclose(src(ids).logits, back(ids).logits, atol=1e-6)}
        print(json.dumps(out))
    """, also_hide=("torchvision", "torchaudio"))
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    for name in ("gpt2", "llama", "bert"):
        assert got[name] == {"meta": ["meta"], "devices": ["cpu"], "same_state": True,
                             "same_buffers": True, "same_logits": True,
                             "files": ["config.json", "generation_config.json",
                                       "model.safetensors"]} | (
            {"files": ["config.json", "model.safetensors"]} if name == "bert" else {}), name
