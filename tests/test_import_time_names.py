"""Names libraries touch when they are imported (torchvision does all of these at import):
ONNX symbolic registration, the quantization stubs of float models, TorchScript's
``BroadcastingList`` annotations, ``torch._dynamo.utils.is_compile_supported``,
``Tensor.is_quantized``; each behaves as PyTorch's does, compared where PyTorch runs."""
import pytest

import hookgrad


def _onnx_registration(L):
    sym = lambda g, x: x  # noqa: E731
    L.onnx.register_custom_op_symbolic("mydomain::myop", sym, 11)
    L.onnx.unregister_custom_op_symbolic("mydomain::myop", 11)
    errors = []
    for name in ("no_domain", "onnx::Add"):
        try:
            L.onnx.register_custom_op_symbolic(name, sym, 11)
        except Exception as e:  # noqa: BLE001 - the type and text are compared
            errors.append(f"{type(e).__name__}: {e}")
    return errors, L.onnx.is_in_onnx_export()


def test_onnx_symbolic_registration_checks_names_as_pytorch_and_export_says_missing():
    import hookgrad.onnx
    got = _onnx_registration(hookgrad)
    assert got[1] is False
    assert got[0][0].startswith("OnnxExporterError: Failed to register operator no_domain. "
                                "The symbolic name must match the format domain::name")
    assert got[0][1] == "ValueError: Failed to register operator onnx::Add. onnx domain cannot " \
                        "be modified."
    with pytest.raises(NotImplementedError, match="hookgrad does not implement torch.onnx.export"):
        hookgrad.onnx.export(hookgrad.nn.Linear(1, 1), (hookgrad.ones(1),), "m.onnx")
    from hookgrad.onnx.symbolic_helper import parse_args
    with pytest.raises(NotImplementedError, match="hookgrad does not implement torch.onnx export"):
        parse_args("v", "f")(lambda g, x, k: x)(None, 1, 2.0)
    torch = pytest.importorskip("torch")
    import torch.onnx
    assert got == _onnx_registration(torch)


def test_quant_stubs_pass_their_input_through_as_in_a_float_model():
    from hookgrad.ao.quantization import DeQuantStub, QuantStub
    model = hookgrad.nn.Sequential(QuantStub(), hookgrad.nn.Linear(3, 2), DeQuantStub())
    x = hookgrad.randn(4, 3)
    assert hookgrad.equal(model(x), model[1](x))
    assert [n for n, _ in model.named_children()] == ["0", "1", "2"]


def test_broadcasting_lists_subscript_to_none_and_compile_is_supported_everywhere():
    from hookgrad.jit.annotations import BroadcastingList2
    from hookgrad._dynamo.utils import is_compile_supported
    assert BroadcastingList2[int] is None
    assert is_compile_supported("cpu") and is_compile_supported("cuda")
    with pytest.raises(RuntimeError, match="Expected one of cpu"):
        is_compile_supported("nodevice")
    assert hookgrad.ones(2).is_quantized is False


def test_torch_home_and_the_progress_bar_model_zoo_reexports(monkeypatch, tmp_path):
    from hookgrad.hub import _get_torch_home
    from hookgrad.utils.model_zoo import tqdm
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    assert _get_torch_home() == str(tmp_path)
    assert hookgrad.hub.get_dir() == str(tmp_path / "hub")
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert _get_torch_home() == str(tmp_path / "cache" / "torch")
    tqdm_pkg = pytest.importorskip("tqdm")
    assert tqdm is tqdm_pkg.tqdm
