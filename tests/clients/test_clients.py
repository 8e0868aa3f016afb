"""Client libraries' released code, unmodified, with ``torch`` bound to hookgrad.

Each scenario module (``*_cases.py``) builds a tiny model whose weights come from NumPy and
runs the library on it. It runs in a subprocess twice: with real PyTorch and with every
``torch.X`` bound to ``hookgrad.X`` (``hookgrad.as_torch``); the results must agree. Without PyTorch
the hookgrad run still runs and its results are checked for shape and finiteness. A test
skips when its library is not installed (``.ci/run`` installs them pinned).
"""
import importlib.util
import json
import math
import os
import subprocess
import sys

import pytest

from tests._torch_hidden import run_with_torch_hidden

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HAVE_TORCH = importlib.util.find_spec("torch") is not None


def _installed(*names):
    missing = [n for n in names if importlib.util.find_spec(n) is None]
    return pytest.mark.skipif(bool(missing), reason=f"not installed: {', '.join(missing)}")


# the scenarios one run serves, per (library, module) that several tests run: their first
# test runs them all in one subprocess and the others read its results (a run costs
# seconds of CPU to import torch or hookgrad and the client library before its scenarios)
SHARED = {("hookgrad", "torchviz_cases"): ["make_dot_conv", "make_dot_params",
                                           "make_dot_show_saved"],
          ("torch", "torchviz_cases"): ["make_dot_conv", "make_dot_params", "make_dot_show_saved"],
          ("hookgrad", "torchvision_cases"): ["resnet18", "efficientnet_b0", "vit_small", "ops"]}
_RESULTS = {}  # (lib, module) -> {function: result} of its shared run


def run(lib, module, functions, hide=()):
    """{function: result} of ``tests/clients/<module>.py`` run under ``lib``; ``hide``:
    packages (``"torch"``, ...) the run cannot see, as where they are not installed. A
    module in ``SHARED`` runs its scenarios once, the first time one is asked for."""
    shared = SHARED.get((lib, module))
    if hide or shared is None or not set(functions) <= set(shared):
        return _run(lib, module, functions, hide)
    if (lib, module) not in _RESULTS:
        _RESULTS[lib, module] = _run(lib, module, shared)
    return {name: _RESULTS[lib, module][name] for name in functions}


def _run(lib, module, functions, hide=()):
    """One subprocess running ``functions`` of ``module`` under ``lib`` (``run``).

    hookgrad runs with tiered execution on, as users run it (the suite turns it off,
    tests/conftest.py; results are compared to a tolerance): an op met once runs in NumPy,
    uncompiled (with an empty XLA cache the transformers and torchvision runs cost ~97 s of
    CPU with it off, ~46 s on)."""
    argv = [lib, "tests.clients." + module, ",".join(functions)]
    env = dict(os.environ, HOOKGRAD_TIERED="1")
    if hide:
        proc = run_with_torch_hidden(
            f"import sys; sys.argv[1:] = {argv!r}\n"
            "import runpy; runpy.run_module('tests.clients._run', run_name='__main__')",
            also_hide=hide, timeout=900, env=env)
    else:
        proc = subprocess.run([sys.executable, "-m", "tests.clients._run", *argv], cwd=ROOT,
                              capture_output=True, text=True, timeout=900, env=env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode or not lines:
        raise AssertionError(f"{lib} run of {module} failed:\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT "):])


def _close(a, b, tol, path="result"):
    if isinstance(a, dict) and isinstance(b, dict):
        assert sorted(a) == sorted(b), f"{path}: keys {sorted(a)} != {sorted(b)}"
        for k in a:
            _close(a[k], b[k], tol, f"{path}[{k!r}]")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, tol, f"{path}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert abs(a - b) <= tol * (1 + abs(b)), f"{path}: {a} != {b}"
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def _finite(x):
    if isinstance(x, dict):
        return all(_finite(v) for v in x.values())
    if isinstance(x, list):
        return all(_finite(v) for v in x)
    return not isinstance(x, float) or math.isfinite(x)


def check(module, functions, tol=1e-4, hide=()):
    """Run the scenarios under hookgrad (with the packages ``hide`` names hidden) and
    PyTorch when installed, and compare."""
    got = run("hookgrad", module, functions, hide)
    errors = {k: v["error"] for k, v in got.items() if isinstance(v, dict) and "error" in v}
    assert not errors, "\n".join(f"{k}:\n{v}" for k, v in errors.items())
    assert _finite(got)
    if HAVE_TORCH:
        want = run("torch", module, functions)
        for name in functions:
            assert "error" not in want[name], want[name]
            _close(got[name], want[name], tol, name)
    return got


@_installed("captum", "matplotlib")
def test_captum_attributions_match_pytorch():
    got = check("captum_cases", ["saliency", "integrated_gradients", "layer_grad_cam",
                                 "layer_activation", "deep_lift", "guided_backprop"])
    assert len(got["saliency"]) == 2 and len(got["saliency"][0][0]) == 8  # (N, C, H, W)
    assert any(v != 0 for row in got["layer_grad_cam"][0][0] for v in row)


@_installed("transformer_lens", "einops", "jaxtyping")
def test_transformer_lens_hooks_match_pytorch():
    got = check("transformer_lens_cases", ["run_with_hooks", "run_with_cache_backward",
                                           "backward_hook_rewrites_gradient"])
    hooks = got["run_with_hooks"]
    assert hooks["name"] == "hook_mlp_out" and hooks["out"] != hooks["clean"]
    cache = got["run_with_cache_backward"]["cache_bwd"]
    assert {"hook_embed", "hook_embed_grad", "hook_resid_grad"} <= set(cache)
    rewrite = got["backward_hook_rewrites_gradient"]
    assert rewrite["calls"] == ["hook_mlp_out"] and rewrite["doubled"] != rewrite["plain"]


@_installed("pytorch_grad_cam", "cv2", "ttach", "sklearn")
def test_grad_cam_matches_pytorch():
    got = check("grad_cam_cases", ["grad_cam", "grad_cam_plus_plus"])
    for name in ("grad_cam", "grad_cam_plus_plus"):
        cam = got[name]["cam"]
        assert len(cam) == 2 and max(max(row) for row in cam[0]) == pytest.approx(1.0, abs=1e-5)


@_installed("torchviz", "graphviz")
def test_torchviz_draws_pytorchs_graph_of_a_cnn():
    got = check("torchviz_cases", ["make_dot_conv"], tol=0)
    assert "ConvolutionBackward0" in got["make_dot_conv"]["labels"]


@pytest.mark.skipif(not HAVE_TORCH, reason="compares with PyTorch's graph")
@_installed("torchviz", "graphviz")
def test_torchviz_linear_and_saved_tensors_match_pytorch():
    check("torchviz_cases", ["make_dot_params", "make_dot_show_saved"], tol=0)


@_installed("torchvision", "PIL")
def test_torchvision_models_forward_backward_and_hooks_match_pytorch():
    got = check("torchvision_cases", ["resnet18", "efficientnet_b0", "vit_small"], tol=2e-3)
    for name, fwd, bwd in [("resnet18", "BasicBlock", "BasicBlock"),
                           ("efficientnet_b0", "Sequential", "MBConv"),
                           ("vit_small", "EncoderBlock", "MLPBlock")]:
        calls = got[name]["calls"]
        assert [c[:2] for c in calls] == [["forward", fwd], ["backward", bwd]], name
        assert all(v > 0 for v in calls[1][3]), name  # the block's output got a gradient


@pytest.mark.slow
@_installed("torchvision", "PIL")
def test_torchvision_vit_b_16_at_full_size_matches_pytorch():
    check("torchvision_cases", ["vit_b_16"], tol=2e-3)


@_installed("torchvision", "PIL")
def test_torchvision_ops_run_on_hookgrads_nms_and_roi_align():
    """torchvision.ops.nms/roi_align, through torch.ops.torchvision and the backward
    torchvision registers, against the NumPy transcriptions of its kernels."""
    import numpy as np
    from tests.ops.test_vision import nms_reference, roi_align_reference
    got = run("hookgrad", "torchvision_cases", ["ops"])["ops"]
    assert "error" not in got, got.get("error")
    boxes, scores = np.array(got["boxes"]), np.array(got["scores"])
    assert got["keep"] == nms_reference(boxes, scores, 0.3)
    feats, rois = np.array(got["feats"]), np.array(got["rois"])
    want = roi_align_reference(feats, rois, 0.9, 3, 2, -1, True)
    np.testing.assert_allclose(got["pooled"], want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["grad"], roi_align_reference(feats, rois, 0.9, 3, 2, -1, True,
                                                                grad=2 * want),
                               rtol=1e-4, atol=1e-5)
    assert got["node"] == "GeneratedBackwardFor_torchvision_roi_align_defaultBackward"


def test_a_plain_pytorch_training_script_runs_with_only_the_import_changed():
    """tests/clients/training_script.py (docs/features.md's "Porting a script")."""
    got = run("hookgrad", "training_script", ["unshuffled", "unshuffled_eager", "shuffled"])
    errors = {k: v["error"] for k, v in got.items() if "error" in v}
    assert not errors, "\n".join(f"{k}:\n{v}" for k, v in errors.items())
    compiled, shuffled = got["unshuffled"], got["shuffled"]
    assert compiled["keys"][0] == "_orig_mod.conv.weight"  # torch.compile's wrapper, as PyTorch
    assert compiled["steps"] == 12 and compiled["batches"] == 4
    assert compiled["grad_norm_calls"] == {"conv": 12, "fc1": 12, "fc2": 12}
    assert compiled["reloaded_same"] and compiled["lr"] == [0.05]
    assert shuffled["losses"][-1] < 0.2 * shuffled["losses"][0]
    assert shuffled["losses"] != compiled["losses"]  # a different order of batches
    _close({k: v for k, v in compiled.items() if k != "keys"},
           {k: v for k, v in got["unshuffled_eager"].items() if k != "keys"}, 1e-4)
    if HAVE_TORCH:
        want = run("torch", "training_script", ["unshuffled_eager"])["unshuffled_eager"]
        assert "error" not in want, want
        _close(got["unshuffled_eager"], want, 1e-4)


@_installed("transformers", "safetensors")
def test_transformers_models_match_pytorch():
    """GPT-2, BERT and Llama (tiny configs) train, generate, hook, save and load, and
    compile as PyTorch; hookgrad's run sees no real torch (nor torchvision), as on a
    machine with only hookgrad, so transformers finds torch through as_torch's metadata."""
    got = check("transformers_cases", ["gpt2_train_step", "bert_classify_backward",
                                       "llama_generate", "module_hooks", "save_and_reload",
                                       "compiled_training", "compiled_forward",
                                       "compiled_generate"],
                hide=("torch", "torchvision"))
    step = got["gpt2_train_step"]
    assert step["loss_after"] < step["loss"]
    assert len(got["llama_generate"]["tokens"][0]) == 6 + 5
    hooks = got["module_hooks"]
    assert len(hooks["attn_out"]) == 2 and len(hooks["mlp_grad_out"][0]) == 6
    assert hooks["attention"] == "sdpa"
    for model in ("gpt2", "llama"):
        reload = got["save_and_reload"][model]
        _close(reload["after"], reload["before"], 1e-6, model)
    losses = got["compiled_training"]
    assert losses["gpt2"][2] < losses["gpt2"][0] and losses["llama"][2] < losses["llama"][0]
