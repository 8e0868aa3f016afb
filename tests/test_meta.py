"""The meta device: Tensors with a shape and a dtype and no data; ops propagate shapes and
dtypes without computing; ``to_empty`` and ``load_state_dict(assign=True)`` give a meta
module real parameters."""
import warnings

import pytest

import hookgrad
from hookgrad import nn

from .differential import py, raises, same_as_torch


def test_ops_on_meta_tensors_give_shapes_dtypes_and_nodes():
    def run(L):
        F = L.nn.functional
        x = L.empty(2, 3, device="meta", requires_grad=True)
        w = L.empty(4, 3, device="meta")
        outs = {"linear": F.linear(x, w), "view": x.view(6), "t": x.t(), "index": x[0, 1:],
                "cat": L.cat([x, x]), "softmax": F.softmax(x, -1), "sum": x.sum(),
                "half": x.to(L.float16), "cmp": x > 0, "matmul": x @ w.t(),
                "contiguous": x.transpose(0, 1).contiguous(),
                "like": L.zeros_like(x), "new": x.new_ones(5)}
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


def test_reading_values_raises_pytorchs_errors():
    def run(L):
        m = L.empty(3, device="meta")
        return [raises(lambda: m.tolist()), raises(lambda: m.cpu()),
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


def test_meta_random_factories_draw_nothing():
    hookgrad.manual_seed(0)
    a = hookgrad.rand(3)
    hookgrad.manual_seed(0)
    hookgrad.randn(1000, device="meta")
    with hookgrad.device("meta"):
        nn.Linear(100, 100)
    assert hookgrad.equal(hookgrad.rand(3), a)
