"""hookgrad.save / hookgrad.load: PyTorch's zip checkpoint format both ways, the
weights-only allowlist, map_location, corrupt files, and load_state_dict(assign=True)."""
import io
import pathlib
import pickle
import sys
import zipfile
from collections import OrderedDict

import jax
import numpy as np
import pytest

import hookgrad
import hookgrad.nn as nn
from hookgrad.serialization import (add_safe_globals, clear_safe_globals,
                                    get_safe_globals, get_unsafe_globals_in_checkpoint,
                                    safe_globals)
from tests.differential import needs_torch, torch


def _roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    hookgrad.save(obj, buf)
    buf.seek(0)
    return hookgrad.load(buf, **load_kwargs)


def _np(t):
    return np.asarray(t.detach()._data)


class Custom:
    """A class a weights-only load must refuse unless allowlisted."""

    def __init__(self, value=1):
        self.value = value


def _model():
    hookgrad.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3), nn.Linear(3, 1))


def _mlp():
    hookgrad.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))


# ---- hookgrad -> hookgrad
def test_roundtrip_dtypes_shapes_values():
    rng = np.random.default_rng(0)
    src = {name: hookgrad.tensor(rng.normal(size=(2, 3)) * 10, dtype=getattr(hookgrad, name))
           for name in ("float32", "float16", "bfloat16", "int32", "int16", "int8", "uint8",
                        )}
    src["bool"] = hookgrad.tensor([[True, False, True]])
    src["scalar"] = hookgrad.tensor(2.5)
    src["empty"] = hookgrad.zeros(0, 3)
    out = _roundtrip(src)
    assert list(out) == list(src)
    for k, t in src.items():
        assert type(out[k]) is hookgrad.Tensor and out[k].dtype is t.dtype, k
        assert out[k].shape == t.shape and not out[k].requires_grad
        np.testing.assert_array_equal(_np(out[k]), _np(t))


def test_roundtrip_parameters_keep_requires_grad_and_type():
    p = nn.Parameter(hookgrad.ones(2))
    frozen = nn.Parameter(hookgrad.ones(2), requires_grad=False)
    leaf = hookgrad.tensor([1.0, 2.0], requires_grad=True)
    nonleaf = leaf * 2  # saved as PyTorch saves it: a leaf that requires grad
    out = _roundtrip([p, frozen, leaf, nonleaf, p])
    assert [type(t).__name__ for t in out] == ["Parameter", "Parameter", "Tensor", "Tensor",
                                              "Parameter"]
    assert [t.requires_grad for t in out] == [True, False, True, True, True]
    assert out[3].is_leaf and _np(out[3]).tolist() == [2.0, 4.0]
    assert out[4] is out[0]  # the same object twice stays one object


def test_tensors_holding_one_array_share_one_storage():
    p = nn.Parameter(hookgrad.ones(3))
    buf = io.BytesIO()
    hookgrad.save({"p": p, "d": p.detach(), "other": hookgrad.ones(3)}, buf)
    names = zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()
    assert sorted(n for n in names if "/data/" in n) == ["archive/data/0", "archive/data/1"]
    assert {"archive/data.pkl", "archive/version", "archive/byteorder"} <= set(names)


def test_module_state_dict_roundtrip_into_fresh_model():
    src = _model()
    src.train()
    src(hookgrad.randn(4, 2))  # moves BatchNorm's running stats
    sd = src.state_dict()
    out = _roundtrip(sd)
    assert type(out) is OrderedDict and list(out) == list(sd)
    assert out._metadata == sd._metadata
    dst = _model()
    for p in dst.parameters():
        p.data.add_(1.0)
    assert repr(dst.load_state_dict(out)) == "<All keys matched successfully>"
    for k, v in dst.state_dict().items():
        np.testing.assert_array_equal(_np(v), _np(sd[k]), err_msg=k)
    x = hookgrad.randn(3, 2)
    src.eval(), dst.eval()
    np.testing.assert_array_equal(_np(dst(x)), _np(src(x)))


def _adam_steps(model, opt, n):
    for i in range(n):
        x = hookgrad.arange(4.0).reshape(2, 2) / (i + 1)
        opt.zero_grad()
        model(x).pow(2).sum().backward()
        opt.step()


def test_optimizer_state_dict_roundtrip_continues_identically():
    src = _mlp()
    opt = hookgrad.optim.Adam(src.parameters(), lr=0.01, betas=(0.8, 0.9))
    _adam_steps(src, opt, 3)
    ckpt = _roundtrip({"model": src.state_dict(), "opt": opt.state_dict(), "epoch": 3})
    assert ckpt["epoch"] == 3 and ckpt["opt"]["param_groups"][0]["betas"] == (0.8, 0.9)
    dst = _mlp()
    dst.load_state_dict(ckpt["model"])
    opt2 = hookgrad.optim.Adam(dst.parameters(), lr=0.5)
    opt2.load_state_dict(ckpt["opt"])
    assert opt2.param_groups[0]["lr"] == 0.01
    _adam_steps(src, opt, 2)
    _adam_steps(dst, opt2, 2)
    for (name, a), b in zip(src.named_parameters(), dst.parameters()):
        np.testing.assert_array_equal(_np(a), _np(b), err_msg=name)


def test_checkpoint_resumes_in_a_compiled_step():
    src = _mlp()
    opt = hookgrad.optim.Adam(src.parameters(), lr=0.01)
    _adam_steps(src, opt, 2)
    ckpt = _roundtrip({"model": src.state_dict(), "opt": opt.state_dict()})
    dst = _mlp()
    dst.load_state_dict(ckpt["model"])
    opt2 = hookgrad.optim.Adam(dst.parameters(), lr=0.01)
    opt2.load_state_dict(ckpt["opt"])
    x = hookgrad.arange(4.0).reshape(2, 2)

    def step(model, o):
        o.zero_grad()
        model(x).pow(2).sum().backward()
        o.step()

    compiled = hookgrad.compile(lambda: step(dst, opt2))
    for _ in range(2):
        step(src, opt)
        compiled()
    for (name, a), b in zip(src.named_parameters(), dst.parameters()):
        np.testing.assert_allclose(_np(b), _np(a), rtol=1e-5, atol=1e-6, err_msg=name)


def test_nested_containers_and_plain_values():
    src = {"list": [1, -7, 2 ** 70, 1.5, "s", None, True], "tuple": (1, (2, [3])),
           "bytes": b"\x00ab", "set": {1, 2}, "complex": 1 + 2j, "nested": {0: {"t": [
               hookgrad.ones(1)]}}, "size": hookgrad.Size([2, 3]),
           "device": hookgrad.device("cpu"), "dtype": hookgrad.float16}
    out = _roundtrip(src)
    assert out["list"] == src["list"] and out["tuple"] == src["tuple"]
    assert out["bytes"] == b"\x00ab" and out["set"] == {1, 2} and out["complex"] == 1 + 2j
    assert type(out["size"]) is hookgrad.Size and out["size"] == (2, 3)
    assert out["device"] == hookgrad.device("cpu") and out["dtype"] is hookgrad.float16
    assert _np(out["nested"][0]["t"][0]).tolist() == [1.0]


@needs_torch
def test_a_dtype_written_twice_reads_back_in_torch_and_hookgrad():
    # the second float32 is the same pickled global fetched from the memo
    src = [hookgrad.ones(2).dtype, hookgrad.zeros(3).dtype, hookgrad.int64, hookgrad.float32,
           hookgrad.ones(2), hookgrad.zeros(3)]
    buf = io.BytesIO()
    hookgrad.save(src, buf)
    buf.seek(0)
    want = torch.load(buf)
    assert want[:4] == [torch.float32, torch.float32, torch.int64, torch.float32]
    assert [t.tolist() for t in want[4:]] == [[1.0, 1.0], [0.0, 0.0, 0.0]]
    torch_buf = io.BytesIO()
    torch.save(want, torch_buf)
    torch_buf.seek(0)
    got = hookgrad.load(torch_buf)
    assert got[:4] == src[:4]
    assert [_np(t).tolist() for t in got[4:]] == [[1.0, 1.0], [0.0, 0.0, 0.0]]


def test_paths_and_pathlike(tmp_path):
    t = hookgrad.tensor([1.0, 2.0])
    hookgrad.save(t, str(tmp_path / "a.pt"))
    hookgrad.save(t, tmp_path / "model.ckpt.pt")
    assert zipfile.ZipFile(tmp_path / "model.ckpt.pt").namelist()[0] == "model.ckpt/data.pkl"
    with open(tmp_path / "a.pt", "rb") as f:
        assert _np(hookgrad.load(f)).tolist() == [1.0, 2.0]
    assert _np(hookgrad.load(tmp_path / "model.ckpt.pt")).tolist() == [1.0, 2.0]


def test_save_bad_arguments_and_unpicklable_leave_no_file(tmp_path):
    with pytest.raises(AttributeError, match="expected 'f' to be string, path, or a file-like "
                                             "object with a 'write' attribute"):
        hookgrad.save(hookgrad.ones(1), 3)
    with pytest.raises(NotImplementedError, match="zip format"):
        hookgrad.save(hookgrad.ones(1), io.BytesIO(), _use_new_zipfile_serialization=False)
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        hookgrad.save({"f": lambda: 0}, tmp_path / "x.pt")
    assert not (tmp_path / "x.pt").exists()


# ---- weights_only
def _custom_file(obj):
    buf = io.BytesIO()
    hookgrad.save(obj, buf)
    return buf.getvalue()


def test_weights_only_refuses_unlisted_global_then_allowlists():
    data = _custom_file({"c": Custom(5), "t": hookgrad.ones(1)})
    path = f"{__name__}.Custom"
    with pytest.raises(pickle.UnpicklingError,
                       match=rf"Weights only load failed(.|\n)*`weights_only` set to `False`"
                             rf"(.|\n)*Unsupported global: GLOBAL {path} was not an allowed "
                             rf"global by default"):
        hookgrad.load(io.BytesIO(data))
    assert hookgrad.load(io.BytesIO(data), weights_only=False)["c"].value == 5
    with safe_globals([Custom]):
        assert get_safe_globals() == [Custom]
        assert hookgrad.load(io.BytesIO(data))["c"].value == 5
    assert get_safe_globals() == []
    add_safe_globals([(Custom, path)])
    try:
        assert hookgrad.load(io.BytesIO(data))["c"].value == 5
    finally:
        clear_safe_globals()
    assert get_unsafe_globals_in_checkpoint(io.BytesIO(data)) == [path]


class _RunsCommand:
    def __reduce__(self):
        import os
        return (os.system, ("echo never",))


def test_weights_only_blocked_module_and_explicit_pickle_module():
    data = _custom_file(_RunsCommand())
    with pytest.raises(pickle.UnpicklingError, match=r"Weights only load failed(.|\n)*"
                                                     r"GLOBAL (os|posix)\.system whose module "
                                                     r"(os|posix) is blocked"):
        hookgrad.load(io.BytesIO(data))
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit "
                                           "pickle_module is specified"):
        hookgrad.load(io.BytesIO(data), pickle_module=pickle, weights_only=True)


@needs_torch
def test_weights_only_message_is_torchs():
    data = _custom_file(Custom())
    messages = []
    for load in (hookgrad.load, torch.load):
        with pytest.raises(pickle.UnpicklingError) as info:
            load(io.BytesIO(data))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


# ---- corrupt, truncated, foreign files
def _checkpoint_bytes():
    buf = io.BytesIO()
    hookgrad.save(_model().state_dict(), buf)
    return buf.getvalue()


def _corruptions():
    good = _checkpoint_bytes()
    flipped = bytearray(good)
    info = [i for i in zipfile.ZipFile(io.BytesIO(good)).infolist() if "/data/" in i.filename][0]
    data_start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    flipped[data_start] ^= 0xFF
    foreign = io.BytesIO()
    with zipfile.ZipFile(foreign, "w") as z:
        z.writestr("docs/readme.txt", "hello")
    return [
        (good[: len(good) // 2], RuntimeError, "PytorchStreamReader failed reading zip "
                                               "archive: .*corrupted"),
        (bytes(flipped), RuntimeError, r"PytorchStreamReader failed reading file data/0: "
                                       r"bad CRC"),
        (foreign.getvalue(), RuntimeError, "PytorchStreamReader failed locating file data.pkl"),
        (b"hello, not a checkpoint", RuntimeError, "not a ZIP archive"),
        (b"", EOFError, "empty"),
        (pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2) + b"junk", RuntimeError,
         "legacy format, which is not supported"),
    ]


@pytest.mark.parametrize("case", range(6))
def test_corrupt_file_raises_and_leaves_model_untouched(case):
    data, exc, match = _corruptions()[case]
    model = _model()
    before = {k: _np(v).copy() for k, v in model.state_dict().items()}
    with pytest.raises(exc, match=match):
        model.load_state_dict(hookgrad.load(io.BytesIO(data)))
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(_np(v), before[k], err_msg=k)


# ---- map_location
def _saved_on_cuda(monkeypatch):
    from hookgrad._serialization import _writer
    monkeypatch.setattr(_writer, "_location", lambda array: "cuda:0")
    data = _custom_file({"w": hookgrad.tensor([1.0, 2.0])})
    monkeypatch.undo()
    return data


def test_map_location_forms(monkeypatch):
    data = _saved_on_cuda(monkeypatch)
    cpu = jax.devices("cpu")[0]
    seen = []

    def to_cpu(storage, location):
        seen.append(location)
        return storage.cpu()

    for ml in ("cpu", hookgrad.device("cpu"), {"cuda:0": "cpu"}, to_cpu):
        w = hookgrad.load(io.BytesIO(data), map_location=ml)["w"]
        assert _np(w).tolist() == [1.0, 2.0] and w._data.devices() == {cpu}
    assert seen == ["cuda:0"]
    has_gpu = any(d.platform == "gpu" for d in jax.devices())
    if has_gpu:
        w = hookgrad.load(io.BytesIO(data))["w"]
        assert next(iter(w._data.devices())).platform == "gpu"
    else:
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA "
                                               "device but torch.cuda.is_available"):
            hookgrad.load(io.BytesIO(data))
        # a callable returning None falls back to the saved location, as in PyTorch
        with pytest.raises(RuntimeError, match="on a CUDA device"):
            hookgrad.load(io.BytesIO(data), map_location=lambda s, loc: None)


# ---- hookgrad's dtype rules without/with JAX's x64 mode
def _int64_float64_file():
    with jax.enable_x64(True):
        return _custom_file({"i": hookgrad.tensor([1, -2], dtype=hookgrad.int64),
                             "f": hookgrad.tensor([0.1, 2.0], dtype=hookgrad.float64),
                             "big": hookgrad.tensor([2 ** 40], dtype=hookgrad.int64)})


def test_64bit_tensors_follow_hookgrad_dtype_rules():
    data = _int64_float64_file()
    with jax.enable_x64(True):
        out = hookgrad.load(io.BytesIO(data))
        assert out["i"].dtype is hookgrad.int64 and out["f"].dtype is hookgrad.float64
        assert _np(out["f"]).tolist() == [0.1, 2.0] and _np(out["big"]).tolist() == [2 ** 40]
    with jax.enable_x64(False):
        with pytest.raises(RuntimeError, match="int64 tensor in the checkpoint holds values "
                                               "outside int32's range"):
            hookgrad.load(io.BytesIO(data))
        small = _custom_file({"i": hookgrad.tensor([1, -2])})
        assert hookgrad.load(io.BytesIO(small))["i"].dtype is hookgrad.int32


# ---- Module.load_state_dict(assign=True)
def test_load_state_dict_assign_replaces_params_keeping_requires_grad():
    model = _model()
    model[0].bias.requires_grad_(False)
    loaded = _roundtrip(_model().state_dict())
    loaded["0.weight"] = nn.Parameter(loaded["0.weight"], requires_grad=False)
    model.load_state_dict(loaded, assign=True)
    assert model[0].weight is loaded["0.weight"] and model[0].weight.requires_grad
    assert isinstance(model[0].bias, nn.Parameter) and not model[0].bias.requires_grad
    assert model[0].bias._data is loaded["0.bias"]._data  # put in place, not copied
    assert model[1].running_mean is loaded["1.running_mean"]
    assert [n for n, _ in model.named_buffers()] == ["1.running_mean", "1.running_var",
                                                     "1.num_batches_tracked"]
    model(hookgrad.ones(2, 2)).sum().backward()
    assert model[0].weight.grad is not None and model[0].bias.grad is None


# ---- PyTorch -> hookgrad
@needs_torch
def test_torch_save_loads_in_hookgrad_without_torch(monkeypatch):
    base = torch.arange(24.0).reshape(4, 6)
    src = OrderedDict(
        base=base, view=base[1:3, ::2], t=base.t(), expanded=torch.ones(3, 1).expand(3, 4),
        i64=torch.tensor([1, -5]), f64=torch.tensor([0.25, 1.5], dtype=torch.float64),
        bool=torch.tensor([True, False]), half=torch.tensor([1.5, -2.0], dtype=torch.float16),
        bf16=torch.tensor([1.5, -2.0], dtype=torch.bfloat16),
        c64=torch.tensor([1 + 2j], dtype=torch.complex64), conj=torch.tensor([1 + 2j]).conj(),
        param=torch.nn.Parameter(torch.ones(2)),
        frozen=torch.nn.Parameter(torch.ones(2), requires_grad=False),
        leaf=torch.ones(2, requires_grad=True), scalar=torch.tensor(3.0), empty=torch.zeros(0, 2),
        plain={"size": torch.Size([2, 3]), "dtype": torch.float16, "device": torch.device("cpu"),
               "list": [1, 2.5, "x", None, (1, 2)]})
    buf = io.BytesIO()
    torch.save(src, buf)
    buf.seek(0)
    monkeypatch.setitem(sys.modules, "torch", None)  # any `import torch` now fails
    with jax.enable_x64(False):
        out = hookgrad.load(buf)
    monkeypatch.undo()
    assert type(out) is OrderedDict and list(out) == list(src)
    want_dtype = {"i64": "int32", "f64": "float32", "bool": "bool", "half": "float16",
                  "bf16": "bfloat16", "c64": "complex64", "conj": "complex64"}
    for k, v in src.items():
        if k == "plain":
            continue
        got = out[k]
        assert got.dtype is getattr(hookgrad, want_dtype.get(k, "float32")), k
        assert tuple(got.shape) == tuple(v.shape), k
        assert got.requires_grad == v.requires_grad, k
        assert isinstance(got, nn.Parameter) == isinstance(v, torch.nn.Parameter), k
        want = v.detach().resolve_conj().to(torch.complex128 if v.is_complex()
                                            else torch.float64).numpy()
        np.testing.assert_array_equal(_np(got).astype(want.dtype), want, err_msg=k)
    plain = out["plain"]
    assert type(plain["size"]) is hookgrad.Size and plain["size"] == (2, 3)
    assert plain["dtype"] is hookgrad.float16 and plain["device"] == hookgrad.device("cpu")
    assert plain["list"] == [1, 2.5, "x", None, (1, 2)]


@needs_torch
def test_torch_model_state_dict_loads_into_hookgrad_model():
    tm = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3),
                             torch.nn.Linear(3, 1))
    tm.train()
    tm(torch.randn(4, 2))
    buf = io.BytesIO()
    torch.save(tm.state_dict(), buf)
    buf.seek(0)
    hm = _model()
    hm.load_state_dict(hookgrad.load(buf))
    tm.eval(), hm.eval()
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    np.testing.assert_allclose(_np(hm(hookgrad.tensor(x))),
                               tm(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


@needs_torch
def test_torch_uint16_tensor_is_a_clear_error():
    buf = io.BytesIO()
    torch.save({"u": torch.ones(2, dtype=torch.uint16)}, buf)
    buf.seek(0)
    with pytest.raises(RuntimeError, match="dtype torch.uint16, which hookgrad does not have"):
        hookgrad.load(buf)


# ---- hookgrad -> PyTorch
@needs_torch
def test_hookgrad_save_loads_in_torch_weights_only():
    model = _model()
    p = nn.Parameter(hookgrad.tensor([1.0, 2.0]))
    src = {"model": model.state_dict(), "p": p, "d": p.detach(),
           "dtypes": [hookgrad.tensor([1, 2], dtype=d) for d in (
               hookgrad.float16, hookgrad.bfloat16, hookgrad.int8, hookgrad.uint8,
               hookgrad.bool)],
           "misc": (hookgrad.Size([2]), hookgrad.float32, hookgrad.device("cpu"), b"x", 1 + 1j)}
    buf = io.BytesIO()
    hookgrad.save(src, buf)
    buf.seek(0)
    out = torch.load(buf, weights_only=True)
    assert type(out["model"]) is OrderedDict and list(out["model"]) == list(src["model"])
    assert out["model"]._metadata == src["model"]._metadata
    for k, v in src["model"].items():
        np.testing.assert_array_equal(out["model"][k].numpy(), _np(v), err_msg=k)
    assert isinstance(out["p"], torch.nn.Parameter) and out["p"].requires_grad
    assert out["d"].untyped_storage().data_ptr() == out["p"].untyped_storage().data_ptr()
    assert [str(t.dtype) for t in out["dtypes"]] == [
        "torch.float16", "torch.bfloat16", "torch.int8", "torch.uint8", "torch.bool"]
    assert [t.tolist() for t in out["dtypes"]] == [[1, 2]] * 4 + [[True, True]]
    assert out["misc"] == (torch.Size([2]), torch.float32, torch.device("cpu"), b"x", 1 + 1j)


@needs_torch
def test_hookgrad_optimizer_checkpoint_continues_in_torch():
    model = _mlp()
    opt = hookgrad.optim.Adam(model.parameters(), lr=0.01, betas=(0.8, 0.9))
    _adam_steps(model, opt, 2)
    buf = io.BytesIO()
    hookgrad.save({"model": model.state_dict(), "opt": opt.state_dict()}, buf)
    buf.seek(0)
    out = torch.load(buf, weights_only=True)
    tm = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1))
    tm.load_state_dict(out["model"])
    topt = torch.optim.Adam(tm.parameters(), lr=0.5)
    topt.load_state_dict(out["opt"])
    assert topt.state_dict()["state"][0]["step"].item() == 2.0
    x = np.arange(4, dtype=np.float32).reshape(2, 2) / 3
    for m, o, L in ((model, opt, hookgrad), (tm, topt, torch)):
        o.zero_grad()
        m(L.tensor(x)).pow(2).sum().backward()
        o.step()
    for (name, a), b in zip(model.named_parameters(), tm.parameters()):
        np.testing.assert_allclose(_np(a), b.detach().numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=name)


@needs_torch
def test_hookgrad_file_on_disk_loads_in_torch(tmp_path):
    path = tmp_path / "w.pt"
    hookgrad.save({"w": hookgrad.arange(6.0).reshape(2, 3)}, path)
    out = torch.load(path, weights_only=True, mmap=True)  # mmap needs the aligned records
    assert out["w"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert pathlib.Path(path).stat().st_size < 4096


@needs_torch
def test_pickled_torch_module_is_refused_with_the_fix():
    buf = io.BytesIO()
    torch.save(torch.nn.Linear(2, 2), buf)
    data = buf.getvalue()
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed(.|\n)*GLOBAL "
                                                     "torch.nn.modules.linear.Linear was not an "
                                                     "allowed global"):
        hookgrad.load(io.BytesIO(data))
    with pytest.raises(pickle.UnpicklingError, match=r"cannot rebuild torch.nn.modules.linear."
                                                     r"Linear(.|\n)*model.state_dict\(\)"):
        hookgrad.load(io.BytesIO(data), weights_only=False)
